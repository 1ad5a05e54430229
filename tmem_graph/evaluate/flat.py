"""Flat retrieval over turns, the baselines: BM25, dense and their RRF hybrid, cut at an
evidence-token budget."""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Callable

from ..encode import Encoder
from ..retrieve.fuse import rrf

# Lucene's English stop words (the baseline of shared/docs/baselines.md used them, no stemming)
STOP = set("a an and are as at be but by for if in into is it no not of on or such that the their then "
           "there these they this to was will with".split())


def words(text: str) -> list[str]:
    return [w for w in re.findall(r"\w+", text.lower()) if w not in STOP]


class FlatIndex:
    """BM25 (k1 = 1.2, b = 0.75) and cosine rankings of one conversation's turns."""

    def __init__(self, ids: list[str], texts: list[str], encoder: Encoder):
        self.ids, self.texts = ids, texts
        self.docs = [Counter(words(t)) for t in texts]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / max(1, len(self.lengths))
        df = Counter(w for d in self.docs for w in d)
        n = len(self.docs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}
        self.vectors = encoder.encode(texts)
        self.encoder = encoder

    def bm25(self, query: str) -> list[str]:
        q = set(words(query))
        scores = []
        for n, doc in enumerate(self.docs):
            s = 0.0
            for w in q & doc.keys():
                tf = doc[w]
                s += self.idf[w] * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * self.lengths[n] / self.avg))
            if s > 0:
                scores.append((s, n))
        return [self.ids[n] for s, n in sorted(scores, key=lambda x: (-x[0], x[1]))]

    def dense(self, query: str, vector: list[float] | None = None) -> list[str]:
        v = vector or self.encoder.encode([query])[0]
        scores = [(sum(a * b for a, b in zip(v, d)), n) for n, d in enumerate(self.vectors)]
        return [self.ids[n] for s, n in sorted(scores, key=lambda x: (-x[0], x[1]))]

    def rankings(self, query: str, vector: list[float] | None = None) -> dict[str, list[str]]:
        bm25, dense = self.bm25(query), self.dense(query, vector)
        return {"bm25": bm25, "dense": dense,
                "hybrid": [i for i, _ in rrf({"bm25": bm25, "dense": dense}, 60)]}


def cut_at_budget(ranking: list[str], cost: Callable[[str], int], budget: int) -> list[str]:
    """The longest prefix of `ranking` whose total cost stays within `budget` (at least one)."""
    out, spent = [], 0
    for key in ranking:
        c = cost(key)
        if out and spent + c > budget:
            break
        out.append(key)
        spent += c
    return out
