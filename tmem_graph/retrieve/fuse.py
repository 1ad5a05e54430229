"""Fusion of ranked lists, as pure functions: rankings in, ranked (id, score) pairs out.

A ranking is a list of ids, best first; a scored ranking a list of (id, score) pairs, best
first. `pool` is every candidate of the layer (each list ranks a part of it).

Reciprocal rank fusion, RRF(d) = Σ_m w_m / (k0 + rank_m(d)), has a *presence penalty*: with
k0 = 60 a list's first and tenth entries earn almost the same (1/61 vs 1/70), so what decides
is whether a candidate is in a list at all. An associative target shares no word with its
query, so it has no BM25 rank, and every scene with some incidental lexical match collects a
term it lacks. The fusions below differ in how they treat that absence:

- `rrf`: plain RRF (the reference code's fusion, which then reranks with a cross-encoder);
- `rrf_tail`: RRF where a pool member a list does not rank counts at the pool's last rank;
- `score`: sum of per-list normalised scores, absent = 0 (a weak lexical match
  earns little, not a full term);
- `lanes`: a descriptive fusion and an associative ranking each keep a share of the budget.

SceneCue fuses its own channels (dialogue, Scene trigger, Horizon) with `rrf` (k0 = 30, the
reference code) or `strongest` (best standard score), which lets one strong channel decide.
"""

from __future__ import annotations

from itertools import chain
from typing import Iterable, Mapping, Sequence

Scored = Sequence[tuple[str, float]]


def _ordered(scores: Mapping[str, float], order: Iterable[str]) -> list[tuple[str, float]]:
    """`scores` best first, equal scores in `order` (which holds every scored id): a stable sort
    on the score alone keeps `order` among equals, and sorts in C."""
    ranked = sorted([key for key in order if key in scores], key=scores.__getitem__, reverse=True)
    return [(key, scores[key]) for key in ranked]


def _first_seen(*lists: Sequence[str]) -> dict[str, None]:
    """Every id of `lists`, in the order first seen."""
    return dict.fromkeys(chain.from_iterable(lists))


def rrf(rankings: Mapping[str, Sequence[str]], k0: int = 60,
        weights: Mapping[str, float] | None = None) -> list[tuple[str, float]]:
    """Fuse named rankings (best first) into one list of (id, score), best first.

    Ties keep the order in which ids were first seen across the rankings, so the result
    is deterministic. `weights` scales each list's terms (default 1).
    """
    scores: dict[str, float] = {}
    for name, ranking in rankings.items():
        w = 1.0 if weights is None else weights.get(name, 1.0)
        for rank, key in enumerate(ranking, start=1):
            scores[key] = scores.get(key, 0.0) + w / (k0 + rank)
    return _ordered(scores, _first_seen(*rankings.values()))


def rrf_tail(rankings: Mapping[str, Sequence[str]], pool: Sequence[str], k0: int = 60) -> list[tuple[str, float]]:
    """RRF over `pool` where a member missing from a list counts at rank len(pool) + 1 there."""
    tail = len(pool) + 1
    positions = {name: {key: n for n, key in enumerate(ranking, start=1)} for name, ranking in rankings.items()}
    scores = {}
    for key in pool:
        scores[key] = sum(1.0 / (k0 + ranks.get(key, tail)) for ranks in positions.values())
    return _ordered(scores, _first_seen(*rankings.values(), pool))


def normalise(scored: Scored, floor: float | None = None) -> dict[str, float]:
    """Scores mapped to [0, 1] within one list: (s - low) / (best - low), where `low` is
    `floor` (a list's natural zero, 0 for BM25) or else the list's worst score."""
    if not scored:
        return {}
    values = [s for _, s in scored]
    low = min(values) if floor is None else floor
    span = max(values) - low
    if span <= 0:
        return {key: 1.0 for key, _ in scored}
    return {key: max(0.0, (s - low) / span) for key, s in scored}


def standardise(scored: Scored) -> dict[str, float]:
    """Scores as standard scores within one list: (s - mean) / standard deviation (0 when
    the list's scores are all equal), so lists on different scales can be compared."""
    if not scored:
        return {}
    values = [s for _, s in scored]
    mean = sum(values) / len(values)
    sd = (sum([(v - mean) ** 2 for v in values]) / len(values)) ** 0.5
    if sd > 0:
        return {key: (s - mean) / sd for key, s in scored}
    return {key: 0.0 for key, _ in scored}


def strongest(lists: Mapping[str, Scored]) -> list[tuple[str, float]]:
    """Each candidate scored by its best standard score over the lists that hold it: the
    channel where it stands out most decides, and being absent from a list costs nothing."""
    best: dict[str, float] = {}
    for scored in lists.values():
        for key, z in standardise(scored).items():
            if key not in best or z > best[key]:
                best[key] = z
    return _ordered(best, best)   # `best` holds the ids in the order first seen


def score_fusion(lists: Mapping[str, Mapping[str, float]], pool: Sequence[str]) -> list[tuple[str, float]]:
    """Sum of normalised scores (`normalise`) over `pool`; a list that does not score a member
    adds 0 for it."""
    scores = {key: sum(scored.get(key, 0.0) for scored in lists.values()) for key in pool}
    return _ordered(scores, _first_seen(pool))


def lanes(descriptive: Sequence[str], associative: Sequence[str], k: int,
          associative_share: float, lead: str = "descriptive") -> list[tuple[str, str]]:
    """The first `k` ids of two rankings, each lane keeping its own order: the associative
    lane holds floor(k × share + ½) places but, under a share of 1, never all of them (with
    k = 1 the descriptive lane has the one), the descriptive lane the rest; a share of 1 gives
    the associative lane every place. The lanes alternate, `lead` first,
    until one has filled its places; a lane that runs dry leaves its places to the other.
    An id counts once, in the lane that reached it first. With `lead` "associative" the same
    ids are chosen and the one the associative ranking puts highest is listed first (in
    whichever lane it came). Returns (id, lane) pairs, lanes named "descriptive" and
    "associative"."""
    places = k if associative_share >= 1.0 else min(int(k * associative_share + 0.5), max(k - 1, 0))
    quota = {"associative": places}
    quota["descriptive"] = k - quota["associative"]
    queues = {"descriptive": list(descriptive), "associative": list(associative)}
    other = {"descriptive": "associative", "associative": "descriptive"}
    chosen: list[tuple[str, str]] = []
    seen: set[str] = set()

    def pop(lane: str) -> str | None:
        queue = queues[lane]
        while queue:
            key = queue.pop(0)
            if key not in seen:
                return key
        return None

    turn = "descriptive"
    while len(chosen) < k:
        lane = turn if quota[turn] > 0 else other[turn]
        key = pop(lane)
        if key is None:  # this lane ran dry: the other takes its places
            lane, key = other[lane], pop(other[lane])
            if key is None:
                break
            quota[lane] += quota[other[lane]]
            quota[other[lane]] = 0
        quota[lane] -= 1
        chosen.append((key, lane))
        seen.add(key)
        turn = other[turn]
    if lead == "descriptive" or not chosen:
        return chosen
    place = {key: n for n, key in enumerate(associative)}   # the chosen id the associative order ranks first
    first = min(range(len(chosen)), key=lambda n: (place.get(chosen[n][0], len(place)), n))
    return chosen[first:first + 1] + chosen[:first] + chosen[first + 1:]


def ranks_of(key: str, rankings: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """The 1-based rank of `key` in each ranking that contains it."""
    return {name: list(r).index(key) + 1 for name, r in rankings.items() if key in r}
