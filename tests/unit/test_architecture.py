"""The package's layering rules (docs/architecture.md), checked on the source's imports.

Each rule reads every module of `tmem_graph` with `ast`, so an import added anywhere, at the
top of a file or inside a function, breaks the rule's test.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2] / "tmem_graph"


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path, modules_only: bool = False) -> set[str]:
    """Absolute names of every module `path` imports (relative imports resolved); with
    `modules_only`, the modules of `from M import n` without the imported names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module_name(path).split(".")
    if path.name != "__init__.py":
        package = package[:-1]
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            found.add(module)
            if not modules_only:
                found |= {f"{module}.{alias.name}" for alias in node.names}  # `from . import api`
    return found


MODULES = {_module_name(p): p for p in sorted(ROOT.rglob("*.py"))}
IMPORTS = {name: _imports(path) for name, path in MODULES.items()}


def _importers(target: str) -> set[str]:
    return {m for m, names in IMPORTS.items() if any(n == target or n.startswith(target + ".") for n in names)}


def _inside(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_the_reader_sees_relative_and_function_level_imports():
    # the rules below are only as good as this reader
    assert "neo4j" in IMPORTS["tmem_graph.store.graph"]
    assert "tmem_graph.store.lease" in IMPORTS["tmem_graph.store.graph"]      # from .lease import …
    assert "tmem_graph.viz" in IMPORTS["tmem_graph.cli.memory"]               # inside a function
    assert "tmem_graph.local.neo4j" in IMPORTS["tmem_graph.cli.db"]


def test_every_import_inside_the_package_names_a_module_that_exists():
    # a function-level import of a moved module fails only when that function runs
    missing = {f"{m}: {n}" for m, path in MODULES.items() for n in _imports(path, modules_only=True)
               if n.startswith("tmem_graph") and n not in MODULES}
    assert missing == set()


def test_only_the_store_imports_neo4j():
    assert {m for m in _importers("neo4j") if not _inside(m, "tmem_graph.store")} == set()


def test_only_the_llm_client_imports_openai():
    assert _importers("openai") == {"tmem_graph.llm.client"}


def test_only_the_cli_and_local_itself_import_local():
    outside = {m for m in _importers("tmem_graph.local") if not _inside(m, "tmem_graph.local", "tmem_graph.cli")}
    assert outside == set()


def test_the_core_never_imports_the_cli():
    assert {m for m in _importers("tmem_graph.cli") if not _inside(m, "tmem_graph.cli")} == set()


def test_only_config_and_local_read_the_environment():
    readers = set()
    for name, path in MODULES.items():
        if name == "tmem_graph.config" or _inside(name, "tmem_graph.local"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in ("environ", "getenv", "putenv", "unsetenv"):
                readers.add(name)
    assert readers == set()


@pytest.mark.parametrize("module", ["tmem_graph.retrieve.fuse", "tmem_graph.retrieve.select",
                                    "tmem_graph.retrieve.presets", "tmem_graph.triggers"])
def test_fusion_and_the_registries_are_pure(module):
    # no database, no encoder, no LLM, no files: rankings and data in, rankings and data out
    heavy = ("tmem_graph.store", "tmem_graph.encode", "tmem_graph.llm", "tmem_graph.api", "neo4j", "openai")
    assert {n for n in IMPORTS[module] if any(n == h or n.startswith(h + ".") for h in heavy)} == set()


def test_no_import_cycles_among_the_modules():
    graph = {m: {n for n in names if n in MODULES} - {m} for m, names in IMPORTS.items()}
    # a package's __init__ re-exporting its own modules is not a cycle of the layers
    for m in graph:
        graph[m] = {n for n in graph[m] if not (MODULES[n].name == "__init__.py" and _inside(m, n))}
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError(" -> ".join(trail[trail.index(nxt):] + [node, nxt]) if nxt in trail
                                     else f"{node} -> {nxt}")
            if nxt not in state:
                visit(nxt, trail + [node])
        state[node] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m, [])


def _layer(module: str) -> str:
    """A module's layer: a top-level module, a package, or one of retrieve's modules."""
    parts = module.split(".")
    if len(parts) == 1:
        return "tmem_graph"
    if parts[1] == "retrieve" and len(parts) > 2:
        return f"retrieve.{parts[2]}"
    if parts[1:3] == ["llm", "prompts"]:
        return "llm.prompts"
    return parts[1]


CORE = {"config", "errors", "triggers", "textio", "words", "model", "format"}
# each layer and the other layers it may import (docs/architecture.md, "What each layer may import")
ALLOWED = {
    "errors": set(), "triggers": set(), "config": {"errors"}, "textio": {"errors"}, "words": set(),
    "model": {"triggers"}, "format": {"errors", "model", "textio"},
    "store": {"config", "errors"},
    "encode": {"config", "errors"}, "llm": {"config", "errors"}, "llm.prompts": set(),
    "retrieve": set(), "retrieve.fuse": set(), "retrieve.lexical": set(), "retrieve.questions": set(),
    "retrieve.results": {"triggers"},
    "retrieve.evidence": {"retrieve.results", "words"}, "retrieve.presets": {"retrieve.results", "triggers"},
    "retrieve.pack": {"retrieve.evidence", "retrieve.results", "words"},
    "retrieve.filters": {"config", "errors", "textio", "retrieve.results"},
    "retrieve.select": {"config", "retrieve.fuse", "retrieve.results", "triggers"},
    "retrieve.cascade": {"config", "errors", "store", "triggers", "retrieve.lexical", "retrieve.questions",
                         "retrieve.results", "retrieve.select"},
    "transfer": CORE | {"encode", "store", "retrieve.lexical"},   # an object's BM25 statistics, written with it
    "objects": CORE | {"store"},
    "edits": CORE | {"encode", "objects", "store", "transfer", "retrieve.lexical"},
    "viz": CORE | {"retrieve.results"},
    "construct": CORE | {"edits", "encode", "llm", "llm.prompts", "store", "transfer"},
    "answering": {"words", "llm", "llm.prompts", "retrieve.evidence", "retrieve.results"},
    "api": CORE | {"answering", "construct", "edits", "encode", "llm", "llm.prompts", "objects", "store", "transfer",
                   "retrieve.cascade",
                   "retrieve.evidence", "retrieve.filters", "retrieve.pack", "retrieve.results"},
    "evaluate": CORE | {"answering", "api", "construct", "encode", "llm", "llm.prompts", "retrieve.evidence",
                        "retrieve.fuse", "retrieve.presets", "retrieve.results"},
    "local": {"config", "errors", "llm", "store"},
    "serve": CORE | {"api", "construct", "encode", "llm", "objects", "store"},
    "tmem_graph": {"api", "config", "errors"},
}


def test_each_layer_imports_only_the_layers_below_it():
    wrong = set()
    for module, names in IMPORTS.items():
        layer = _layer(module)
        if layer == "cli":
            continue  # a front end may use every layer
        for name in names:
            if name in MODULES and _layer(name) != layer and _layer(name) not in ALLOWED[layer]:
                wrong.add(f"{module} imports {name}")
    assert wrong == set()


def test_every_layer_has_a_rule():
    assert {_layer(m) for m in MODULES} - {"cli"} - set(ALLOWED) == set()


def test_the_tests_import_nothing_from_the_benchmarks():
    tests = Path(__file__).resolve().parents[1]
    users = {str(p.relative_to(tests)) for p in tests.rglob("*.py")
             if any(n == "benchmarks" or n.startswith("benchmarks.") for n in _imports(p))}
    assert users == set()
