"""The live path against the real server, with the auto-replying LLM behind the real
`openai` client: turns recallable right after `add`, replays a turn or an exchange at a time
reaching the batch's scenes at about its cost, two processes adding and building one memory,
a builder killed mid-build, and recalls while a build commits."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.fixtures.auto_llm import serve
from tests.fixtures.statistics import assert_statistics_exact
from tmem_graph import api
from tmem_graph.encode import get_encoder
from tmem_graph.construct.inputs import InputTurn, locomo_turns, read_conversation
from tmem_graph.errors import EncoderMismatch, ValidationError
from tmem_graph.evaluate import data as ev
from tmem_graph.llm.client import LLMClient, LLMSettings

ROOT = Path(__file__).parents[2]
DIALOGUE = ROOT / "examples" / "short-dialogue.jsonl"


class Counted:
    """The auto-replying endpoint, counting the requests it answered."""

    def __init__(self, latency: float, encoder):
        self.requests = 0
        lock = threading.Lock()

        def count(text: str) -> int:
            with lock:
                self.requests += 1  # called twice per request (prompt, reply)
            return encoder.count_tokens(text)

        self.server = serve(latency, count)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        return self.requests // 2

    def client(self) -> LLMClient:
        return LLMClient(LLMSettings(base_url=self.url, model="auto"))


@pytest.fixture
def auto(encoder):
    llm = Counted(0.0, encoder)
    yield llm
    llm.server.shutdown()


def conv26(sessions=(1, 2)) -> list[InputTurn]:
    sample = ev.load(ev.data_dir() / "locomo10.json")[0]
    return [t for t in locomo_turns(sample, None) if t.session in sessions]


def boundaries(store, memory_id: str) -> list[list[str]]:
    return [s["turn_ids"] for s in api.Memory(memory_id, store=store).export()["scenes"]]


def calls(client: LLMClient) -> int:
    return sum(u.calls for u in client.ledger.values())


# -- add, and recall before any build ------------------------------------------------------

def test_added_turns_are_recallable_right_after_add(store, encoder, new_id):
    memory_id = new_id("live-add")
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    assert not memory.exists()   # a live memory appears with its first add
    report = memory.add([{"speaker": "Ana", "text": "My colleague Tom is allergic to shellfish.",
                          "time": "2024-05-01T12:00:00"},
                         {"speaker": "Ben", "text": "Good to know before the team dinner.",
                          "time": "2024-05-01T12:01:00"}])
    assert report.created and report.added == ["T1", "T2"] and report.skipped == 0 and memory.exists()
    got = memory.recall("Is anyone allergic to seafood?")
    assert got.scenes == [] and got.items == []
    assert [t.id for t in got.recent][0] == "T1"
    first = got.recent[0]
    assert first.via[0] == "recent" and "dense" in first.via and first.text.startswith("My colleague Tom")
    assert first.speaker == "Ana" and first.time == "2024-05-01T12:00:00"
    assert "Recent conversation" in memory.evidence(got) and "allergic to shellfish" in memory.evidence(got)
    assert memory.recall("Is anyone allergic to seafood?", without=["recent"]).recent == []
    assert got.to_json()["recent"][0]["id"] == "T1"
    stats = memory.stats()
    assert (stats["turns"], stats["pending_turns"], stats["scenes"]) == (2, 2, 0)


def test_add_skips_what_it_holds_gives_unique_ids_and_checks_every_turn(store, encoder, new_id):
    memory_id = new_id("live-ids")
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    memory.add([{"speaker": "Ana", "text": "hello", "time": "2024-01-01T10:00:00"},
                {"id": "T3", "speaker": "Ben", "text": "an id of the caller's"}])
    again = memory.add([{"speaker": "Ana", "text": "hello", "time": "2024-01-01T10:00:00"},   # re-sent
                        {"speaker": "Ana", "text": "hello", "time": "2024-01-01T10:05:00"},   # said again
                        {"speaker": "Ben", "text": "no id"}])
    assert again.skipped == 1 and again.added == ["T4", "T5"]  # T3 is the caller's: the next free id
    before = memory.export()
    with pytest.raises(ValidationError, match=r'turns\[1\]: "text" is missing or empty'):
        memory.add([{"speaker": "Ana", "text": "fine"}, {"speaker": "Ben", "text": "  "}])
    with pytest.raises(ValidationError, match=r'turns\[0\]: "time" .* is not an ISO 8601'):
        memory.add([{"speaker": "Ana", "text": "fine", "time": "yesterday"}])
    assert memory.export() == before  # nothing of a refused add was written
    other = api.Memory(memory_id, store=store, encoder=get_encoder(f"fake:{encoder.dim}"))
    with pytest.raises(EncoderMismatch, match="was built with encoder"):
        other.add([{"speaker": "Ana", "text": "another encoder's vector"}])
    assert memory.export() == before
    assert [t["id"] for t in before["turns"]] == ["T1", "T3", "T4", "T5"]


def test_concurrent_adds_write_every_turn_once_in_one_order(store, encoder, new_id):
    memory_id = new_id("live-threads")
    errors: list[BaseException] = []

    def writer(who: str) -> None:
        try:
            with api.Memory(memory_id, settings=store.settings, encoder=encoder) as memory:
                for n in range(10):
                    memory.add([{"speaker": who, "text": f"{who} says {n}"}])
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in ("Ana", "Ben", "Cy")]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    turns = api.Memory(memory_id, store=store).export()["turns"]
    assert len(turns) == 30 and len({t["id"] for t in turns}) == 30
    for who in ("Ana", "Ben", "Cy"):  # each writer's turns in the order it added them
        assert [t["text"] for t in turns if t["speaker"] == who] == [f"{who} says {n}" for n in range(10)]


# -- replays reach the batch's scenes --------------------------------------------------------

@pytest.mark.parametrize("conversation", ["short-dialogue", "conv-26 sessions 1-2"])
@pytest.mark.parametrize("chunk", [1, 2])
def test_replay_a_turn_or_an_exchange_at_a_time_matches_a_batch_ingest(store, encoder, new_id, auto,
                                                                      conversation, chunk):
    turns = read_conversation(DIALOGUE) if conversation == "short-dialogue" else conv26()
    batch_llm = auto.client()
    batch = new_id("live-batch")
    api.ingest(batch, turns, store=store, encoder=encoder, llm=batch_llm)
    live_llm = auto.client()
    live = new_id("live-replay")
    memory = api.Memory(live, store=store, encoder=encoder)
    for start in range(0, len(turns), chunk):
        memory.add(turns[start:start + chunk])
        memory.build(llm=live_llm)
    assert memory.stats()["pending_turns"] > 0  # the open scene waits for its event to close
    report = memory.build(flush=True, llm=live_llm)
    assert report.pending_turns == 0 and memory.stats()["pending_turns"] == 0
    assert boundaries(store, live) == boundaries(store, batch)
    assert calls(live_llm) <= 1.2 * calls(batch_llm), (calls(live_llm), calls(batch_llm))
    assert batch_llm.ledger["segment"].calls == live_llm.ledger["segment"].calls  # the same windows
    assert memory.stats()["personas"] == api.Memory(batch, store=store).stats()["personas"]


# -- two processes, a killed builder, recalls during builds -----------------------------------

def _env(url: str) -> dict:
    return {**os.environ, "TMEM_LLM_BASE_URL": url, "TMEM_LLM_MODEL": "auto", "TMEM_LLM_CACHE": "off"}


def test_two_processes_adding_and_building_one_memory_equal_a_serial_run(store, encoder, new_id, tmp_path):
    llm = Counted(0.02, encoder)
    turns = conv26(sessions=(1,))
    path = tmp_path / "turns.jsonl"
    path.write_text("".join(json.dumps({"id": t.id, "speaker": t.speaker, "text": t.text, "time": t.time,
                                        "session": t.session}) + "\n" for t in turns))
    try:
        serial = new_id("live-serial")
        api.ingest(serial, turns, store=store, encoder=encoder, llm=llm.client())
        for attempt in range(3):
            memory_id = new_id(f"live-two-{attempt}")
            procs = [subprocess.Popen([sys.executable, "-m", "tests.fixtures.live_replay", memory_id, str(path),
                                       str(chunk)], cwd=ROOT, env=_env(llm.url), stderr=subprocess.PIPE,
                                      text=True) for chunk in (2, 3)]
            outcomes = [(p.wait(timeout=600), p.stderr.read()) for p in procs]
            assert [code for code, _ in outcomes] == [0, 0], outcomes
            got = api.Memory(memory_id, store=store).export()
            assert [t["id"] for t in got["turns"]] == [t.id for t in turns]  # every turn once, in order
            assert boundaries(store, memory_id) == boundaries(store, serial)
            assert api.Memory(memory_id, store=store).stats()["pending_turns"] == 0
            assert_statistics_exact(store, memory_id)   # adds and builds from two processes: exact statistics
    finally:
        llm.server.shutdown()


def test_a_builder_killed_mid_build_loses_nothing_and_the_next_build_finishes(store, encoder, new_id, tmp_path):
    llm = Counted(0.3, encoder)
    turns = read_conversation(DIALOGUE)
    try:
        reference = new_id("live-kill-ref")
        api.ingest(reference, turns, store=store, encoder=encoder, llm=llm.client())
        memory_id = new_id("live-kill")
        api.Memory(memory_id, store=store, encoder=encoder).add(turns)
        before = llm.calls
        proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "build", memory_id, "--flush"], cwd=ROOT,
                                env=_env(llm.url), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while llm.calls < before + 3 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, "the build finished before it could be killed"
        stats = api.Memory(memory_id, store=store).stats()
        assert (stats["turns"], stats["pending_turns"], stats["scenes"]) == (len(turns), len(turns), 0)
        lease = store.run("lease/holder", memory_id=memory_id)
        assert lease and lease[0]["holder"].startswith("build (pid")  # left behind by the killed builder
        report = api.Memory(memory_id, store=store, encoder=encoder).build(llm=llm.client(), wait_s=0)
        assert report.pending_turns == 0  # its flush was recorded: the next build completes it
        assert boundaries(store, memory_id) == boundaries(store, reference)
        assert store.run("lease/holder", memory_id=memory_id) == []
    finally:
        llm.server.shutdown()


def test_recalls_during_builds_never_fail_or_see_half_a_scene(store, encoder, new_id):
    llm = Counted(0.01, encoder)
    turns = conv26(sessions=(1,))
    memory_id = new_id("live-read")
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    memory.add(turns[:2])
    stop, seen, errors = threading.Event(), [], []

    def reader() -> None:
        with api.Memory(memory_id, settings=store.settings, encoder=encoder) as mine:
            while not stop.is_set():
                try:
                    got = mine.recall("What did Caroline go to?")
                except BaseException as exc:  # noqa: BLE001 - reported below
                    errors.append(exc)
                    return
                held = {t["id"] for s in got.scenes for t in s.turns}
                assert all(s.turns and s.title for s in got.scenes), "a scene without its turns or card"
                assert not held & {t.id for t in got.recent}, "a turn both in a scene and pending"
                seen.append((len(got.scenes), len(got.recent)))

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        client = llm.client()
        for start in range(2, len(turns), 2):
            memory.add(turns[start:start + 2])
            memory.build(llm=client)
        memory.build(flush=True, llm=client)
        time.sleep(0.2)
    finally:
        stop.set()
        thread.join()
        llm.server.shutdown()
    assert errors == []
    assert any(scenes == 0 for scenes, _ in seen) and seen[-1][0] > 0  # before the first scene, and after


def test_cli_add_build_and_worker(store, encoder, new_id, auto, tmp_path):
    memory_id = new_id("live-cli")
    env = _env(auto.url)

    def tmem(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "tmem_graph.cli", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)

    one = tmem("add", memory_id, "--speaker", "Ana", "--text", "I adopted a cat named Miso.", "--json")
    assert one.returncode == 0, one.stderr
    assert json.loads(one.stdout)["added"] == ["T1"]
    recalled = json.loads(tmem("recall", memory_id, "What is the name of Ana's cat?", "--json").stdout)
    assert recalled["recent"][0]["text"] == "I adopted a cat named Miso."
    assert tmem("add", memory_id, str(DIALOGUE)).stdout.strip() == f"{memory_id}: +8 turns (0 already there)"
    bad = tmem("add", memory_id, "--speaker", "Ana")
    assert bad.returncode == 2 and "needs both --speaker and --text" in bad.stderr
    wrong = tmem("add", memory_id, "--speaker", "Ana", "--text", "x", "--time", "soon")
    assert wrong.returncode == 1 and "is not an ISO 8601" in wrong.stderr and "Traceback" not in wrong.stderr
    api.Memory(memory_id, store=store).flush()   # asked here, done by the worker below
    worker = tmem("build", "--all")
    assert worker.returncode == 0, worker.stderr
    assert f"{memory_id}: +" in worker.stdout
    assert api.Memory(memory_id, store=store).stats()["pending_turns"] == 0
    stats = json.loads(tmem("stats", memory_id, "--json").stdout)
    assert stats["scenes"] >= 1 and stats["pending_turns"] == 0


def test_pending_turns_survive_export_and_import(store, encoder, new_id):
    source = new_id("live-export")
    memory = api.Memory(source, store=store, encoder=encoder)
    memory.add([{"speaker": "Ana", "text": "My passport expires in March.", "time": "2024-02-01T09:00:00"}])
    doc = memory.export()
    assert doc["turns"][0]["id"] == "T1" and doc["scenes"] == []   # a turn no scene holds is valid
    doc["memory_id"] = copy = new_id("live-import")
    imported, _ = api.import_memory(doc, store=store, encoder=encoder)
    assert imported.stats()["pending_turns"] == 1
    assert [t.id for t in imported.recall("When does the passport expire?").recent] == ["T1"]
    imported.add([{"speaker": "Ben", "text": "Renew it soon."}])
    assert [t["id"] for t in imported.export()["turns"]] == ["T1", "T2"]
    assert copy != source


def test_ids_given_to_turns_without_one_never_collide(store, encoder, new_id):
    memory = api.Memory(new_id("live-collide"), store=store, encoder=encoder)
    first = memory.add([{"speaker": "Ana", "text": "no id"}, {"id": "T1", "speaker": "Ben", "text": "T1 is mine"}])
    assert first.added == ["T2", "T1"] and first.skipped == 0   # the caller's T1 is not taken for the other
    memory.add([{"id": "T4", "speaker": "Ana", "text": "ids past the next seq"},
                {"id": "T5", "speaker": "Ben", "text": "and one more"}])
    later = memory.add([{"speaker": "Ana", "text": "without an id again"}])
    assert later.added == ["T6"]   # T4 and T5 are held: the next free one
    assert len({t["id"] for t in memory.export()["turns"]}) == 5


def test_a_flush_covers_the_turns_added_before_it_and_the_worker_keeps_it_there(store, encoder, new_id, auto):
    from tmem_graph.construct.worker import BuildWorker

    memory = api.Memory(new_id("live-flush"), store=store, encoder=encoder)
    turns = read_conversation(DIALOGUE)
    memory.add(turns[:4])
    memory.flush()                     # a flush of the first four turns ...
    memory.add(turns[4:7])             # ... not of the three added after it
    worker = BuildWorker(store, auto.client(), encoder)
    while memory.id not in {r.memory_id for r in worker.run_once().built}:
        pass
    assert boundaries(store, memory.id) == [[t.id for t in turns[:4]]]
    assert memory.stats()["pending_turns"] == 3
    assert memory.id not in {r.memory_id for r in worker.run_once().built}  # nothing due now
    empty = api.Memory(new_id("live-flush-empty"), store=store, encoder=encoder)
    empty.add(turns[:1])
    empty.build(flush=True, llm=auto.client())
    empty.flush()                      # nothing pending: the flush is done by the next pass ...
    worker.run_once()
    empty.add(turns[1:3])              # ... so turns added later are not closed by it
    worker.run_once()
    assert empty.stats()["pending_turns"] == 2


def test_a_worker_skips_a_memory_whose_build_fails_and_builds_the_others(store, encoder, new_id, auto,
                                                                        monkeypatch):
    from tmem_graph.construct.worker import BuildWorker
    from tmem_graph.errors import LLMError

    turns = read_conversation(DIALOGUE)
    failing, fine = new_id("live-w-a"), new_id("live-w-b")
    for m in (failing, fine):
        api.Memory(m, store=store, encoder=encoder).add(turns)
        api.Memory(m, store=store, encoder=encoder).flush()
    worker = BuildWorker(store, auto.client(), encoder)
    real = worker.builder.build

    def build(memory_id, flush=False):
        if memory_id == failing:
            raise LLMError("the endpoint is down")
        return real(memory_id, flush=flush)

    monkeypatch.setattr(worker.builder, "build", build)
    done = worker.run_once()
    assert failing in done.skipped and fine in {r.memory_id for r in done.built}
    assert api.Memory(fine, store=store).stats()["pending_turns"] == 0


def test_a_speaker_added_during_a_build_is_kept(store, encoder, new_id, auto):
    turns = read_conversation(DIALOGUE)
    memory_id = new_id("live-speakers")
    memory = api.Memory(memory_id, store=store, encoder=encoder)
    memory.add(turns)
    other = api.Memory(memory_id, store=store, encoder=encoder)

    def meanwhile(stage, done, total):
        if stage == "scene" and done == 0:
            other.add([{"speaker": "Zed", "text": "I join the chat while it is being built."}])

    memory.build(flush=True, llm=auto.client(), progress=meanwhile)
    assert store.memory(memory_id)["speakers"] == ["Ana", "Ben", "Zed"]
    assert memory.stats()["pending_turns"] == 1   # Zed's turn came after the flush


def test_an_add_during_a_drop_runs_wholly_after_it(store, encoder, new_id):
    from tests.integration.conftest import node_count
    from tmem_graph.store.graph import DELETE_QUERIES

    memory_id = new_id("live-drop")
    api.Memory(memory_id, store=store, encoder=encoder).add([{"speaker": "Ana", "text": "before the drop"}])
    result: list = []
    with store.transaction() as tx:   # a delete in one transaction, the memory's node locked first
        store.tx_run(tx, "live/memory_hold", memory_id=memory_id)
        for name in DELETE_QUERIES:
            while store.tx_run(tx, name, memory_id=memory_id, limit=500)[0]["deleted"]:
                pass
        adder = threading.Thread(target=lambda: result.append(
            api.Memory(memory_id, store=store, encoder=encoder).add([{"speaker": "Ben", "text": "during it"}])))
        adder.start()
        time.sleep(0.5)
        assert adder.is_alive()   # held by the drop's lock on the memory's node
    adder.join(timeout=30)
    assert result and result[0].created   # the add made the memory anew, after the drop
    assert [t["text"] for t in api.Memory(memory_id, store=store).export()["turns"]] == ["during it"]
    assert node_count(store, memory_id) == 2   # the Memory node and its one turn: nothing orphaned


def test_a_schema_from_before_the_live_path_asks_for_schema_apply_to_write_not_to_recall(store, encoder, new_id):
    from tmem_graph.errors import SchemaError

    memory = api.Memory(new_id("live-schema"), store=store, encoder=encoder)
    memory.add([{"speaker": "Ana", "text": "hello"}])
    store.run("repair/drop_turn_search")
    with store.session("WRITE") as session:  # as on a database that never had it: no plan remembers the index
        session.run("CALL db.clearQueryCaches()").consume()
    try:
        with api.Memory(memory.id, settings=store.settings, encoder=encoder) as fresh:  # a new process's view
            assert [t.id for t in fresh.recall("hello").recent] == ["T1"]   # recall answers without it (rankings_exact)
            with pytest.raises(SchemaError, match=r"turn_search.*tmem schema apply"):
                fresh.add([{"speaker": "Ana", "text": "again"}])
    finally:
        store.apply_schema(encoder.dim)
    assert [t.id for t in memory.recall("hello").recent] == ["T1"]


def test_an_add_and_a_build_that_neo4j_rolls_back_run_again(store, encoder, new_id, auto, monkeypatch):
    """A deadlock between an add and a build (seen with two processes on a loaded machine):
    Neo4j rolls one transaction back; the add or the build's write runs again, whole, once."""
    from tmem_graph.errors import RolledBack

    real = store.tx_run
    failed = []

    def deadlock_once(tx, name, **params):
        if name in ("live/turns_add", "live/build_done") and name not in failed:
            failed.append(name)
            raise RolledBack(f"Neo4j rolled back {name} (a deadlock, simulated)")
        return real(tx, name, **params)

    monkeypatch.setattr(store, "tx_run", deadlock_once)
    memory = api.Memory(new_id("live-deadlock"), store=store, encoder=encoder)
    turns = read_conversation(DIALOGUE)
    report = memory.add(turns[:4])
    assert report.added == [t.id for t in turns[:4]] and report.created
    memory.build(flush=True, llm=auto.client())
    assert failed == ["live/turns_add", "live/build_done"]   # each failed once, then ran whole
    assert [t["id"] for t in memory.export()["turns"]] == [t.id for t in turns[:4]]
    assert boundaries(store, memory.id) == [[t.id for t in turns[:4]]] and memory.stats()["pending_turns"] == 0
