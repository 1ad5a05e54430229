"""What every text encoder offers. A backend is a subclass of `Encoder` in a module of its
own beside this one (`onnx.py`: the default, MiniLM on onnxruntime; `sentence.py`:
sentence-transformers models; `fake.py`: a deterministic encoder for unit tests); `tmem_graph.encode.get_encoder` maps a name to a loaded backend."""

from __future__ import annotations

from typing import Sequence


class Encoder:
    """A named text encoder producing unit-length vectors."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is for this encoder (the evaluation's budget unit)."""
        raise NotImplementedError
