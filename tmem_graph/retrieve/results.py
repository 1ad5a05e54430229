"""Typed results of a recall, with `via` and per-channel ranks for every object."""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from ..triggers import HORIZON, ITEM, SCENE

# the components `without` can switch off; the trigger families' names come from their registry
ABLATIONS = ("scene_layer", "item_channel", ITEM.ablation, "persona", "topic_filter",
             SCENE.ablation, HORIZON.ablation)
# every component `without` accepts: the paper's ablations, then the live path's `recent`
# channel (the turns no scene holds yet) and the `turns` channel (scenes ranked by their best
# turn and, with a token budget, the turn lane of the packer), which are not the paper's
COMPONENTS = ABLATIONS + ("recent", "turns")


@dataclass
class RecalledScene:
    id: str
    title: str | None
    time: str | None
    score: float
    via: list[str]
    ranks: dict[str, int]
    turns: list[dict]
    summary: str | None = None
    narrative: str | None = None
    lane: str | None = None   # "descriptive" or "associative" with the lanes fusion; packed, "turns": opened by
                              # the turn lane, "cue": pointed to by the associative pass (its best turns alone)
    excerpt: bool = False     # packed to a token budget: `turns` holds only the turns handed over


@dataclass
class RecalledItem:
    id: str
    text: str
    kind: str
    scene_ids: list[str]
    score: float
    via: list[str]
    ranks: dict[str, int]
    time: str | None = None
    lane: str | None = None
    turn_ids: list[str] = field(default_factory=list)   # the turns it was distilled from ([]: unknown)


@dataclass
class RecalledTurn:
    """A turn that no scene holds yet (added, its scene not built): channel `recent`."""
    id: str
    speaker: str
    text: str
    time: str | None
    score: float
    via: list[str]
    ranks: dict[str, int]
    seq: int = 0        # its place in the conversation (the evidence lists them in that order)


@dataclass
class LaneTurn:
    """A turn of the turn lane (packed recalls only): a turn some scene holds, ranked by its own
    text (BM25 and the cosine of its passage, fused); the packer hands it over inside its scene's
    excerpt (retrieve/pack.py)."""
    id: str
    speaker: str
    text: str
    time: str | None
    n: int                      # its place in its scene
    scene: dict                 # {id, title, time} of the scene that holds it
    score: float
    via: list[str]              # "bm25", "dense": the lane's rankings that hold it
    ranks: dict[str, int]


@dataclass
class Recall:
    memory_id: str
    query: str
    scenes: list[RecalledScene] = field(default_factory=list)
    items: list[RecalledItem] = field(default_factory=list)
    persona: list[dict] = field(default_factory=list)
    recent: list[RecalledTurn] = field(default_factory=list)
    timings_ms: dict[str, float] = field(default_factory=dict)
    trace: dict | None = field(default=None, repr=False)  # each layer's candidates (Cascade.recall trace=True)
    attempts: int = 1   # passes of the cascade: more than one when a write landed during the recall
    # each recalled scene turn's cosine with the query (turns stored without an embedding are
    # absent): what the packer ranks a scene's turns by; not part of the JSON
    turn_scores: dict[str, float] = field(default_factory=dict, repr=False, compare=False)
    budget_tokens: int | None = None   # the evidence budget it was packed to (pack.py), if any
    # the turn lane, best first (asked only with a token budget): what the packer hands over
    # once the scenes and items have had their share; not part of the JSON (packed, the lane's
    # turns are in their scenes' excerpts)
    lane: list[LaneTurn] = field(default_factory=list, repr=False, compare=False)
    # SceneCue's scenes in its order, with their turns (asked only with a token budget and a
    # `cue_share`): what the packer's associative pass opens; not part of the JSON (packed, the
    # scenes it opened are among `scenes`)
    cue: list[RecalledScene] = field(default_factory=list, repr=False, compare=False)
    # the scenes the recall without a budget hands over, in its order, from the same candidates
    # (asked only with a token budget): a packed recall lists them first; not part of the JSON
    ranked: list[str] = field(default_factory=list, repr=False, compare=False)
    # the score of the turn nearest the query (passage cosine, Neo4j's [0, 1] scale; None without
    # the turn channel) and the share of the query's word weight the nearest turn in words holds
    # (`lexical.Bm25.held`; None for a query without words, e.g. stop words alone): under
    # `weak_match` and `weak_words` a recall is a weak match, split
    # for association (config.py); in the JSON only with `trace`
    match: float | None = field(default=None, repr=False, compare=False)
    words: float | None = field(default=None, repr=False, compare=False)
    weak: bool = field(default=False, repr=False, compare=False)   # a weak match (`RetrievalSettings.weak`)
    filter: dict | None = None   # the recall filter applied (retrieve/filters.py): in the JSON when set
    # the version of the memory the recall read (not part of the JSON)
    version: str | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict:
        """The `tmem recall --json` object of shared/spec/cli.md (plus `ranks`, `summary`, an
        item's `turn_ids`, and `recent`: the turns no scene holds yet that match, best first);
        with `trace` when the recall was traced (`tmem recall --json --trace`)."""
        out = {
            "memory_id": self.memory_id,
            "query": self.query,
            "scenes": [as_dict(s) for s in self.scenes],
            "items": [as_dict(i) for i in self.items],
            "recent": [as_dict(t) for t in self.recent],
            "persona": list(self.persona),
            "timings_ms": {k: round(v, 2) for k, v in self.timings_ms.items()},
        }
        if self.filter is not None:
            out["filter"] = dict(self.filter)
        if self.trace is not None:
            out["trace"] = {**trace_json(self.trace, self.lane), "match": self.match, "words": self.words,
                            "weak": self.weak}
        return out


def as_dict(result) -> dict:
    """`dataclasses.asdict` of a recalled scene, item or turn: the same dict, made without its
    deep copy of every string and number (0.08 ms instead of 0.7 for 5 scenes and 15 items)."""
    names = _FIELDS.get(type(result))
    if names is None:
        names = _FIELDS[type(result)] = tuple(f.name for f in fields(result))
    return {name: _copied(getattr(result, name)) for name in names}


_FIELDS: dict[type, tuple[str, ...]] = {}


def _copied(value):
    """Lists and dicts copied all the way down (as `asdict` does); anything else as it is."""
    if type(value) is list:
        return [_copied(v) for v in value]
    if type(value) is dict:
        return {k: _copied(v) for k, v in value.items()}
    return value


def _listed(scored) -> list[dict]:
    """A ranked list as the final fusion saw it: each entry's id, score and 1-based position."""
    return [{"id": key, "score": round(float(score), 6), "position": n} for n, (key, score) in enumerate(scored, 1)]


def trace_json(trace: dict, lane: list[LaneTurn]) -> dict:
    """Every list the final fusions saw, whole, with its scores (`position` is the place in that
    list; a result's `ranks` are these positions), the fused associative lists a recall ranked by
    ("associative", "pointers": `select.fused_orders`), the candidate pools, how each candidate
    was reached (`via`), and the turn lane (packed recalls only)."""
    out: dict = {}
    scenes = trace.get("scenes")
    if scenes is not None:
        out["scenes"] = {"pool": list(scenes.pool), "via": {k: list(v) for k, v in scenes.via.items()},
                         "lists": {"bm25": _listed(scenes.bm25), "dense": _listed(scenes.dense),
                                   "cue": _listed(scenes.cue), "turn": _listed(scenes.turn),
                                   **{name: _listed(ranked) for name, ranked in scenes.cue_lists.items()},
                                   **{name: _listed(ranked) for name, ranked in trace.get("scene_orders", {}).items()}}}
    items = trace.get("items")
    if items is not None:
        out["items"] = {"pool": list(items.pool), "via": {k: list(v) for k, v in items.via.items()},
                        "lists": {"bm25": _listed(items.bm25), "dense": _listed(items.dense),
                                  "trigger": _listed(items.trigger)}}
    out["lane"] = [{"id": t.id, "scene_id": t.scene.get("id"), "score": round(t.score, 6), "via": list(t.via),
                    "ranks": dict(t.ranks)} for t in lane]
    return out
