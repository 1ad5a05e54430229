"""What every text encoder offers. A backend is a subclass of `Encoder` in a module of its
own beside this one (`onnx.py`: the default, MiniLM on onnxruntime; `sentence.py`:
sentence-transformers models; `fake.py`: a deterministic encoder for unit tests); `tmem_graph.encode.get_encoder` maps a name to a loaded backend."""

from __future__ import annotations

from typing import Callable, Sequence


class Encoder:
    """A named text encoder producing unit-length vectors."""

    name: str
    dim: int

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        raise NotImplementedError

    def count_tokens(self, text: str) -> int:
        """How many tokens `text` is for this encoder (the evaluation's budget unit)."""
        raise NotImplementedError


def mean_pooled_by_length(tokenizer, texts: Sequence[str], batch_size: int,
                          hidden_states: Callable) -> list[list[float]]:
    """Unit vectors of `texts` in their order, as sentence-transformers pools them: each text
    tokenised by `tokenizer` (a `tokenizers.Tokenizer` that truncates and pads to the longest),
    batches of similar length (little time goes into padding), `hidden_states(ids, mask)` →
    [batch, tokens, dim] for each, then the mean over the attention mask and L2 normalisation."""
    import numpy as np

    encoded = tokenizer.encode_batch(list(texts))  # padded to the longest: cut per batch below
    lengths = [sum(e.attention_mask) for e in encoded]
    order = sorted(range(len(texts)), key=lambda n: -lengths[n])
    out: list[list[float] | None] = [None] * len(texts)
    for start in range(0, len(order), batch_size):
        chunk = order[start:start + batch_size]
        width = lengths[chunk[0]]
        ids = np.array([encoded[n].ids[:width] for n in chunk], dtype=np.int64)
        mask = np.array([encoded[n].attention_mask[:width] for n in chunk], dtype=np.int64)
        hidden = hidden_states(ids, mask)
        weights = mask[..., None].astype(hidden.dtype)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        for n, vector in zip(chunk, pooled.astype("float64").tolist()):
            out[n] = vector
    return out
