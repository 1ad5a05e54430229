"""Per-memory BM25 (retrieve/lexical.py): Lucene's english analysis and BM25, on one memory's
own statistics; the rows that keep them in the database; the per-process cache of a memory's
statistics."""

import math
import threading
import time
import types

from tmem_graph.config import RetrievalSettings
from tmem_graph.errors import DatabaseUnavailable
from tmem_graph.retrieve.cascade import Cascade
from tmem_graph.retrieve.lexical import (CACHE, Bm25, Statistics, StatisticsCache, analyse, build, lex_probe,
                                         joined, lucene_parts, query_terms, statistics_keys, term_rows)


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
    cache = StatisticsCache(limit=2)
    cache.put("db", "a", Statistics("1"))
    cache.put("db", "b", Statistics("1"))
    assert cache.get("db", "a").version == "1"   # a is now the most recent
    cache.put("db", "c", Statistics("1"))
    assert cache.get("db", "b") is None and cache.get("db", "a") is not None and cache.get("db", "c") is not None
    assert cache.get("other", "a") is None


def test_term_rows_hold_each_fields_distinct_terms_their_counts_and_lengths():
    rows = term_rows("scene", [("s1", {"title": "Oysters, oysters!", "summary": None, "narrative": "",
                                        "text": "Ana: the oysters at the market"})])
    assert rows == [{"id": "s1", "lens": [2, 0, 0, 3],
                     "keys": ["scene|title|", "scene|title|oyster", "scene|text|", "scene|text|ana",
                              "scene|text|oyster", "scene|text|market"],
                     "tfs": [2, 2, 3, 1, 1, 1], "lex": " title|oyster:2 text|ana:1 text|oyster:1 text|market:1 "}]
    assert lex_probe("text", "oyster") in rows[0]["lex"] and lex_probe("text", "oyst") not in rows[0]["lex"]


def test_statistics_are_read_off_the_term_nodes_degrees_and_totals():
    keys = statistics_keys()
    held = {"scene|title|": (4, 10), "vec|trigger_embedding|horizon": (12, 12), "vec|turn_embedding|": (30, 30)}
    stats = build({"version": "v", "turn_passages": True,
                   "terms_held": [[k, *held.get(k, (0, None))] for k in keys]})
    assert stats.held("horizon") == 12 and stats.held("turn_embedding") == 30 and stats.held("item") == 0
    assert stats.depth("horizon", 50) == 12 and stats.depth("turn_embedding", 5) == 5
    title = stats.fields("scene")[0]
    assert title == {"boost": 3.0, "docs": 4, "avg": 2.5} and stats.fields("scene")[1]["docs"] == 0


def test_a_lucene_query_is_scoped_lowercased_and_escaped():
    q = joined(lucene_parts("scene123", {"title": 3.0, "text": 1.0}, "Oysters AND (NOT) o'neil?", []))
    assert q == "+ft_scope:scene123 +(title:(oysters and not o'neil)^3 text:(oysters and not o'neil))"
    assert joined(lucene_parts("s", {"text": 1.0}, "?! ", [])) is None


def test_the_parts_of_a_lucene_query_name_each_word_s_term():
    text = "Oysters AND the oyster's (bar)?"
    parts = lucene_parts("scene123", {"title": 3.0, "text": 1.0}, text, query_terms(text))
    assert query_terms(text) == ["oyster", "bar"]
    assert parts["scope"] == "+ft_scope:scene123"
    assert parts["clauses"] == [{"open": "title:(", "close": ")^3"}, {"open": "text:(", "close": ")"}]
    # "and" and "the" are stop words (no term); "oysters" and "oyster's" analyse to the same term
    assert parts["words"] == [{"text": "oysters", "term": 0}, {"text": "and", "term": -1}, {"text": "the", "term": -1},
                              {"text": "oyster's", "term": 0}, {"text": "bar", "term": 1}]
    # retrieve/rankings builds the same string from these parts when it keeps every word
    assert joined(parts) == ("+ft_scope:scene123 +(title:(oysters and the oyster's bar)^3 "
                             "text:(oysters and the oyster's bar))")


class SlowStore:
    """A store whose `retrieve/statistics` takes a while (or fails first), counting its loads."""

    def __init__(self, uri: str, fail_first: bool = False):
        self.settings = types.SimpleNamespace(uri=uri, database=None)
        self.loads, self.fail_first, self.lock = 0, fail_first, threading.Lock()

    def run(self, name, **params):
        assert name == "retrieve/statistics"
        with self.lock:
            self.loads += 1
            fail, self.fail_first = self.fail_first, False
        time.sleep(0.2)
        if fail:
            raise DatabaseUnavailable("the server went away")
        return [{"version": "v1", "terms": True, "turn_passages": True,
                 "terms_held": [["turn|text|", 1, 2], ["vec|turn_embedding|", 1, 1]]}]


def load_at_once(cascade, threads: int = 6) -> list:
    start, got = threading.Barrier(threads), []

    def one():
        start.wait()
        try:
            got.append(cascade.statistics("m1", None))
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
        assert got[0].version == "v1" and got[0].held("turn_embedding") == 1 and got[0].fields("turn")[0]["avg"] == 2
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
