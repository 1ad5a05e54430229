"""A deterministic encoder for unit tests: no model, no download, the same vector for the
same text on every machine.

A text's vector is the normalised sum of one pseudo-random unit vector per lower-cased word
(seeded by the word's SHA-256), so texts that share words are close and texts that share
none are nearly orthogonal: enough to test code that ranks by cosine, never a product
default. `get_encoder("fake:64")` gives a 64-dimensional one.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from functools import lru_cache
from typing import Sequence

from ..errors import ConfigError
from .base import Encoder

_WORD = re.compile(r"\w+")


@lru_cache(maxsize=1024)   # a word's vector is drawn once: a benchmark's recalls encode over a small vocabulary
def _unit(word: str, dim: int) -> tuple[float, ...]:
    """The pseudo-random unit vector of one word (seeded by its SHA-256)."""
    rng = random.Random(hashlib.sha256(word.encode()).digest())
    v = [rng.gauss(0.0, 1.0) for _ in range(dim)]
    norm = math.sqrt(sum(x * x for x in v))
    return tuple(x / norm for x in v)


class FakeEncoder(Encoder):
    def __init__(self, dim: int = 64):
        if dim <= 0:
            raise ConfigError(f"fake encoder: the dimension must be positive, not {dim}")
        self.name = f"fake:{dim}"
        self.dim = dim

    @classmethod
    def from_name(cls, name: str) -> "FakeEncoder":
        raw = name.partition(":")[2] or "64"
        if not raw.isdigit():
            raise ConfigError(f"encoder {name!r}: the fake encoder is named fake:<dimension>, e.g. fake:64")
        return cls(int(raw))

    def _word(self, word: str) -> tuple[float, ...]:
        return _unit(word, self.dim)

    def encode(self, texts: Sequence[str], batch_size: int = 64) -> list[list[float]]:
        out = []
        for text in texts:
            total = [0.0] * self.dim
            for word in _WORD.findall(text.lower()):
                total = [a + b for a, b in zip(total, self._word(word))]
            norm = math.sqrt(sum(x * x for x in total))
            out.append([x / norm for x in total] if norm > 0 else [1.0] + [0.0] * (self.dim - 1))
        return out

    def count_tokens(self, text: str) -> int:
        return len(_WORD.findall(text))
