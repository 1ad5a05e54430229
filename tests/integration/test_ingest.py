"""The write path with a scripted LLM served through the real `openai` client: every stage's
parsing and graph writes, invalid replies, kill-and-resume, re-ingest and incremental ingest."""

import json
from pathlib import Path

import pytest

from tmem_graph import api
from tmem_graph.construct.inputs import read_conversation
from tmem_graph.llm.cache import ResponseCache
from tmem_graph.llm.client import LLMClient, LLMError, LLMSettings

DIALOGUE = Path(__file__).parents[2] / "examples" / "short-dialogue.jsonl"


def script_first_half(llm):
    """Replies for the first session (turns a1-a4): one scene, one new topic."""
    llm.expect("numbered:\n[1] [2024-04-02T19:00:00] Ana: I finally booked", {"starts": []})
    llm.expect("Describe this scene", {
        "title": "Ana books a cooking class with a seafood market tour in Porto for early June",
        "summary": "Ana booked a cooking class in Porto for the first week of June 2024. She will skip oysters.",
        "narrative": "On 2 April 2024 Ana told Ben she had booked a cooking class in Porto for the first week of June."})
    llm.expect("This scene starts a new topic", {"title": "Ana's cooking class in Porto",
                                                  "keywords": ["cooking class", "Porto", "seafood"]})
    llm.expect("Scene s1 (time: 2024-04-02T19:00:00)", {"items": [
        {"text": "Ana booked a cooking class in Porto for the first week of June 2024.", "turns": [1],
         "time": "2024-04-02"},
        {"text": "Oysters upset Ana's stomach, so she avoids them.", "turns": [1, 3], "earlier_scenes": ["s99"]},
        {"text": "An item from nowhere.", "turns": [9]}]})
    llm.expect("Fact: Ana booked a cooking class", {"triggers": [
        {"concept": "travel plans", "bridge": "scheduling meetings in early June",
         "rationale": "Ana is away then"}]})
    llm.expect("Fact: Oysters upset Ana's stomach", {"triggers": [
        {"concept": "food intolerance", "bridge": "choosing a restaurant with Ana",
         "rationale": "she cannot eat oysters"}]})
    llm.expect("Read this scene", {
        "situation": "planning a trip", "object": "a cooking class", "event": "booking a class",
        "emotion": "excitement", "horizon": {"goal_arc": "travelling to Portugal in June",
                                            "avoidance_habit": "avoiding shellfish at group meals",
                                            "personal_arc": None, "belief_in_action": "null",
                                            "legacy_anchor": None}})
    llm.expect("Keep a profile of Ana", {"statements": [{"text": "Ana booked a cooking class in Porto", "turns": [1]},
                                                         {"text": "Oysters upset Ana's stomach.", "turns": [3]}]})
    llm.expect("Keep a profile of Ben", {"statements": [{"text": "Ben wants photos of the market.", "turns": [4]}]})


def script_second_half(llm):
    llm.expect("numbered:\n[1] [2024-04-20T10:00:00] Ben: My sister Clara", {"starts": []})
    llm.expect("Describe this scene", {
        "title": "Ben prepares his spare room for his sister Clara who moves in next month",
        "summary": "Ben's sister Clara moves in with him in May 2024; he must clear his bike gear.",
        "narrative": "On 20 April 2024 Ben said Clara would move in while job hunting."})
    llm.expect("This scene starts a new topic", {"title": "Clara moves in with Ben",
                                                  "keywords": ["Clara", "spare room"]})
    llm.expect("Scene s2 (time: 2024-04-20T10:00:00)", {"items": [
        {"text": "Ben's sister Clara moves in with him in May 2024 while she looks for a job.", "turns": [1]}]})
    llm.expect("Fact: Ben's sister Clara", {"triggers": [
        {"concept": "family living together", "bridge": "inviting Ben to travel in May",
         "rationale": "he is hosting Clara"}]})
    llm.expect("Read this scene", {
        "situation": "a family arrangement", "object": "a spare room", "event": "a sister moving in",
        "emotion": "generosity", "horizon": {"personal_arc": "Ben adjusting to sharing his home"}})
    llm.expect("Keep a profile of Ben", {"statements": [
        {"text": "Ben's sister Clara moves in with him.", "turns": [1]},
        {"text": "Ben is a 28-year-old software engineer.", "turns": [2]},   # invented: dropped
        {"text": "Ben rides a motorbike to work.", "turns": []}]})             # not in the profile: dropped
    llm.expect("Keep a profile of Ana", {"statements": [{"text": "Ana booked a cooking class in Porto.", "turns": []},
                                                         {"text": "Ana offered to lend Ben her car.", "turns": [4]}]})


def assert_turns_only(store, memory_id, turns):
    """A build that failed or was killed: its turns (added first) are held, none is in a scene."""
    counts = store.counts(memory_id)
    assert (counts["turns"], counts["scenes"], counts["items"], counts["personas"]) == (turns, 0, 0, 0)
    assert len(store.run("live/pending", memory_id=memory_id)[0]["pending"]) == turns


def client(llm, tmp_path, retries=2):
    return LLMClient(LLMSettings(base_url=llm.url, model="scripted", retries=retries),
                     cache=ResponseCache(tmp_path / "cache.sqlite"))


def ingest(store, encoder, memory_id, turns, llm_client, **kw):
    return api.ingest(memory_id, turns, store=store, encoder=encoder, llm=llm_client, concurrency=2, **kw)


@pytest.fixture
def halves():
    turns = read_conversation(DIALOGUE)
    return turns[:4], turns[4:]


def test_first_build_writes_every_stage(store, encoder, new_id, scripted_llm, tmp_path, halves):
    script_first_half(scripted_llm)
    memory_id = new_id("ingest")
    report = ingest(store, encoder, memory_id, halves[0], client(scripted_llm, tmp_path))
    assert (report.new_turns, report.new_scenes, report.new_topics, report.new_items) == (4, 1, 1, 2)
    doc = api.Memory(memory_id, store=store).export()
    assert [s["id"] for s in doc["scenes"]] == ["s1"] and doc["scenes"][0]["turn_ids"] == ["a1", "a2", "a3", "a4"]
    assert doc["scenes"][0]["time"] == "2024-04-02T19:00:00"
    assert doc["topics"] == [{"id": "t1", "title": "Ana's cooking class in Porto",
                              "keywords": ["cooking class", "Porto", "seafood"], "scene_ids": ["s1"]}]
    # the item citing a1 and a3 rests on a3 only (a1 shares no word with it); s99 and the item
    # citing a turn the scene does not have are dropped
    assert [(i["id"], i["kind"], i["scene_ids"], i["turn_ids"]) for i in doc["items"]] == [
        ("i1", "atomic", ["s1"], ["a1"]), ("i2", "atomic", ["s1"], ["a3"])]
    assert doc["items"][0]["time"] == "2024-04-02"
    assert doc["scenes"][0]["triggers"]["horizon"] == [
        {"channel": "avoidance_habit", "text": "avoiding shellfish at group meals"},
        {"channel": "goal_arc", "text": "travelling to Portugal in June"}]
    stats = api.Memory(memory_id, store=store).stats()
    assert set(stats["trigger_families"]) == {"item", "scene", "horizon"}
    assert stats["ledger"]["segment"]["calls"] == 1 and stats["ledger"]["items"]["calls"] == 1
    assert stats["ledger"]["item_triggers"]["prompt_tokens"] > 0


def test_invalid_replies_are_retried_and_exhausted_retries_name_the_stage(store, encoder, new_id,
                                                                        scripted_llm, tmp_path, halves):
    memory_id = new_id("invalid")
    scripted_llm.expect("[1] [2024-04-02T19:00:00] Ana", '{"starts": [')          # truncated JSON
    scripted_llm.expect("[1] [2024-04-02T19:00:00] Ana", {"boundaries": "none"})  # wrong schema
    scripted_llm.expect("[1] [2024-04-02T19:00:00] Ana", {"starts": [3, 17]})    # 17 is out of range
    scripted_llm.expect("Describe this scene", {"title": "only a title"}, reusable=True)
    with pytest.raises(LLMError, match=r"scene scene s1: no valid SceneCard reply after 3 attempts"):
        ingest(store, encoder, memory_id, halves[0], client(scripted_llm, tmp_path))
    # the turns were added before the build and stay, recallable, until a build succeeds; the
    # failed round wrote nothing (no scene, no boundary marks)
    assert store.counts(memory_id)["turns"] == 4 and store.counts(memory_id)["scenes"] == 0
    assert store.run("live/pending", memory_id=memory_id)[0]["pending"] == [
        {"id": t.id, "seq": n, "examined": False, "starts": False} for n, t in enumerate(halves[0])]
    boundary_requests = [r for r in scripted_llm.requests if "New turns, numbered" in r["messages"][-1]["content"]]
    assert len(boundary_requests) == 3
    assert boundary_requests[0]["response_format"]["type"] == "json_schema"
    # temperature 0 first; a retry samples higher, or a deterministic model repeats its bad reply
    assert [r["temperature"] for r in boundary_requests] == [0.0, 0.5, 0.5]
    card_requests = [r for r in scripted_llm.requests if "Describe this scene" in r["messages"][-1]["content"]]
    # one scene (a boundary at a3 would leave a 2-turn scene: ignored), tried 1 + 2 retries
    assert len(card_requests) == 3
    scripted_llm.script.clear()


def test_interrupted_build_resumes_from_the_cache_to_the_same_graph(store, encoder, new_id, scripted_llm,
                                                                 tmp_path, halves):
    reference_id, resumed_id = new_id("ref"), new_id("resume")
    script_first_half(scripted_llm)
    ingest(store, encoder, reference_id, halves[0], client(scripted_llm, tmp_path / "a"))

    script_first_half(scripted_llm)

    def crash(stage, done, total):
        if stage == "item_triggers" and done == 1:
            raise KeyboardInterrupt("killed")

    with pytest.raises(KeyboardInterrupt):
        ingest(store, encoder, resumed_id, halves[0], client(scripted_llm, tmp_path / "b"), progress=crash)
    assert_turns_only(store, resumed_id, 4)  # the added turns wait for a build; no scene was written
    asked = len(scripted_llm.requests)
    remaining = list(scripted_llm.script)
    assert remaining, "the crash should leave scene-trigger and persona work undone"
    ingest(store, encoder, resumed_id, halves[0], client(scripted_llm, tmp_path / "b"))
    assert scripted_llm.script == []  # exactly the unfinished work was asked for
    assert len(scripted_llm.requests) - asked == len(remaining)
    ref = api.Memory(reference_id, store=store).export()
    got = api.Memory(resumed_id, store=store).export()
    assert {**got, "memory_id": None} == {**ref, "memory_id": None}


def test_reingest_is_a_no_op_and_the_second_half_extends(store, encoder, new_id, scripted_llm, tmp_path, halves):
    memory_id = new_id("incr")
    script_first_half(scripted_llm)
    llm = client(scripted_llm, tmp_path)
    ingest(store, encoder, memory_id, halves[0], llm)
    before = api.Memory(memory_id, store=store).export()
    asked = len(scripted_llm.requests)
    again = ingest(store, encoder, memory_id, halves[0], llm)
    assert (again.new_turns, again.skipped_turns) == (0, 4)
    assert len(scripted_llm.requests) == asked
    assert api.Memory(memory_id, store=store).export() == before

    script_second_half(scripted_llm)
    report = ingest(store, encoder, memory_id, halves[0] + halves[1], llm)
    assert (report.new_turns, report.skipped_turns, report.new_scenes, report.new_topics) == (4, 4, 1, 1)
    after = api.Memory(memory_id, store=store).export()
    assert after["turns"][:4] == before["turns"] and [t["id"] for t in after["turns"][4:]] == ["b1", "b2", "b3", "b4"]
    assert after["scenes"][0] == before["scenes"][0]
    assert after["scenes"][1]["id"] == "s2" and after["scenes"][1]["turn_ids"] == ["b1", "b2", "b3", "b4"]
    assert [t["id"] for t in after["topics"]] == ["t1", "t2"] and after["topics"][0] == before["topics"][0]
    assert after["items"][:2] == before["items"]
    assert after["items"][2]["id"] == "i3" and after["items"][2]["scene_ids"] == ["s2"]
    personas = {p["speaker"]: p["summary"] for p in after["personas"]}
    assert personas == {"Ana": "Ana booked a cooking class in Porto. Ana offered to lend Ben her car.",
                        "Ben": "Ben's sister Clara moves in with him."}
    with store.session("READ") as s:
        nexts = s.run("MATCH (a:Scene {memory_id: $m})-[:NEXT]->(b) RETURN a.id AS a, b.id AS b", m=memory_id).data()
    assert nexts == [{"a": "s1", "b": "s2"}]
    ledger = api.Memory(memory_id, store=store).stats()["ledger"]
    assert ledger["segment"]["calls"] == 2 and ledger["topic"]["calls"] == 2  # s2 is near no topic: no choice call


def test_bad_input_is_rejected_before_any_llm_call(tmp_path, scripted_llm, store):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"speaker": "Ana", "text": "hi"}\n{"speaker": "", "text": "x"}\n'
                   '{"speaker": "Ben", "text": "yo", "time": "yesterday"}\nnot json\n')
    from tmem_graph.errors import ValidationError

    with pytest.raises(ValidationError) as info:
        api.ingest("m-bad", bad, store=store, llm=client(scripted_llm, tmp_path))
    assert info.value.problems == [
        f'{bad} line 4: invalid JSON (Expecting value)',
        f'{bad} line 2: "speaker" is missing or empty',
        f"{bad} line 3: \"time\" 'yesterday' is not an ISO 8601 date-time"]
    assert scripted_llm.requests == []


def test_cli_ingest_killed_with_sigkill_resumes_to_the_same_graph(store, encoder, new_id, scripted_llm,
                                                                 tmp_path, halves):
    """A real `tmem ingest` process is SIGKILLed mid-build; the re-run finishes the same memory."""
    import os
    import signal
    import subprocess
    import sys
    import time

    reference_id, killed_id = new_id("cli-ref"), new_id("cli-kill")
    script_first_half(scripted_llm)
    ingest(store, encoder, reference_id, halves[0], client(scripted_llm, tmp_path / "ref"))
    full_run = len(scripted_llm.requests)
    scripted_llm.requests.clear()
    scripted_llm.script.clear()
    for needle, reply, _ in _replies_of(script_first_half):
        scripted_llm.expect(needle, reply, reusable=True)

    env = {**os.environ, "TMEM_LLM_BASE_URL": scripted_llm.url, "TMEM_LLM_MODEL": "scripted",
           "TMEM_LLM_CACHE": str(tmp_path / "cli-cache.sqlite")}
    cmd = [sys.executable, "-m", "tmem_graph.cli", "ingest", str(DIALOGUE), "--memory", killed_id,
           "--concurrency", "1"]
    first_half = tmp_path / "first.jsonl"
    first_half.write_text("".join(line + "\n" for line in DIALOGUE.read_text().splitlines()[:4]))
    cmd[4] = str(first_half)
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while len(scripted_llm.requests) < 4 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.returncode == -signal.SIGKILL, "the build finished before it could be killed"
    assert_turns_only(store, killed_id, 4)
    asked_before = len(scripted_llm.requests)
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "+0 turns (4 already there), +1 scenes" in done.stdout  # the killed run had added them
    resumed_requests = len(scripted_llm.requests) - asked_before
    assert resumed_requests <= full_run - asked_before + 1  # at most the one in flight is asked again
    ref = api.Memory(reference_id, store=store).export()
    got = api.Memory(killed_id, store=store).export()
    assert {**got, "memory_id": None} == {**ref, "memory_id": None}
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "nothing new" in again.stdout


def _replies_of(script):
    """The (needle, reply, reusable) triples a script function registers."""
    class Recorder:
        def __init__(self):
            self.script = []

        def expect(self, needle, reply, reusable=False):
            self.script.append((needle, reply if isinstance(reply, str) else json.dumps(reply), reusable))

    rec = Recorder()
    script(rec)
    return rec.script


def test_two_processes_ingesting_one_memory_at_once_are_serialised(store, encoder, new_id, tmp_path):
    """Two `tmem ingest` into one memory, started together: each adds its turns (adds are
    serialised), then the write lease lets one build at a time; every turn is held once, every
    scene is one session's run of consecutive turns, the export validates, and a writer that
    cannot get the lease is refused with a message (its turns stay, for the next build)."""
    import os
    import subprocess
    import sys

    from tests.fixtures.auto_llm import serve
    from tmem_graph.format import parse_document

    server = serve(0.4, encoder.count_tokens)
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    lines = DIALOGUE.read_text().splitlines()
    parts = [tmp_path / "a.jsonl", tmp_path / "b.jsonl"]
    parts[0].write_text("".join(line + "\n" for line in lines[:4]))
    parts[1].write_text("".join(line + "\n" for line in lines[4:]))
    try:
        def run(memory_id, *files):
            env = {**os.environ, "TMEM_LLM_BASE_URL": url, "TMEM_LLM_MODEL": "auto", "TMEM_LLM_CACHE": "off"}
            procs = [subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "ingest", str(f), "--memory",
                                       memory_id], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                     for f in files]
            return [(p.wait(timeout=600), p.stderr.read()) for p in procs]

        together = new_id("lease-both")
        outcomes = run(together, *parts)
        codes = [code for code, _ in outcomes]
        got = api.Memory(together, store=store).export()
        parse_document(got)  # the export validates (a merged memory did not)
        assert sorted(t["id"] for t in got["turns"]) == sorted(json.loads(line)["id"] for line in lines)
        order = [t["id"] for t in got["turns"]]
        sessions = {t["id"]: t["session"] for t in got["turns"]}
        for scene in got["scenes"]:
            first = order.index(scene["turn_ids"][0])
            assert scene["turn_ids"] == order[first:first + len(scene["turn_ids"])]
            assert len({sessions[t] for t in scene["turn_ids"]}) == 1
        if codes == [0, 0]:
            assert api.Memory(together, store=store).stats()["pending_turns"] == 0
        else:
            assert sorted(codes) == [0, 1], outcomes
            refused = next(err for code, err in outcomes if code == 1)
            assert "is being written by build" in refused and "Traceback" not in refused
    finally:
        server.shutdown()
