"""Reciprocal rank fusion: RRF(d) = Σ_m 1 / (k0 + rank_m(d)), ranks starting at 1."""

from __future__ import annotations

from typing import Mapping, Sequence


def rrf(rankings: Mapping[str, Sequence[str]], k0: int = 60) -> list[tuple[str, float]]:
    """Fuse named rankings (best first) into one list of (id, score), best first.

    Ties keep the order in which ids were first seen across the rankings, so the result
    is deterministic.
    """
    scores: dict[str, float] = {}
    for ranking in rankings.values():
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k0 + rank)
    order = {key: n for n, key in enumerate(scores)}
    return sorted(scores.items(), key=lambda kv: (-kv[1], order[kv[0]]))


def ranks_of(key: str, rankings: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """The 1-based rank of `key` in each ranking that contains it."""
    return {name: list(r).index(key) + 1 for name, r in rankings.items() if key in r}
