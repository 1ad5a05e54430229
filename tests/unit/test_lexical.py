"""Per-memory BM25 (retrieve/lexical.py): Lucene's english analysis and BM25, on one memory's
own statistics."""

import math

from tmem_graph.retrieve.lexical import Bm25, LexiconCache, Lexicon, analyse, query_terms


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
