"""The evaluation summary: answer coverage is also reported without the temporal questions."""

from tmem_graph.evaluate.runner import summarise


def row(category: int, recall: float, coverage: float | None) -> dict:
    return {"category": category, "systems": {"full": {"recall": recall, "tokens": 10, "answer_coverage": coverage}}}


def test_coverage_beside_the_temporal_questions_leaves_them_out():
    rows = [row(2, 1.0, 1.0), row(2, 1.0, 0.8), row(4, 0.5, 0.2), row(1, 0.0, 0.4), row(4, 1.0, None)]
    full = summarise(rows)["full"]
    assert round(full["answer_coverage"], 3) == round((1.0 + 0.8 + 0.2 + 0.4) / 4, 3)
    assert round(full["answer_coverage_non_temporal"], 3) == 0.3   # (0.2 + 0.4) / 2
    assert full["temporal"] == 1.0 and full["overall"] == 0.7 and full["overall_raw_turns"] == 0.7  # none given
    only_temporal = summarise([row(2, 1.0, 1.0)])["full"]
    assert only_temporal["answer_coverage_non_temporal"] is None


def test_recall_from_raw_turns_leaves_the_items_credit_out():
    rows = [row(4, 1.0, 0.5), row(4, 1.0, 0.5)]
    rows[0]["systems"]["full"]["recall_raw_turns"] = 0.0   # its evidence came from an item
    full = summarise(rows)["full"]
    assert full["overall"] == 1.0 and full["overall_raw_turns"] == 0.5
