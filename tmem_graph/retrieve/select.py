"""The cascade's choices as pure functions of the rankings its queries returned: the topic
prefilter, SceneCue, TrigRecall's gate, and the final fusion of the scene and item layers.

Nothing here touches the database, so every rule can be tested on hand-made rankings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..config import RetrievalSettings
from ..triggers import ITEM, credit
from .fuse import lanes, normalise, ranks_of, rrf, rrf_tail, score_fusion, strongest
from .results import LaneTurn, RecalledItem, RecalledScene, RecalledTurn

Scored = list[tuple[str, float]]


def cosine(score: float) -> float:
    """Neo4j reports cosine similarity mapped to [0, 1]; return the raw cosine in [-1, 1]."""
    return 2.0 * score - 1.0


def _ids(ranking: Scored) -> list[str]:
    return [key for key, _ in ranking]


def _add(via: dict[str, list[str]], key: str, channel: str) -> None:
    channels = via.setdefault(key, [])
    if channel not in channels:
        channels.append(channel)


@dataclass
class SceneCandidates:
    """What the final scene fusion sees: the pool's lexical and dense rankings, SceneCue's
    order and its channels (all (id, score), best first), and how each scene was reached."""

    bm25: Scored
    dense: Scored                     # every pool scene, cosine of its descriptive vector
    cue: Scored                       # SceneCue order over every scene its channels found
    cue_lists: dict[str, Scored]      # dialogue, scene_trigger (best view per scene), horizon (mean or best)
    via: dict[str, list[str]]
    turn: Scored = field(default_factory=list)   # pool scenes by their best turn (empty: channel off)

    @property
    def pool(self) -> list[str]:
        return _ids(self.dense)


@dataclass
class ItemCandidates:
    """What the final item fusion sees, as for scenes; `rows` holds each pool item's fields."""

    bm25: Scored
    dense: Scored
    trigger: Scored                   # TrigRecall order (gated), best view cosine
    via: dict[str, list[str]]
    rows: dict[str, dict] = field(default_factory=dict)

    @property
    def pool(self) -> list[str]:
        return _ids(self.dense)


def top_topics(bm25: Scored, dense: Scored, cfg: RetrievalSettings) -> list[str]:
    """The topic prefilter: RRF of the topics' BM25 and dense rankings, top k_topics."""
    return [t for t, _ in rrf({"bm25": _ids(bm25), "dense": _ids(dense)}, cfg.k0)[:cfg.k_topics]]


def best_view(views: list[dict]) -> Scored:
    """Hosts ranked by their best trigger view, with that view's score (views arrive best first)."""
    best: dict[str, float] = {}
    for v in views:
        best.setdefault(v["host_id"], v["score"])
    return list(best.items())


def scene_cue(cue_lists: dict[str, Scored], cfg: RetrievalSettings, via: dict[str, list[str]]) -> Scored:
    """SceneCue: the dialogue, Scene-trigger and Horizon rankings fused over every scene they
    found, by `cfg.cue_fusion` ("strongest": best standard score; "rrf": RRF with k0 = cue_k0).
    The top `cue_top` join the pool, credited in `via` with each channel that ranks them
    within `cue_top`, or, when only the fusion lifted them, their best."""
    lists = {name: _ids(r) for name, r in cue_lists.items()}
    cue = strongest(cue_lists) if cfg.cue_fusion == "strongest" else rrf(lists, cfg.cue_k0)
    for key, _ in cue[:cfg.cue_top]:
        ranks = ranks_of(key, lists)
        strong = [c for c, r in ranks.items() if r <= cfg.cue_top]
        for channel in strong or [min(ranks, key=ranks.get)]:
            _add(via, key, channel)
    return cue


def trig_recall(views: list[dict], cfg: RetrievalSettings, via: dict[str, list[str]]) -> Scored:
    """TrigRecall: the R best item triggers (each scored by its best view), gated at cosine τ;
    returns their items with the best view's cosine, best first, and records the views that
    passed in `via`."""
    best: dict[tuple[str, int], float] = {}
    passed: dict[tuple[str, int], list[str]] = {}
    for v in views:  # best first
        key, cos = (v["host_id"], v["position"]), cosine(v["score"])
        best.setdefault(key, cos)
        if cos >= cfg.tau:
            passed.setdefault(key, []).append(credit(ITEM, v["channel"]))
    ranking: dict[str, float] = {}
    for key in sorted(best, key=lambda k: -best[k])[:cfg.r_trigger_items]:
        for channel in passed.get(key, []):
            _add(via, key[0], channel)
            ranking.setdefault(key[0], best[key])
    return list(ranking.items())


def fuse_layer(lexical: Scored, dense: Scored, associative: Scored, k: int,
               cfg: RetrievalSettings, passages: Scored = (),
               lead: str = "descriptive", share: float | None = None) -> list[tuple[str, float, str | None]]:
    """The final fusion of one layer with the strategy `cfg.fusion` (see fuse.py): the pool is
    `dense` (every candidate has a cosine); `lexical` and `associative` rank parts of it.
    `passages` ranks candidates by their best part (scenes by their best turn): with "lanes" and
    "joint" it takes the place of `dense` in the descriptive order when it ranks anything, the candidates
    neither it nor `lexical` ranks following in `dense` order (docs/design-and-evidence.md); the
    other fusions ignore it. `lead` is the lane "lanes" gives the first place
    (scenes pass "associative" for a weak match, `cfg.associative_first`; items keep the
    descriptive lead); `share` the associative lane's share of the places ("lanes"; None:
    `cfg.associative_share`). Returns the top `k` as (id, score, lane), lane None unless the
    fusion is "lanes" or "joint" (which names the order that ranks it higher)."""
    pool = _ids(dense)
    lists = {"bm25": _ids(lexical), "dense": pool}
    if cfg.cue_in_fusion and associative:
        lists["cue"] = _ids(associative)
    if cfg.fusion == "rrf":
        return [(key, score, None) for key, score in rrf(lists, cfg.k0)[:k]]
    if cfg.fusion == "rrf_tail":
        return [(key, score, None) for key, score in rrf_tail(lists, pool, cfg.k0)[:k]]
    if cfg.fusion == "score":
        norm = {"bm25": normalise(lexical, floor=0.0), "dense": normalise(dense),
                "cue": normalise(associative) if "cue" in lists else {}}
        return [(key, score, None) for key, score in score_fusion(norm, pool)[:k]]
    # RRF of bm25 and the best turn (or the dense vector) is the descriptive order
    nearest = {"turn": _ids(passages)} if passages else {"dense": pool}
    descriptive = _ids(rrf({"bm25": lists["bm25"], **nearest}, cfg.k0))
    if passages:  # what neither list ranks follows in dense order, so the lane never runs short
        ranked = set(descriptive)
        descriptive += [key for key in pool if key not in ranked]
    if cfg.fusion == "joint":  # one order: RRF with a small k0 of the descriptive and the associative order
        orders = {"descriptive": descriptive, "associative": lists.get("cue", [])}
        places = {lane: {key: n for n, key in enumerate(order)} for lane, order in orders.items()}
        return [(key, score, min((lane for lane in places if key in places[lane]), key=lambda l: places[l][key]))
                for key, score in rrf(orders, cfg.joint_k0)[:k]]
    if cfg.fusion == "lanes":
        taken = {"descriptive": 0, "associative": 0}
        out = []
        score = 1.0 / cfg.k0
        share = cfg.associative_share if share is None else share
        for key, lane in lanes(descriptive, lists.get("cue", []), k, share, lead):
            taken[lane] += 1  # score 1/(k0 + n) for a lane's n-th place, never rising down the list (a
            score = min(score, 1.0 / (cfg.k0 + taken[lane]))   # lane that ran dry leaves the other its places)
            out.append((key, score, lane))
        return out
    raise ValueError(f"unknown fusion {cfg.fusion!r}")


def associative(c: SceneCandidates, cfg: RetrievalSettings) -> Scored:
    """The associative lane's order (`cfg.associative_order`): SceneCue's; the Horizon family's
    own; an RRF (k0 = `cue_k0`) of the Horizon family's order and SceneCue's
    (`horizon+scenecue`), and of those and the pool's scene-vector order
    (`horizon+scenecue+dense`); or the Horizon family's and the scene vector's scores fused as
    SceneCue fuses its channels (`strongest(horizon,dense)`: each scene by its best standard
    score). SceneCue's when the Horizon family is off."""
    if _scenecue_order(c, cfg.associative_order):
        return c.cue
    if cfg.associative_order == "horizon":
        return c.cue_lists["horizon"]
    if cfg.associative_order == "strongest(horizon,dense)":
        return strongest({"horizon": c.cue_lists["horizon"], "dense": c.dense})
    lists = {"horizon": _ids(c.cue_lists["horizon"]), "scenecue": _ids(c.cue)}
    if cfg.associative_order.endswith("+dense"):
        lists["dense"] = _ids(c.dense)
    return rrf(lists, cfg.cue_k0)


def fused_orders(c: SceneCandidates, cfg: RetrievalSettings) -> dict[str, Scored]:
    """The associative lists a recall ranks by that are fusions of other lists, under the names
    its ranks give them: "associative", the associative lane's list as the final fusion reads
    it (its order's first `cue_top` in the pool), when that order is not SceneCue's ("cue"); and
    "pointers", the list the associative pass takes its scenes from, when it is a fusion
    (`cue_from` an RRF or strongest order). A recall's trace lists them beside the lists they fuse."""
    out = {}
    if lane_list(c, cfg) == "associative":
        out["associative"] = associative_lane(c, cfg)
    if cfg.cue_scenes() and pointer_list(c, cfg) == "pointers":
        out["pointers"] = associative(c, replace(cfg, associative_order=cfg.cue_from))
    return out


def _scenecue_order(c: SceneCandidates, order: str) -> bool:
    """Whether the associative order `order` is SceneCue's own: named so, or any order once the
    Horizon family is off."""
    return order == "scenecue" or "horizon" not in c.cue_lists


def pointer_list(c: SceneCandidates, cfg: RetrievalSettings) -> str | None:
    """The name of the list a pointed scene's place is in: None when it is the Horizon family's
    own order (its place is its "horizon" rank), "cue" when it is SceneCue's, else "pointers"
    (an RRF or strongest order)."""
    if cfg.cue_from in c.cue_lists:
        return None
    return "cue" if _scenecue_order(c, cfg.cue_from) else "pointers"


def lane_list(c: SceneCandidates, cfg: RetrievalSettings) -> str:
    """The name of the associative lane's list in a scene's ranks: "cue" when it is SceneCue's
    (whose first `cue_top` are all in the pool, so its places are SceneCue's), else "associative"."""
    return "cue" if _scenecue_order(c, cfg.associative_order) else "associative"


def associative_lane(c: SceneCandidates, cfg: RetrievalSettings) -> Scored:
    """The associative lane's list as the final fusion reads it: its order's first `cue_top`
    that are in the pool."""
    pool = set(c.pool)
    return [(s, v) for s, v in associative(c, cfg)[:cfg.cue_top] if s in pool]


def select_scenes(c: SceneCandidates, cfg: RetrievalSettings) -> list[RecalledScene]:
    """The top k_scenes of the pool by the final fusion (the associative lane's share
    `cfg.scene_associative_share`, else `cfg.associative_share`), each with `via` and its ranks."""
    cue = associative_lane(c, cfg)
    lead = "associative" if cfg.associative_first else "descriptive"
    fused = fuse_layer(c.bm25, c.dense, cue, cfg.k_scenes, cfg, passages=c.turn, lead=lead,
                       share=cfg.scene_associative_share)
    rankings = {**{n: _ids(r) for n, r in c.cue_lists.items()},
                "bm25": _ids(c.bm25), "dense": _ids(c.dense), "turn": _ids(c.turn), lane_list(c, cfg): _ids(cue)}
    return [RecalledScene(id=s, title=None, time=None, score=score, via=c.via[s],
                          ranks=ranks_of(s, {n: r for n, r in rankings.items() if r}), turns=[], lane=lane)
            for s, score, lane in fused]


def select_cue(c: SceneCandidates, cfg: RetrievalSettings) -> list[RecalledScene]:
    """The first `cfg.cue_scenes()` scenes of the associative list (`cfg.cue_from`, one of the
    associative orders, `associative`), for the packer's
    associative pass (lane "cue"; `via` the cue channels that rank them within `cue_top`, else
    their best; turns are filled in by the caller), listed in the order a weak match's unpacked
    recall ranks scenes (`weak_associative_order`): the list that reaches furthest chooses them,
    the better ranking orders them. A scene the final fusion chose too is listed: the packer
    points to it only when its excerpt is not handed over already."""
    depth = cfg.cue_scenes()
    if not depth:   # no budget, or no share for pointers (a strong match by default)
        return []
    lists = {n: _ids(r) for n, r in c.cue_lists.items()}
    in_order = lambda name: associative(c, replace(cfg, associative_order=name))  # noqa: E731
    listing = in_order(cfg.weak_associative_order)
    source = listing if cfg.cue_from == cfg.weak_associative_order else in_order(cfg.cue_from)
    chosen = list(enumerate(source[:depth], 1))
    listed = {s: n for n, (s, _) in enumerate(listing)}
    chosen.sort(key=lambda pair: listed.get(pair[1][0], len(listed)))   # stable: unlisted ones keep their order
    named = pointer_list(c, cfg)   # its place in the list it came from, under that list's name in the trace
    out = []
    for place, (s, score) in chosen:
        ranks = ranks_of(s, lists)   # its place in the list it came from is among them (horizon) or added
        if named:
            ranks[named] = place
        channels = [n for n in lists if ranks.get(n, cfg.cue_top + 1) <= cfg.cue_top]
        out.append(RecalledScene(id=s, title=None, time=None, score=score,
                                 via=channels or [min(lists, key=lambda n: ranks.get(n, len(c.cue) + 1))],
                                 ranks=ranks, turns=[], lane="cue"))
    return out


def select_items(c: ItemCandidates, cfg: RetrievalSettings) -> list[RecalledItem]:
    """The top k_items of the item pool by the final fusion, each with `via` and its ranks."""
    if not c.dense:
        return []
    pool = set(c.pool)
    trigger = [(i, v) for i, v in c.trigger if i in pool]
    fused = fuse_layer(c.bm25, c.dense, trigger, cfg.k_items, cfg)
    rankings = {"bm25": _ids(c.bm25), "dense": _ids(c.dense), "trigger": _ids(trigger)}
    out = []
    for i, score, lane in fused:
        row = c.rows[i]
        out.append(RecalledItem(id=i, text=row["text"], kind=row["kind"], scene_ids=row["scene_ids"],
                                score=score, via=c.via[i],
                                ranks=ranks_of(i, {n: r for n, r in rankings.items() if r}),
                                time=row["time"], lane=lane, turn_ids=list(row.get("turn_ids") or [])))
    return out


def select_recent(bm25: Scored, dense: Scored, cfg: RetrievalSettings) -> list[RecalledTurn]:
    """The turns no scene holds yet that best match (channel `recent`): their BM25 and exact
    cosine rankings fused by RRF, at most `k_recent`; texts are filled in by the caller."""
    lists = {"bm25": _ids(bm25), "dense": _ids(dense)}
    return [RecalledTurn(key, "", "", None, score, ["recent"] + [c for c in lists if key in lists[c]],
                         ranks_of(key, lists)) for key, score in rrf(lists, cfg.k0)[:cfg.k_recent]]


def best_per_scene(turns: Scored, scenes: list[str]) -> Scored:
    """Scenes ranked by their best turn: `turns` (best first) with `scenes[n]` holding turn n."""
    best: dict[str, float] = {}
    for (_, score), scene in zip(turns, scenes, strict=True):
        best.setdefault(scene, score)
    return sorted(best.items(), key=lambda pair: (-pair[1], pair[0]))   # equal scores by scene id


def select_lane(bm25: Scored, dense: Scored, cfg: RetrievalSettings) -> list[LaneTurn]:
    """The turn lane: the turns some scene holds, their BM25 and passage-cosine rankings fused by
    RRF with k0 `lane_k0`, the cosine's terms weighted by `lane_dense_weight` (k0 60 and weight 1:
    as flat hybrid retrieval ranks them); texts and scenes are filled in by the caller."""
    lists = {"bm25": _ids(bm25), "dense": _ids(dense)}
    return [LaneTurn(key, "", "", None, 0, {}, score, [c for c in lists if key in lists[c]], ranks_of(key, lists))
            for key, score in rrf(lists, cfg.lane_k0, weights={"dense": cfg.lane_dense_weight})]
