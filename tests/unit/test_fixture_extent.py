"""What a fixture has fully built (what `benchmarks/rescore.py` scores): its sessions and probes."""

from tmem_graph.evaluate.fixtures import built_probes, built_sessions


def fixture(turns, scenes):
    return {"turns": [{"id": i, "session": s} for i, s in turns], "scenes": [{"turn_ids": ids} for ids in scenes]}


def test_sessions_count_up_to_the_first_one_with_a_turn_waiting_for_its_scene():
    f = fixture([("D1:1", 1), ("D1:2", 1), ("D2:1", 2), ("D3:1", 3), ("D3:2", 3)],
                [["D1:1", "D1:2"], ["D2:1"], ["D3:1"]])
    assert built_sessions(f) == 2
    assert built_sessions(fixture([("D1:1", 1)], [])) == 0


def test_probes_count_in_probe_order_not_in_text_order():
    # ids P0, P10, P20 (the probes of one base); "P10" sorts before "P2" as text
    turns = [("P0:1", 20), ("P10:1", 21), ("P10:2", 21), ("P20:1", 22), ("P30:1", 23)]
    assert built_probes(fixture(turns, [["P0:1"], ["P10:1", "P10:2"], ["P30:1"]])) == 2
    assert built_probes(fixture(turns, [["P0:1"], ["P10:1", "P10:2"], ["P20:1"], ["P30:1"]])) == 4
    assert built_probes(fixture(turns, [["P10:1", "P10:2"]])) == 0
