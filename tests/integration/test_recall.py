"""The retrieval cascade on a real Neo4j with the real encoder.

The test memory is the hand-written team-dinner memory (ids prefixed "td-") grafted onto a
synthetic memory of 40 scenes and 200 items that share none of its vocabulary. Some queries
share no content word with their targets and reach them only through Bridge or Horizon
triggers; switching the family off must lose them.
"""

import copy
from dataclasses import replace

import pytest

from tests.fixtures.synthetic import graft, synthetic_memory
from tests.conftest import load_fixture
from tmem_graph import api
from tmem_graph.errors import MemoryNotFound, TmemError
from tmem_graph.config import HORIZON_MEAN_DEPTH, RetrievalSettings
from tmem_graph.retrieve import cascade
from tmem_graph.retrieve.cascade import DAY_SCENES, Cascade, halves
from tmem_graph.retrieve.evidence import CUE_HEADING, day
from tmem_graph.retrieve.lexical import query_terms
from tmem_graph.retrieve.questions import named_days
from tmem_graph.retrieve.results import ABLATIONS
from tmem_graph.retrieve.select import associative, associative_lane

HORIZON_QUERY = "Travelling for two weeks soon, who could mind things at home meanwhile?"  # -> td-s4 (the dog)
BRIDGE_QUERY = "I am going away for ten days next month, what should I arrange before leaving?"  # -> td-i6
DESCRIPTIVE_QUERY = "When did Bob adopt the greyhound Biscuit?"  # -> td-s4, td-i6


@pytest.fixture(scope="module")
def memory(store, encoder):
    doc = graft(synthetic_memory("test-recall", n_items=200, n_scenes=40), load_fixture(), "td-")
    memory, _ = api.import_memory(doc, store=store, encoder=encoder, replace=True)
    yield memory
    memory.drop()


def scene_ids(result):
    return [s.id for s in result.scenes]


def item_ids(result):
    return [i.id for i in result.items]


def content_words(text):
    stop = {"i", "a", "the", "for", "to", "at", "who", "can", "what", "should", "am", "will", "be",
            "before", "next", "did", "when", "and", "of", "in", "his", "her", "an"}
    return {w.strip("?,.!'").lower() for w in text.split()} - stop


def test_horizon_reaches_a_scene_the_query_shares_no_word_with(memory):
    target = memory.export()["scenes"]
    s4 = next(s for s in target if s["id"] == "td-s4")
    dialogue = " ".join(t["text"] for t in memory.export()["turns"] if t["id"] in s4["turn_ids"])
    assert not content_words(HORIZON_QUERY) & content_words(dialogue + " " + s4["title"])
    full = memory.recall(HORIZON_QUERY)
    assert "td-s4" in scene_ids(full)
    hit = next(s for s in full.scenes if s.id == "td-s4")
    assert "horizon" in hit.via and "bm25" not in hit.ranks and hit.lane == "associative"
    assert "td-s4" not in scene_ids(memory.recall(HORIZON_QUERY, without=["horizon"]))


def test_a_scene_s_horizon_score_is_the_mean_of_all_its_views(memory, encoder):
    """The Horizon channel scores each scene by the mean cosine of all the scene's Horizon views
    (`horizon_views` "mean", the default), "best" by its best view; checked against the views'
    embeddings read back. A ranking too shallow for every scene of the memory (its cap, here a
    small `candidates`) lists the scenes with the best means (store/scene_horizon: one search)."""
    vector = encoder.encode([HORIZON_QUERY])[0]
    with memory.store.session("READ") as session:
        rows = session.run("MATCH (v:Trigger {memory_id: $m}) WHERE v.family = 'horizon' "
                           "RETURN v.host_id AS host, v.embedding AS e", m=memory.pid).data()
    views: dict[str, list[float]] = {}
    for row in rows:
        cos = sum(a * b for a, b in zip(row["e"], vector)) / (
            sum(a * a for a in row["e"]) ** 0.5 * sum(b * b for b in vector) ** 0.5)
        views.setdefault(row["host"], []).append((1.0 + cos) / 2.0)   # Neo4j's [0, 1] scale
    assert any(len(v) > 1 for v in views.values())   # the two rules differ only with several views
    lists = {}
    for rule, expect in (("mean", lambda v: sum(v) / len(v)), ("best", max)):
        cascade = Cascade(memory.store, RetrievalSettings(horizon_views=rule))
        ranked = cascade.recall(memory.pid, HORIZON_QUERY, vector, trace=True).trace["scenes"].cue_lists["horizon"]
        assert ranked and [s for _, s in ranked] == sorted((s for _, s in ranked), reverse=True)
        for host, score in ranked:
            assert score == pytest.approx(expect(views[host]), abs=1e-5), (rule, host)
        lists[rule] = ranked
    assert [h for h, _ in lists["mean"]] != [h for h, _ in lists["best"]]
    shallow = Cascade(memory.store, RetrievalSettings(candidates=1))   # the HORIZON_MEAN_DEPTH best scenes: not all
    ranked = shallow.recall(memory.pid, HORIZON_QUERY, vector, trace=True).trace["scenes"].cue_lists["horizon"]
    means = sorted(((sum(v) / len(v), host) for host, v in views.items()), reverse=True)
    assert len(ranked) == HORIZON_MEAN_DEPTH < len(views)
    for (host, score), (mean, _) in zip(ranked, means):   # the best means, in order
        assert score == pytest.approx(sum(views[host]) / len(views[host]), abs=1e-5) == pytest.approx(mean, abs=1e-5)
    assert {h for h, _ in ranked} == {host for _, host in means[:HORIZON_MEAN_DEPTH]}


def test_the_fusion_before_lanes_loses_it_to_the_presence_penalty(memory, settings):
    """Horizon ranks td-s4 first, yet plain RRF of BM25, dense and SceneCue drops it: scenes
    present in more lists outvote it (docs/design-and-evidence.md)."""
    legacy = memory.recall(HORIZON_QUERY, settings=settings.retrieval.legacy())
    assert "td-s4" not in scene_ids(legacy)
    cue = memory.recall(HORIZON_QUERY, settings=settings.with_retrieval(k_scenes=40).retrieval)
    assert next(s for s in cue.scenes if s.id == "td-s4").ranks["horizon"] == 1


def test_bridge_reaches_an_item_the_query_shares_no_word_with(memory):
    i6 = next(i for i in memory.export()["items"] if i["id"] == "td-i6")
    assert not content_words(BRIDGE_QUERY) & content_words(i6["text"])
    full = memory.recall(BRIDGE_QUERY)
    assert "td-i6" in item_ids(full)
    assert {"bridge", "joint"} & set(next(i for i in full.items if i.id == "td-i6").via)
    # without the item triggers nothing credits a trigger view (td-i6 may still come back
    # through its scene, which Horizon reaches, at a rank the encoder's last digits decide)
    off = memory.recall(BRIDGE_QUERY, without=["entity_bridge"])
    assert all(not {"entity", "bridge", "joint"} & set(i.via) for i in off.items)


def test_descriptive_queries_work_with_every_trigger_off(memory):
    result = memory.recall(DESCRIPTIVE_QUERY, without=["entity_bridge", "scene_trigger", "horizon"])
    assert scene_ids(result)[0] == "td-s4"
    assert item_ids(result)[0] == "td-i6"
    assert all(set(s.via) <= {"topic", "dialogue"} for s in result.scenes)
    assert all(set(i.via) <= {"scene"} for i in result.items)
    full = memory.recall(DESCRIPTIVE_QUERY)
    assert scene_ids(full)[0] == "td-s4" and item_ids(full)[0] == "td-i6"


def test_budgets_are_respected(memory, settings):
    default = memory.recall("Bob and his running plans", trace=True)
    pool = len(default.trace["items"].pool)   # the chosen scenes' items and TrigRecall's
    assert len(default.scenes) == 5 and len(default.items) == min(15, pool) and pool > 3
    small = memory.recall("Bob and his running plans", settings=settings.with_retrieval(k_scenes=2, k_items=3).retrieval)
    assert len(small.scenes) == 2 and len(small.items) == 3
    assert scene_ids(small) == scene_ids(default)[:2]  # same pool: a smaller budget takes the first places
    narrow = memory.recall("Bob and his running plans",
                           settings=settings.with_retrieval(k_scenes=2, k_items=3, k_topics=1).retrieval)
    assert len(narrow.scenes) == 2 and len(narrow.items) == 3
    none = memory.recall("Bob", settings=settings.with_retrieval(k_scenes=0, k_items=0).retrieval)
    assert none.scenes == [] and none.items == []


@pytest.mark.parametrize("query", [HORIZON_QUERY, BRIDGE_QUERY, DESCRIPTIVE_QUERY,
                                   "Can you suggest a good sushi place for our group outing?"])
def test_via_is_truthful(memory, encoder, settings, query):
    doc = memory.export()
    scenes = {s["id"]: s for s in doc["scenes"]}
    items = {i["id"]: i for i in doc["items"]}
    topic_scenes = {sid for t in doc["topics"] for sid in t["scene_ids"]}
    result = memory.recall(query)
    returned = set(scene_ids(result))
    qv = encoder.encode([query])[0]
    cos = lambda text: sum(a * b for a, b in zip(qv, encoder.encode([text])[0]))  # noqa: E731
    for s in result.scenes:
        assert s.via, s.id
        if "topic" in s.via:
            assert s.id in topic_scenes
        if "horizon" in s.via:
            assert scenes[s.id].get("triggers", {}).get("horizon")
        if "scene_trigger" in s.via:
            assert scenes[s.id].get("triggers", {}).get("scene")
        assert [t["id"] for t in s.turns] == scenes[s.id]["turn_ids"]
    tau = settings.retrieval.tau
    for i in result.items:
        assert i.via, i.id
        assert i.scene_ids == items[i.id]["scene_ids"]
        if "scene" in i.via:
            assert set(i.scene_ids) & returned
        for channel, field in (("entity", "concept"), ("bridge", "bridge")):
            if channel in i.via:
                assert max(cos(t[field]) for t in items[i.id]["triggers"] if t.get(field)) >= tau - 1e-3
    assert [s.score for s in result.scenes] == sorted((s.score for s in result.scenes), reverse=True)
    assert [i.score for i in result.items] == sorted((i.score for i in result.items), reverse=True)


def test_switches_remove_their_channel(memory):
    for off, channel in (("horizon", "horizon"), ("scene_trigger", "scene_trigger"), ("topic_filter", "topic")):
        result = memory.recall(HORIZON_QUERY, without=[off])
        assert all(channel not in s.via for s in result.scenes)
    result = memory.recall(BRIDGE_QUERY, without=["entity_bridge"])
    assert all(not {"entity", "bridge", "joint"} & set(i.via) for i in result.items)
    assert memory.recall(BRIDGE_QUERY, without=["scene_layer"]).scenes == []
    flat = memory.recall(BRIDGE_QUERY, without=["scene_layer"]).items
    assert flat and all("scene" not in i.via for i in flat)
    assert memory.recall(BRIDGE_QUERY, without=["item_channel"]).items == []
    assert memory.recall(BRIDGE_QUERY, without=["persona"]).persona == []
    everything_off = memory.recall(BRIDGE_QUERY, without=ABLATIONS)
    assert everything_off.scenes == [] and everything_off.items == [] and everything_off.persona == []
    with pytest.raises(TmemError, match="unknown component.*horizons"):
        memory.recall(BRIDGE_QUERY, without=["horizons"])


def test_persona_of_the_speaker_or_of_everyone(memory):
    assert [p["speaker"] for p in memory.recall("hello", speaker="Bob").persona] == ["Bob"]
    assert {p["speaker"] for p in memory.recall("hello").persona} == {"Ana", "Ben", "Alice", "Bob"}
    assert memory.recall("hello", speaker="Nobody").persona == []


def test_one_memory_never_returns_another_memorys_objects(store, encoder, new_id):
    base = load_fixture()
    a_doc = {**copy.deepcopy(base), "memory_id": new_id("iso-a")}
    b_doc = {**copy.deepcopy(base), "memory_id": new_id("iso-b")}
    b_doc["turns"].append({"id": "B:1", "speaker": "Bob", "text": "The vault code is 4711, keep it secret."})
    b_doc["scenes"].append({"id": "b-secret", "title": "The vault code", "turn_ids": ["B:1"],
                            "triggers": {"horizon": [{"channel": "goal_arc", "text": "opening the vault"}]}})
    b_doc["items"].append({"id": "b-item", "kind": "atomic", "text": "The vault code is 4711.",
                           "scene_ids": ["b-secret"], "triggers": [{"concept": "vault code", "bridge": "opening the vault"}]})
    b_doc["topics"].append({"id": "b-topic", "title": "Vault code", "scene_ids": ["b-secret"]})
    a, _ = api.import_memory(a_doc, store=store, encoder=encoder)
    api.import_memory(b_doc, store=store, encoder=encoder)
    result = a.recall("What is the vault code?", settings=None)
    assert "b-secret" not in scene_ids(result) and "b-item" not in item_ids(result)
    for s in result.scenes:
        assert all(not t["id"].startswith("B:") for t in s.turns)
    assert all("vault" not in i.text.lower() for i in result.items)
    assert len(result.scenes) == 4  # all of A's scenes, none of B's


@pytest.mark.parametrize("query", [
    '"', "AND", "OR NOT", "(((", "[x TO y]", "\\", "*", "?", "~2", "title:foo", "ft_scope:scene*",
    "+-&&||!(){}[]^\"~*?:\\/", "a" * 5000, "\u0000nul", "emoji 🍣 sushi", "'; MATCH (n) DETACH DELETE n //",
    "Priya's EpiPen (shellfish) [allergy] {ER}",
])
def test_hostile_queries_return_normally(memory, query):
    result = memory.recall(query)
    assert isinstance(result.scenes, list) and len(result.scenes) <= 5


def test_empty_query_is_an_error(memory):
    with pytest.raises(TmemError, match="empty"):
        memory.recall("   ")


def test_a_memory_owns_its_store_and_starts_no_threads(memory, settings):
    import threading

    before = threading.active_count()
    with api.Memory(memory.id, settings=settings) as own:
        own.recall(DESCRIPTIVE_QUERY)
        own.recall(BRIDGE_QUERY, without=["horizon"])
        assert threading.active_count() == before  # a recall runs in the calling thread
    assert own.store.closed
    with pytest.raises(TmemError, match="is closed"):
        own.recall(DESCRIPTIVE_QUERY)
    lent = api.Memory(memory.id, store=memory.store)
    lent.recall(DESCRIPTIVE_QUERY)
    lent.close()
    assert not memory.store.closed  # a store passed in is the caller's
    assert scene_ids(memory.recall(DESCRIPTIVE_QUERY))[0] == "td-s4"


TURN_QUERY = "Whose left knee starts aching after about ten kilometres?"  # one turn of td-s2


def test_the_turn_channel_reaches_a_scene_by_its_best_turn_and_can_be_switched_off(memory):
    full = memory.recall(TURN_QUERY)
    hit = next(s for s in full.scenes if s.id == "td-s2")
    # `via` says "dialogue" (the spec's channel for a match of the scene's dialogue); ranks name it
    assert "dialogue" in hit.via and hit.ranks["turn"] == 1 and hit.lane == "descriptive"
    off = memory.recall(TURN_QUERY, without=["turns"])
    assert all("turn" not in s.ranks for s in off.scenes)


def test_a_memory_whose_turns_have_no_passage_embedding_recalls_without_the_channel(store, encoder, team_doc, new_id):
    """Turns written before the turn channel have no passage embedding: in a memory not marked
    `turn_passages` (made by an older version) the channel is off (it would rank only the newer
    scenes; no filtered search that can match nothing runs) and the lane falls back to the
    scenes' descriptive vectors."""
    team_doc["memory_id"] = new_id("noturn")
    mem, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    try:
        assert any("turn" in s.ranks for s in mem.recall(TURN_QUERY).scenes)
        with store.session("WRITE") as s:   # made by an older version, newer turns added: the channel would
            s.run("MATCH (m:Memory {id: $m}) REMOVE m.turn_passages "   # rank
                  "SET m.version = randomUUID()", m=team_doc["memory_id"]).consume()  # a new version, as a writer sets
            s.run("MATCH (t:Turn {memory_id: $m, id: 'D1:1'}) REMOVE t.passage_embedding",                 # only those
                  m=team_doc["memory_id"]).consume()
        assert all("turn" not in s.ranks for s in mem.recall(TURN_QUERY).scenes)
        with store.session("WRITE") as s:
            s.run("MATCH (t:Turn {memory_id: $m}) REMOVE t.passage_embedding", m=team_doc["memory_id"]).consume()
            s.run("MATCH (m:Memory {id: $m}) SET m.version = randomUUID()", m=team_doc["memory_id"]).consume()
        got = mem.recall(TURN_QUERY)
        assert got.scenes and all("turn" not in s.ranks for s in got.scenes)
        assert "dense" in got.scenes[0].ranks
    finally:
        mem.drop()


def test_a_packed_recall_hands_over_the_turn_lane_inside_scene_excerpts(memory, encoder, settings):
    doc = memory.export()
    scene_turns = {s["id"]: s["turn_ids"] for s in doc["scenes"]}
    budget = 3000
    packed = memory.recall(DESCRIPTIVE_QUERY, settings=settings.with_retrieval(budget_tokens=budget).retrieval)
    evidence = memory.evidence(packed.__class__(**{**packed.__dict__, "persona": []}))
    assert encoder.count_tokens(evidence) <= budget
    lane = [s for s in packed.scenes if s.lane == "turns"]
    assert lane, "the turn lane opened no scene"
    assert packed.scenes[-len(lane):] == lane            # after the cascade's scenes
    for s in packed.scenes:
        assert s.excerpt and s.turns
        ids = [t["id"] for t in s.turns]
        assert ids == [t for t in scene_turns[s.id] if t in ids]   # the scene's own turns, in their order
    for s in lane:
        assert s.via and set(s.via) <= {"bm25", "dense"} and set(s.ranks) <= {"bm25", "dense"}
        listed = evidence.split("## Other turns that match")[1]
        for t in s.turns:                                   # listed on their own, under their day's line
            assert f"\nOn {day(t['time'] or s.time)}:\n" in listed and f"  {t['speaker']}: {t['text']}" in listed
    # the lane's turns come from the turn channel: without it, or with no share, no scene is opened for them
    for recall in (memory.recall(DESCRIPTIVE_QUERY, without=("turns",),
                                 settings=settings.with_retrieval(budget_tokens=budget).retrieval),
                   memory.recall(DESCRIPTIVE_QUERY, settings=settings.with_retrieval(budget_tokens=budget,
                                                                                      lane_share=0.0).retrieval)):
        assert recall.scenes and all(s.lane != "turns" for s in recall.scenes) and recall.lane == []
    # the cascade's part is what the cascade packs alone into its share, in its order
    depth = {"k_scenes": 12, "k_items": 30}   # what for_budget gives 3,000 tokens, for both
    packed = memory.recall(DESCRIPTIVE_QUERY, settings=settings.with_retrieval(budget_tokens=budget, **depth).retrieval)
    alone = memory.recall(DESCRIPTIVE_QUERY, settings=settings.with_retrieval(
        budget_tokens=budget - int(budget * settings.retrieval.lane_share), lane_share=0.0, **depth).retrieval)
    cascade_part = [s for s in scene_ids(packed) if s in set(scene_ids(alone))]
    assert cascade_part == scene_ids(alone) and item_ids(packed) == item_ids(alone)


def test_a_packed_recall_never_hands_over_another_memorys_turns(memory, store, encoder, settings):
    # another memory holding the same team-dinner dialogue (ids prefixed "xx-"): its turns match
    # the query exactly as well as this memory's, so any unscoped lane search would bring them in
    other = graft(synthetic_memory("test-recall-other", n_items=8, n_scenes=1), load_fixture(), "xx-")
    api.import_memory(other, store=store, encoder=encoder, replace=True)
    try:
        for query in (DESCRIPTIVE_QUERY, "Bob greyhound Biscuit adopt", HORIZON_QUERY,
                      "What did Bob tell Alice on 10 July 2023?"):   # the day's scenes: this memory's only
            packed = memory.recall(query, settings=settings.with_retrieval(   # the lane for a weak match too
                budget_tokens=3000, weak_cue_share=0.3, weak_lane_share=0.5).retrieval)
            assert any(s.lane == "turns" for s in packed.scenes), query
            ids = [s.id for s in packed.scenes] + [t["id"] for s in packed.scenes for t in s.turns] + \
                  [i.id for i in packed.items] + [t.id for t in packed.lane]
            assert not [i for i in ids if i.startswith("xx-")], query
    finally:
        store.drop("test-recall-other")


def test_a_question_that_names_a_day_lists_that_days_best_scenes_right_after_the_first(memory, settings):
    doc = memory.export()
    said = {t["id"]: (t.get("time") or "")[:10] for t in doc["turns"]}
    cfg = settings.with_retrieval(budget_tokens=2000).retrieval
    query = "What did the team decide about the restaurant booking?"
    for named in ("on 20 June 2023", "on June 18, 2023", "on 2023-06-19"):   # the day, or up to two days before it
        since, until = named_days(named)
        on_day = {s["id"] for s in doc["scenes"] if any(since <= said[t] < until for t in s["turn_ids"])}
        assert "td-s3" in on_day and len(on_day) >= DAY_SCENES   # synthetic scenes too: the best ones are listed
        dated = memory.recall(f"{query[:-1]} {named}?", settings=cfg)
        ids = scene_ids(dated)
        assert "td-s3" in ids[:2], (named, ids)
        days = [s.id for s in dated.scenes if "day" in s.ranks]
        assert set(days) <= on_day and len(days) <= DAY_SCENES
        assert sum(key in on_day for key in ids[:1 + DAY_SCENES]) >= DAY_SCENES   # right after the first
        assert all(s.turns for s in dated.scenes)
    assert not any("day" in s.ranks for s in memory.recall(query, settings=cfg).scenes)
    # a day no turn was said on (nor the two days before it), a month alone: no scene of a day
    for named in ("on 25 June 2023", "in June 2023"):
        assert not any("day" in s.ranks for s in memory.recall(f"{query[:-1]} {named}?", settings=cfg).scenes)
    # without a budget the recall is the cascade's alone (kS scenes, shared/spec/cli.md)
    whole = memory.recall(f"{query[:-1]} on 20 June 2023?")
    assert not any("day" in s.ranks for s in whole.scenes)


def test_a_weak_match_hands_over_associative_pointers(store, encoder, new_id, team_doc):
    """A query nothing in memory resembles closely: packed, the first scenes of the associative
    list (`cue_from`: the Horizon family's and the scene vector's scores by the strongest rule) are pointed to by
    their best turn, under their own heading, and the turn lane is asked only when the weak
    shares give it a part; a query close to a turn is packed as before, with no pointer."""
    team_doc["memory_id"] = new_id("weak")
    mem, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    try:
        cfg = RetrievalSettings(budget_tokens=600)
        weak = mem.recall("Travelling for two weeks soon, who could mind things at home meanwhile?", settings=cfg)
        assert weak.weak and weak.match < cfg.weak_match
        pointers = [s for s in weak.scenes if s.lane == "cue"]
        assert pointers and all(s.excerpt and s.ranks.get("pointers") and set(s.via) <= {"horizon", "scene_trigger",
                                                                                        "dialogue"} for s in pointers)
        assert CUE_HEADING in mem.evidence(weak)
        query = "Travelling for two weeks soon, who could mind things at home meanwhile?"
        vector = encoder.encode([query])[0]
        for weak_lane, expect in ((0.0, False), (0.3, True)):   # the cascade's lane follows the split
            shares = RetrievalSettings(budget_tokens=600, weak_cue_share=0.5, weak_lane_share=weak_lane)
            before_packing = Cascade(store, shares.for_budget()).recall(mem.id, query, vector)
            assert before_packing.weak and bool(before_packing.lane) is expect
        # unpacked, a weak match's scene places are all the associative lane's, in its order; with
        # a descriptive place (`weak_listed_share` under 1) it lists first the chosen scene its
        # associative order ranks highest
        for ask in (query, "I am going away for ten days next month, what should I arrange before leaving?"):
            whole = mem.recall(ask, settings=RetrievalSettings(), trace=True)
            cfg_weak = RetrievalSettings().split_for(whole.match)
            lane = [key for key, _ in associative_lane(whole.trace["scenes"], cfg_weak)]
            n = len(whole.scenes)   # the example's four scenes
            assert whole.weak and cfg_weak.associative_first and len(lane) >= n >= 3
            assert scene_ids(whole) == lane[:n] and {s.lane for s in whole.scenes} == {"associative"}
            mixed = mem.recall(ask, settings=RetrievalSettings(weak_listed_share=0.8), trace=True)
            order = [key for key, _ in associative(mixed.trace["scenes"], cfg_weak)]
            assert mixed.scenes[0].id == min(scene_ids(mixed), key=lambda s: order.index(s) if s in order else len(order))
            assert "descriptive" in {s.lane for s in mixed.scenes}
            plain = mem.recall(ask, settings=RetrievalSettings(weak_listed_share=0.8, weak_associative_first=False))
            assert sorted(scene_ids(plain)) == sorted(scene_ids(mixed)) and plain.scenes[0].lane == "descriptive"
        for ask in (query, "When did Bob adopt his greyhound Biscuit?"):   # both rank their first scenes alike
            whole = scene_ids(mem.recall(ask, settings=RetrievalSettings()))
            assert scene_ids(mem.recall(ask, settings=RetrievalSettings(budget_tokens=2000)))[:len(whole)] == whole
        strong = mem.recall("When did Bob adopt his greyhound Biscuit?", settings=cfg)
        assert not strong.weak and strong.match >= cfg.weak_match
        assert not any(s.lane == "cue" for s in strong.scenes)
        off = mem.recall("Travelling for two weeks soon, who could mind things at home meanwhile?",
                         settings=RetrievalSettings(budget_tokens=600, weak_match=0))
        assert not off.weak and not any(s.lane == "cue" for s in off.scenes)
        # far in meaning, but a turn holds the query's words: not a weak match (weak_words)
        named = mem.recall("EpiPen", settings=cfg, trace=True)
        assert named.match < cfg.weak_match and named.words == 1.0 and not named.weak
        assert not any(s.lane == "cue" for s in named.scenes) and named.to_json()["trace"]["words"] == 1.0
        assert weak.words < cfg.weak_words   # the travel query shares no rare word with any turn
        assert mem.recall("EpiPen", settings=RetrievalSettings(budget_tokens=600, weak_words=0)).weak
        assert mem.recall("the and of", settings=cfg, trace=True).words is None   # no words to hold
    finally:
        mem.drop()


def test_a_memory_that_does_not_exist_is_not_found_by_the_cascade(store, encoder):
    """No Statistics load for it (no counts, no statistics): the recall says so, nothing raises
    on the way (the rankings are empty, then the state says the memory is absent)."""
    vector = encoder.encode(["Where should the team eat?"])[0]
    with pytest.raises(MemoryNotFound, match="no-such-memory"):
        Cascade(store, RetrievalSettings()).recall("no-such-memory", "Where should the team eat?", vector)


def test_an_embedding_set_by_hand_with_no_cosine_is_ranked_nowhere_and_recall_still_answers(store, encoder, new_id,
                                                                                              team_doc):
    """Embeddings a vector index leaves out (all zeros, a NaN, another length, values that are not
    numbers: only a hand edit in Neo4j Browser writes them) fail `vector.similarity.cosine`; the
    recall then ranks every entry itself, leaving them out (retrieve/rankings_exact), and the
    other rankings are as before."""
    team_doc["memory_id"] = new_id("badvec")
    mem, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    try:
        query = "Can you suggest a good sushi place for our group outing?"
        before = mem.recall(query, trace=True)
        dialogue = [s for s, _ in before.trace["scenes"].cue_lists["dialogue"]]
        assert len(dialogue) >= 4
        dim = store.memory(mem.id)["dim"]
        broken = {dialogue[0]: [0.0] * dim, dialogue[1]: [float("nan")] + [0.1] * (dim - 1),
                  dialogue[2]: [0.1] * (dim - 1), dialogue[3]: ["0.1"] * dim}
        with store.session("WRITE") as s:
            for scene, value in broken.items():
                s.run("MATCH (s:Scene {memory_id: $m, id: $id}) SET s.dialogue_embedding = $value",
                      m=mem.pid, id=scene, value=value).consume()
            s.run("MATCH (m:Memory {id: $m}) SET m.version = 'hand-edited'", m=mem.pid).consume()
        after = mem.recall(query, trace=True)
        assert [s for s, _ in after.trace["scenes"].cue_lists["dialogue"]] == dialogue[4:]
        assert after.trace["scenes"].cue_lists["horizon"] == before.trace["scenes"].cue_lists["horizon"]
        assert after.scenes and after.version == "hand-edited"
    finally:
        mem.drop()


def first_query(store, memory, cfg: RetrievalSettings, query: str, encoder) -> dict:
    """The row of retrieve/rankings for `query`, as a recall with `cfg` asks for it."""
    run = Cascade(store, cfg)
    stats = run.statistics(memory.pid, None)
    params = run._ranking_params(memory.pid, query, query_terms(query), stats, encoder.encode([query])[0], None,
                                 frozenset())
    return store.run("retrieve/rankings", **params, past_commit=False)[0]


@pytest.mark.parametrize("without", [(), ("topic_filter",), ("horizon",), ("scene_layer",), ("item_channel",)])
def test_the_first_query_in_two_halves_returns_what_it_returns_whole(memory, store, settings, encoder, without):
    """The halves a recall alone in its process runs at once hold every ranking once, and their
    merged row is the whole query's row, ranking for ranking (the pool's cosines in any order)."""
    run = Cascade(store, settings.retrieval.for_budget())
    stats = run.statistics(memory.pid, None)
    for query in (DESCRIPTIVE_QUERY, BRIDGE_QUERY, HORIZON_QUERY, "a guitar near the lake"):
        params = {**run._ranking_params(memory.pid, query, query_terms(query), stats, encoder.encode([query])[0],
                                        None, frozenset(without)), "past_commit": False}
        mine, other = halves(params)
        for name, v in params["vec"].items():   # every vector ranking asked for in one half, none in both
            assert sorted([mine["vec"][name]["k"], other["vec"][name]["k"]]) == [0, v["k"]], name
        assert all(b["fetch"] == 0 for b in other["bm25"].values())
        whole = run._first("retrieve/rankings", params, alone=False)
        split = run._first("retrieve/rankings", params, alone=True)
        cosines = [dict(zip(row.pop("scene_cosine_ids"), row.pop("scene_cosine_scores"))) for row in (whole, split)]
        assert cosines[0] == cosines[1] and (cosines[0] or "scene_layer" in without), query
        assert split == whole, query
        assert whole["item_views"] or "item_channel" in without


@pytest.mark.parametrize("candidates", [3, 50])
def test_a_search_without_the_common_words_ranks_what_a_search_with_every_word_ranks(memory, store, settings,
                                                                                      encoder, monkeypatch, candidates):
    """Every synthetic turn and item says "about": with a low enough bar it is a common word, left
    out of the full-text search; the rankings are those of the search with every word, whether
    the last place outscores it (a shallow ranking) or the ranking searches again (a deep one)."""
    cfg = replace(settings.retrieval.for_budget(), candidates=candidates)
    query = "Who felt anxious about the pottery class?"
    monkeypatch.setattr(cascade, "COMMON_POSTINGS", 10 ** 9)
    every = first_query(store, memory, cfg, query, encoder)
    assert all(s["left_out"] == 0 and not s["again"] for s in every["bm25_searches"])
    monkeypatch.setattr(cascade, "COMMON_POSTINGS", 10)
    common = first_query(store, memory, cfg, query, encoder)
    searches = {s["kind"]: s for s in common["bm25_searches"]}
    assert searches["item"]["left_out"] >= 1 and searches["turn"]["left_out"] >= 1, searches   # "about", "felt"
    if candidates == 3:   # the last place outscores an object that only says "about"
        assert not searches["item"]["again"] and not searches["turn"]["again"], searches
    else:   # fewer items than asked hold another word: it searches again
        assert searches["item"]["again"], searches
    for kind in ("topic", "scene", "item", "lane"):
        assert common[f"{kind}_bm25_ids"] == every[f"{kind}_bm25_ids"], kind
        assert common[f"{kind}_bm25_scores"] == pytest.approx(every[f"{kind}_bm25_scores"]), kind
    assert common["turn_words"] == pytest.approx(every["turn_words"])
