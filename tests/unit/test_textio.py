"""The checks every decoded input goes through first (tmem_graph/textio.py)."""

import pytest

from tmem_graph.errors import ValidationError
from tmem_graph.textio import parse_json, read_text, value_problems


def test_value_problems_name_each_unstorable_value_with_its_path():
    doc = {"turns": [{"text": "fine"}, {"text": "bad \ud800"}], "n": 2**63, "ok": -2**63, "flag": True,
           "deep": [[[[[1]]]]]}
    assert value_problems(doc) == ["turns[1].text: not valid Unicode text (a lone surrogate at character 4)",
                                   "n: 9223372036854775808 does not fit in a 64-bit integer"]
    assert value_problems({"a": [[[]]]}, "file") == []
    nested = current = []
    for _ in range(40):
        current.append([])
        current = current[0]
    assert value_problems({"x": nested}) == ["x" + "[0]" * 31 + ": nested deeper than 32 levels"]


def test_long_keys_are_shortened_in_paths_and_cost_no_memory():
    key = "k" * 10_000
    problems = value_problems({key: ["\udfff"] * 3})
    assert len(problems) == 3 and problems[0].startswith("k" * 57 + "...[0]: not valid Unicode")


def test_json_that_python_cannot_read_is_a_validation_error():
    with pytest.raises(ValidationError, match="nested too deeply"):
        parse_json("[" * 100_000 + "]" * 100_000, "f.json")
    with pytest.raises(ValidationError, match="f.json: cannot be read as JSON"):
        parse_json("[" + "9" * 5000 + "]", "f.json")  # more digits than int() converts


def test_paths_that_are_not_regular_files(tmp_path):
    with pytest.raises(ValidationError, match="not a regular file"):
        read_text(tmp_path)
    with pytest.raises(ValidationError, match="cannot be read"):
        read_text("bad\0name.json")


def test_a_turn_line_python_cannot_read_names_its_line():
    from tmem_graph.construct.inputs import generic_turns

    with pytest.raises(ValidationError, match="line 2: cannot be read as JSON"):
        generic_turns('{"speaker": "A", "text": "x"}\n{"speaker": "A", "text": "y", "session": ' + "9" * 5000 + "}\n")
