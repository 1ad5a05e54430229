from tmem_graph.retrieve.fuse import ranks_of, rrf
from tmem_graph.retrieve.lucene import escape, scoped_query, terms


def test_rrf_sums_reciprocal_ranks():
    fused = rrf({"a": ["x", "y", "z"], "b": ["y", "w"]}, k0=60)
    scores = dict(fused)
    assert fused[0][0] == "y"
    assert scores["y"] == 1 / 62 + 1 / 61
    assert scores["x"] == 1 / 61
    assert scores["w"] == 1 / 62 and scores["z"] == 1 / 63
    assert [k for k, _ in fused] == ["y", "x", "w", "z"]


def test_rrf_ties_are_deterministic():
    assert [k for k, _ in rrf({"a": ["p"], "b": ["q"]})] == ["p", "q"]
    assert rrf({}) == []


def test_ranks_of():
    assert ranks_of("y", {"a": ["x", "y"], "b": ["y"], "c": []}) == {"a": 2, "b": 1}


def test_escape_every_metacharacter():
    assert escape('a+b-c&&d||e!(f){g}[h]^"i"~j*k?l:m\\n/o') == \
        'a\\+b\\-c\\&\\&d\\|\\|e\\!\\(f\\)\\{g\\}\\[h\\]\\^\\"i\\"\\~j\\*k\\?l\\:m\\\\n\\/o'


def test_terms_neutralise_operators_and_dedupe():
    assert terms('Priya AND "shellfish" OR NOT allergy* allergy') == ["priya", "and", "shellfish", "or",
                                                                     "not", "allergy"]
    assert terms("¿Dónde comemos? 東京") == ["dónde", "comemos", "東京"]
    assert len(terms(" ".join(f"w{n}" for n in range(500)))) == 64


def test_scoped_query_shape():
    q = scoped_query("topic0abc", {"title": 2, "keywords_text": 1}, "team dinner!")
    assert q == "+ft_scope:topic0abc +(title:(team dinner)^2 keywords_text:(team dinner))"
    assert scoped_query("x", {"text": 1}, "?!* ") is None
