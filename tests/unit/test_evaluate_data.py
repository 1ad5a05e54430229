from tmem_graph.construct.inputs import InputTurn
from tmem_graph.evaluate.data import (EvidenceRepairs, build_steps, first_sessions, gap_days, locomo_qas, repair_evidence,
                                     stitch, within_sessions)


def test_malformed_evidence_ids_are_repaired_or_dropped_and_counted():
    r = EvidenceRepairs()
    assert repair_evidence(["D8:6; D9:17", "D", "D:11:26", "D30:05", "D9:1 D4:4 D4:6", "D1:3", "D1:3"], r) == \
        ["D8:6", "D9:17", "D11:26", "D30:5", "D9:1", "D4:4", "D4:6", "D1:3"]
    assert (r.repaired, r.dropped) == (4, 1)


def test_qas_keep_categories_one_to_four_with_evidence():
    sample = {"qa": [{"question": "q1", "category": 1, "evidence": ["D1:1"], "answer": 3},
                     {"question": "q5", "category": 5, "evidence": ["D1:1"]},
                     {"question": "q3", "category": 3, "evidence": []},
                     {"question": "q4", "category": 4, "evidence": ["D"]}]}
    r = EvidenceRepairs()
    qas = locomo_qas(sample, r)
    assert [(q.question, q.answer) for q in qas] == [("q1", "3")]
    assert r.skipped_questions == 2 and r.dropped == 1


def test_gap_days():
    assert [gap_days(t) for t in ["two weeks later", "about one month later", "a year after",
                                  "several months later", "a few weeks later",
                                  "two months after the challenge ended"]] == [14, 30, 365, 90, 21, 60]


def test_stitching_a_probe_checked_by_hand():
    base = {"sample_id": "conv-x", "conversation": {
        "speaker_a": "Caroline", "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023", "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "hi"}],
        "session_2_date_time": "10:00 am on 1 June, 2023", "session_2": [{"speaker": "Melanie", "dia_id": "D2:1", "text": "yo"},
                                                                         {"speaker": "Caroline", "dia_id": "D2:2", "text": "ok"}]}}
    probe = {"index": 20, "relation_type": "goal", "time_gap": "two weeks later",
             "cue_dialogue": "A: I'm saving every vacation day for Japan.\nB: Sounds unforgettable.",
             "trigger_query": "A: My weekends at local historical sites are surprisingly rich."}
    p = stitch(probe, [base] * 10)  # 20 % 10 == 0: the first base conversation
    # last turn: 1 June 2023 10:00:30; query a week later; cue two weeks before the query
    assert p.query_time == "2023-06-08T10:00:30"
    assert [(t.speaker, t.time, t.session, t.id) for t in p.cue] == [
        ("Caroline", "2023-05-25T10:00:30", 5, "P20:1"), ("Melanie", "2023-05-25T10:01:00", 5, "P20:2")]
    # session 2 is the base's last: probe 20 is the third of its base (0, 10, 20), so session 2 + 1 + 2;
    # probes of one base stitched into one memory keep their cues in distinct sessions
    assert stitch(dict(probe, index=0), [base] * 10).cue[0].session == 3
    assert p.query == "My weekends at local historical sites are surprisingly rich." and p.query_speaker == "Caroline"
    assert (p.base, p.relation) == ("conv-x", "goal")


def test_first_sessions_limit_turns_and_questions():
    turns = [InputTurn("A", "x", session=1, id="D1:1"), InputTurn("B", "y", session=2, id="D2:1"),
             InputTurn("A", "z", session=3, id="D3:1")]
    assert [t.id for t in first_sessions(turns, 2)] == ["D1:1", "D2:1"]
    assert first_sessions(turns, None) == turns
    assert within_sessions(["D1:3", "D2:10"], 2)
    assert not within_sessions(["D1:3", "D12:1"], 2)  # session 12, not 1
    assert within_sessions(["D12:1"], None)


def test_build_steps_one_ingest_per_session_then_cues_a_few_probes_at_a_time():
    conv = {"speaker_a": "Ann", "speaker_b": "Bo"}
    for n, day in ((1, 8), (2, 9), (3, 10)):
        conv[f"session_{n}_date_time"] = f"1:56 pm on {day} May, 2023"
        conv[f"session_{n}"] = [{"speaker": "Ann", "dia_id": f"D{n}:1", "text": "hi"},
                                {"speaker": "Bo", "dia_id": f"D{n}:2", "text": "yo"}]
    base = {"sample_id": "conv-x", "conversation": conv}
    probes = [stitch({"index": 10 * k, "relation_type": "state", "time_gap": "two weeks later",
                      "cue_dialogue": f"A: cue {k}\nB: noted", "trigger_query": "A: later"}, [base] * 10)
              for k in range(7)]
    steps = build_steps(base, 2, probes, per_step=3)
    assert [name for name, _ in steps] == ["session 1", "session 2", "locomo-plus cues of probes 1-3 of 7",
                                           "locomo-plus cues of probes 4-6 of 7", "locomo-plus cues of probes 7-7 of 7"]
    assert [t.id for t in steps[1][1]] == ["D2:1", "D2:2"]
    assert [t.id for t in steps[3][1]] == ["P30:1", "P30:2", "P40:1", "P40:2", "P50:1", "P50:2"]
    assert [t.id for t in steps[4][1]] == ["P60:1", "P60:2"]
    assert [name for name, _ in build_steps(base)] == ["session 1", "session 2", "session 3"]
