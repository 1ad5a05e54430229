"""Per-memory BM25 (retrieve/lexical.py): Lucene's english analysis and BM25, on one memory's
own statistics."""

import math
import threading
import time
import types

from tmem_graph.config import RetrievalSettings
from tmem_graph.errors import DatabaseUnavailable
from tmem_graph.retrieve.cascade import Cascade
from tmem_graph.retrieve.lexical import CACHE, Bm25, LexiconCache, Lexicon, analyse, query_terms


def test_analysis_follows_lucenes_english_analyzer():
    # words lower-cased, a final 's dropped, its stop words out, Porter stems
    assert analyse("Priya's allergies: she is ALLERGIC to shellfish, and oysters!") == \
        ["priya", "allergi", "she", "allerg", "shellfish", "oyster"]
    assert analyse("¿Dónde comemos? 東京 under_score") == ["dónde", "comemo", "東京", "under", "score"]
    assert analyse(None) == [] and analyse("the and of") == []
    assert analyse("C. S. Lewis told us") == ["c", "s", "lewi", "told", "us"]   # short words keep their form


def test_query_terms_neutralise_operators_dedupe_and_cap():
    assert query_terms('Priya AND "shellfish" OR NOT allergy* allergy') == ["priya", "shellfish", "allergi"]
    assert len(query_terms(" ".join(f"w{n}" for n in range(500)))) == 64


def test_scores_are_lucenes_bm25_on_the_documents_given():
    docs = [("a", {"text": "quokka quokka zeppelin"}), ("b", {"text": "zeppelin"}), ("c", {"text": "walrus"})]
    ranked = dict(Bm25(docs, {"text": 1.0}).rank(["quokka"]))
    assert set(ranked) == {"a"}
    idf = math.log(1 + (3 - 1 + 0.5) / (1 + 0.5))
    avg = (3 + 1 + 1) / 3
    assert math.isclose(ranked["a"], idf * 2 / (2 + 1.2 * (1 - 0.75 + 0.75 * 3 / avg)))


def test_a_field_weighs_by_its_boost_and_its_own_statistics():
    docs = [("t", {"title": "zeppelin", "text": "a long text about weather"}),
            ("x", {"title": "weather", "text": "zeppelin"})]
    ranked = Bm25(docs, {"title": 3.0, "text": 1.0}).rank(["zeppelin"])
    assert [k for k, _ in ranked] == ["t", "x"]
    assert math.isclose(ranked[0][1], 3 * ranked[1][1] * (1 + 1.2) / (1 + 1.2), rel_tol=0.5)


def test_held_is_the_largest_share_of_the_query_s_idf_weight_one_document_has():
    docs = [("a", {"text": "quokka quokka zeppelin"}), ("b", {"text": "zeppelin walrus"}), ("c", {"text": "walrus"})]
    index = Bm25(docs, {"text": 1.0})
    idf = lambda n: math.log(1 + (3 - n + 0.5) / (n + 0.5))  # noqa: E731
    # quokka (in 1 of 3), walrus (2 of 3), and a word no document has (0 of 3, the heaviest)
    total = idf(1) + idf(2) + idf(0)
    assert math.isclose(index.held(query_terms("quokka walrus narwhal")), idf(1) / total)   # a: quokka, however often
    assert math.isclose(index.held(query_terms("zeppelin walrus")), 1.0)                    # b holds both
    assert index.held(query_terms("narwhal")) == 0.0 and index.held([]) is None   # no terms: nothing to hold
    assert Bm25([], {"text": 1.0}).held(["quokka"]) == 0.0
    assert math.isclose(index.held(analyse("walrus walrus")), 1.0)                          # a term counts once


def test_equal_scores_rank_by_id():
    docs = [("s2", {"text": "zeppelins over the zoo"}), ("s1", {"text": "quokkas at the zoo"})]
    assert [k for k, _ in Bm25(docs, {"text": 1.0}).rank(["quokka", "zeppelin"])] == ["s1", "s2"]


def test_the_cache_forgets_the_least_recently_used_beyond_its_limit():
    def lexicon(version, n):
        return Lexicon(version, {"turn": Bm25([(str(i), {"text": "x"}) for i in range(n)], {"text": 1.0})})
    cache = LexiconCache(limit=10)
    cache.put("db", "a", lexicon("1", 4))
    cache.put("db", "b", lexicon("1", 4))
    assert cache.get("db", "a").version == "1"   # a is now the most recent
    cache.put("db", "c", lexicon("1", 4))
    assert cache.get("db", "b") is None and cache.get("db", "a") is not None and cache.get("db", "c") is not None
    cache.put("db", "big", lexicon("2", 50))     # larger than the limit: kept alone
    assert cache.get("db", "big") is not None and cache.get("db", "a") is None
    assert cache.get("other", "big") is None


class SlowStore:
    """A store whose `retrieve/lexicon` takes a while (or fails first), counting its loads."""

    def __init__(self, uri: str, fail_first: bool = False):
        self.settings = types.SimpleNamespace(uri=uri, database=None)
        self.loads, self.fail_first, self.lock = 0, fail_first, threading.Lock()

    def run(self, name, **params):
        assert name == "retrieve/lexicon"
        with self.lock:
            self.loads += 1
            fail, self.fail_first = self.fail_first, False
        time.sleep(0.2)
        if fail:
            raise DatabaseUnavailable("the server went away")
        return [{"version": "v1", "topics": [], "scenes": [], "items": [], "turns": [["t1", "hello there"]],
                 "topic_vectors": [], "scene_vectors": [], "dialogue_vectors": [], "item_vectors": [],
                 "turn_vectors": [], "trigger_vectors": [], "turn_passages": True}]


def load_at_once(cascade, threads: int = 6) -> list:
    start, got = threading.Barrier(threads), []

    def one():
        start.wait()
        try:
            got.append(cascade.lexicon("m1", None))
        except DatabaseUnavailable as exc:
            got.append(exc)
    workers = [threading.Thread(target=one) for _ in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    return got


def test_recalls_that_miss_the_cache_at_once_load_the_memory_once():
    store = SlowStore("bolt://unit-single-flight")
    try:
        got = load_at_once(Cascade(store, RetrievalSettings()))
        assert store.loads == 1 and len(got) == 6 and all(g is got[0] for g in got)
        assert got[0].version == "v1" and [k for k, _ in got[0].kinds["turn"].rank(["hello"])] == ["t1"]
        assert Cascade(store, RetrievalSettings()).reload("m1") is not got[0] and store.loads == 2  # a reload loads
    finally:
        CACHE.drop(store.settings.uri + "/", "m1")


def test_a_load_that_fails_leaves_the_next_waiting_recall_to_load():
    store = SlowStore("bolt://unit-single-flight-fail", fail_first=True)
    try:
        got = load_at_once(Cascade(store, RetrievalSettings()), threads=3)
        assert sum(isinstance(g, DatabaseUnavailable) for g in got) == 1 and store.loads == 2
        assert len({id(g) for g in got if not isinstance(g, Exception)}) == 1
    finally:
        CACHE.drop(store.settings.uri + "/", "m1")
