"""`retrieve/rankings_exact` is `retrieve/rankings` without any index read, by fixed rules: the
fallback must rank exactly what the index query ranks. Edit rankings.cypher, then regenerate
the exact query with `python -m tests.unit.test_rankings_exact` and review the diff."""

from __future__ import annotations

import re
import sys

from tmem_graph.store.queries import cypher_root

HEADER = """// The first round trip of a recall when retrieve/rankings failed (an index missing or broken,
// as after a killed server, or an embedding set by hand that has no cosine): the same
// rankings and columns, every vector ranking exact from the memory's own entries one by one
// (`vector.similarity.cosine`, no vector index read), an embedding that is not numbers of the
// query's dimension, all zeros, a NaN or an infinity left out (as a vector index leaves it out).
// BM25 scores every object of the memory that has a query term (its :Term links), no full-text
// index read either. Generated from retrieve/rankings by fixed rules: keep the two in step.
// Parameters and columns: retrieve/rankings ($vec's `fetch` unused).
"""
CHECKED = ("CASE WHEN {p} IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> "
           "THEN 0 < reduce(q = 0.0, x IN {p} | q + x * x) < 1e300 ELSE false END")


def exact_of(index_query: str) -> str:
    """The exact query, from the index query's text."""
    ex = re.sub(r"  CALL \(\) \{\n    UNWIND CASE WHEN \$vec\.\w+\.scan THEN \[\] ELSE \[1\] END AS search[^\n]*\n"
                r"(    WITH [^\n]*\n)?    MATCH \((n|v):\w+\)\n      SEARCH .*?\n  \}\n", "", index_query, flags=re.S)
    ex = ex.replace("CALL (hits) {", "CALL () {").replace("CALL (window) {", "CALL () {")
    ex = re.sub(r"UNWIND CASE WHEN size\((hits|window)\) < \$vec\.\w+\.fetch THEN \[1\] ELSE \[\] END AS short[^\n]*\n    ",
                "", ex)
    ex = re.sub(r"UNWIND CASE WHEN size\((hits|window)\) < \$vec\.\w+\.fetch THEN scanned ELSE hits END AS hit",
                "UNWIND scanned AS hit", ex)
    ex = re.sub(r"  CALL \(\) \{\n    UNWIND CASE WHEN size\(window\) = \$vec\.lane\.fetch THEN window ELSE \[\] END AS hit\n"
                r".*?\n  \}\n", "", ex, flags=re.S)
    ex = ex.replace("size(n.horizon_embedding) = size($vector) + 1",   # one component longer (store/scene_horizon)
                    "size(n.horizon_embedding) = size($vector) + 1 AND " + CHECKED.format(p="n.horizon_embedding"))
    for p in ("n.embedding", "n.dialogue_embedding", "n.passage_embedding", "v.embedding", "s.embedding", "t.embedding"):
        ex = ex.replace(f"size({p}) = size($vector)", f"size({p}) = size($vector) AND " + CHECKED.format(p=p))
    ex = re.sub(r"    CALL db\.index\.fulltext\.queryNodes\(b\.index, (b\.)?lucene, "
                r"\{limit: b\.fetch\}\) YIELD node AS n\n    WHERE n\.memory_id = \$memory_id\n",
                r"    UNWIND b.terms AS term   // every object that has a query term: exact, no full-text index\n"
                r"    MATCH (:Term {memory_id: $memory_id, key: term.key})<-[:HAS_TERM]-(n)\n    WITH DISTINCT n\n", ex)
    ex = re.sub(r"       bound > 0 AND NOT [^\n]* AS again\n",   # every object scored: never again
                "       false AS again\n", ex)
    return HEADER + ex[ex.index("CYPHER 25"):]


def test_the_exact_query_is_the_index_query_without_index_reads():
    index_query = (cypher_root() / "retrieve" / "rankings.cypher").read_text(encoding="utf-8")
    exact = (cypher_root() / "retrieve" / "rankings_exact.cypher").read_text(encoding="utf-8")
    assert exact == exact_of(index_query), "regenerate: python -m tests.unit.test_rankings_exact"
    body = exact.split("CYPHER 25", 1)[1]
    for word in ("SEARCH ", "fulltext", "hits", "window", "scan "):   # no index read, no window left
        assert word not in body, word
    # the nine searches' subqueries and the lane window's went; every stored embedding is checked first
    assert index_query.count("RETURN") == exact.count("RETURN") + 10
    assert body.count(" AND CASE WHEN ") == body.count("= size($vector)") >= 11


if __name__ == "__main__":
    root = cypher_root() / "retrieve"
    (root / "rankings_exact.cypher").write_text(exact_of((root / "rankings.cypher").read_text(encoding="utf-8")),
                                                 encoding="utf-8")
    sys.exit(0)
