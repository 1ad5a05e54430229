"""Text encoders: `Encoder` (what a backend offers) and `get_encoder` (the one a name means,
as `Settings.encoder` names it: a sentence-transformers model, or `fake:<dim>` for tests)."""

from __future__ import annotations

from ..config import DEFAULT_ENCODER
from .base import Encoder

__all__ = ["Encoder", "get_encoder"]

_cache: dict[str, Encoder] = {}


def get_encoder(name: str = DEFAULT_ENCODER) -> Encoder:
    """The encoder of that name, loaded once per process."""
    if name not in _cache:
        if name.startswith("fake:"):
            from .fake import FakeEncoder

            _cache[name] = FakeEncoder.from_name(name)
        else:
            from .sentence import SentenceTransformerEncoder

            _cache[name] = SentenceTransformerEncoder(name)
    return _cache[name]
