"""Loads the named `.cypher` files; one query per file, parameters only."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

_PACKAGED = Path(__file__).parents[1] / "cypher"  # inside an installed wheel: tmem_graph/cypher
_SOURCE = Path(__file__).parents[2] / "cypher"  # in a source checkout or editable install


def cypher_root() -> Path:
    """The folder holding the `.cypher` files."""
    return _PACKAGED if _PACKAGED.is_dir() else _SOURCE


@lru_cache(maxsize=None)
def query(name: str) -> str:
    """The text of `cypher/<name>.cypher`, e.g. `query("store/turns_merge")`."""
    path = cypher_root() / f"{name}.cypher"
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise KeyError(f"no Cypher query named {name!r} (looked for {path})") from None


def names(folder: str) -> list[str]:
    """Names of every query under a folder, in file-name order (migrations rely on it)."""
    root = cypher_root()
    return [str(p.relative_to(root).with_suffix("")) for p in sorted((root / folder).glob("*.cypher"))]


READ, WRITE = "READ", "WRITE"   # neo4j.READ_ACCESS, neo4j.WRITE_ACCESS
# a clause that writes (Cypher keywords are case-insensitive); index and constraint commands too
_WRITES = re.compile(r"\b(CREATE|MERGE|SET|DELETE|REMOVE|DROP|FOREACH|LOAD\s+CSV)\b", re.IGNORECASE)
_COMMENT = re.compile(r"//[^\n]*")
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def mode_of(text: str) -> str:
    """WRITE when Cypher `text`, without comments and string literals, has a writing clause."""
    return WRITE if _WRITES.search(_STRING.sub("''", _COMMENT.sub("", text))) else READ


@lru_cache(maxsize=None)
def access_mode(name: str) -> str:
    """READ or WRITE: how the named query's session is opened (a cluster routes a READ session
    to any member, a WRITE one to the leader)."""
    return mode_of(query(name))
