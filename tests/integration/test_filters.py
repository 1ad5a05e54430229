"""Recall filters on the real Neo4j (docs/api.md, "Recall filters"): only some speakers' turns,
only a time window, with and without a budget, the items they admit, bad values refused."""

import copy
import dataclasses
import json

import pytest

from tests.integration.test_cli import one_line_error, tmem
from tmem_graph import api
from tmem_graph.errors import UsageError

QUERY = "Where should the team go for dinner?"


@pytest.fixture
def team(store, encoder, new_id, team_doc):
    doc = copy.deepcopy(team_doc)
    doc["memory_id"] = new_id("filters")
    return api.import_memory(doc, store=store, encoder=encoder)[0]


def turns_of(recall):
    return [t for s in recall.scenes for t in s.turns]


def test_a_speaker_filter_hands_over_only_that_speaker_s_turns(team):
    plain = team.recall(QUERY)
    assert {t["speaker"] for t in turns_of(plain)} == {"Alice", "Bob"}
    only = team.recall(QUERY, speakers=["Bob"])
    assert turns_of(only) and {t["speaker"] for t in turns_of(only)} == {"Bob"}
    assert all(s.excerpt for s in only.scenes)   # a scene keeps only the admitted turns
    assert [p["speaker"] for p in only.persona] == ["Bob"]
    assert only.to_json()["filter"] == {"speakers": ["Bob"]} and "filter" not in plain.to_json()
    assert team.recall(QUERY, speakers="Nobody").scenes == []   # an unknown speaker: nothing, no error


def test_a_time_window_keeps_its_turns_and_the_items_resting_on_them(team):
    june = team.recall(QUERY, since="2023-06-01", until="2023-06-30")
    times = [t["time"] for t in turns_of(june)]
    assert times and all("2023-06-01" <= t[:10] <= "2023-06-30" for t in times)
    assert {s.id for s in june.scenes} <= {"s2", "s3"}
    assert {i.id for i in june.items} <= {"i2", "i3", "i4", "i5"} and "i4" in {i.id for i in june.items}
    day = team.recall(QUERY, since="2023-06-20", until="2023-06-20")   # a day alone: the whole day
    assert {s.id for s in day.scenes} == {"s3"}
    moment = team.recall(QUERY, until="2023-05-08T13:57:00")            # a date-time: up to it, inclusive
    assert [t["id"] for t in turns_of(moment)] == ["D1:1", "D1:2"]


def test_a_filtered_recall_still_fills_its_budgets(team):
    cfg = dataclasses.replace(team.settings.retrieval, k_scenes=2)
    only = team.recall(QUERY, speakers=["Alice"], settings=cfg)
    assert len(only.scenes) == 2   # ranked deeper, then cut: kS scenes with Alice's turns
    packed = team.recall(QUERY, speakers=["Alice"], settings=dataclasses.replace(cfg, budget_tokens=300))
    assert packed.scenes and {t["speaker"] for t in turns_of(packed)} == {"Alice"}


def test_a_filtered_packed_recall_lists_first_what_the_filtered_unpacked_recall_hands_over(team):
    # both rank as deep (the filter's widened depth) and drop the scenes left without a turn
    # before the cut to kS, so the packed evidence starts with the unpacked recall's scenes
    queries = (QUERY, "When did Bob adopt his greyhound Biscuit?",
               "Travelling for two weeks soon, who could mind things at home meanwhile?")
    for k in (1, 2):
        for only in ({"speakers": ["Alice"]}, {"speakers": ["Bob"]}, {"since": "2023-06-01"}):   # June empties s1, s4
            for query in queries:
                cfg = dataclasses.replace(team.settings.retrieval, k_scenes=k)
                whole = [s.id for s in team.recall(query, settings=cfg, **only).scenes]
                packed = team.recall(query, settings=dataclasses.replace(cfg, budget_tokens=2000), **only)
                assert [s.id for s in packed.scenes][:len(whole)] == whole, (k, only, query)


@pytest.mark.parametrize("args, message", [
    ({"since": "yesterday"}, "since 'yesterday': not an ISO 8601 date"),
    ({"until": "2023-13-01"}, "until '2023-13-01': not an ISO 8601 date"),
    ({"since": "2023-07-01", "until": "2023-06-01"}, "since '2023-07-01' is not before until '2023-06-01'"),
    ({"speakers": []}, "speakers []: must be 1 to 50 non-empty names"),
    ({"speakers": [""]}, "speakers ['']: must be 1 to 50 non-empty names"),
])
def test_bad_filters_are_one_clear_error(team, args, message):
    with pytest.raises(UsageError) as info:
        team.recall(QUERY, **args)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_the_cli_filters_recall(team):
    done = tmem("recall", team.id, QUERY, "--from-speaker", "Bob", "--since", "2023-06-01", "--json")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["filter"] == {"speakers": ["Bob"], "since": "2023-06-01"}
    assert {t["speaker"] for s in out["scenes"] for t in s["turns"]} == {"Bob"}
    assert all(t["time"] >= "2023-06-01" for s in out["scenes"] for t in s["turns"])
    shown = tmem("recall", team.id, QUERY, "--from-speaker", "Bob")
    assert "only turns speakers Bob" in shown.stdout
    bad = tmem("recall", team.id, QUERY, "--since", "soon")
    assert bad.returncode == 1 and one_line_error(bad).startswith("Error: since 'soon': not an ISO 8601 date")
