"""One writer per memory: the write lease against the real Neo4j."""

import subprocess
import sys
import time

import pytest

from tmem_graph import api
from tmem_graph.errors import LeaseHeld, LeaseLost
from tmem_graph.store import WriteLease


def test_a_second_writer_waits_then_fails_naming_the_first(store, new_id):
    memory_id = new_id("lease")
    with WriteLease(store, memory_id, "ingest"):
        t0 = time.monotonic()
        with pytest.raises(LeaseHeld, match=r"is being written by ingest \(pid \d+ on .*\) since"):
            with WriteLease(store, memory_id, "import", wait_s=0.6, poll_s=0.1):
                pass
        assert time.monotonic() - t0 >= 0.6
    with WriteLease(store, memory_id, "import", wait_s=0):  # given back: the next writer takes it
        pass


def test_a_lapsed_lease_is_taken_over_and_its_old_holder_writes_nothing(store, new_id):
    memory_id = new_id("lease")
    first = WriteLease(store, memory_id, "ingest", ttl_s=1.0).__enter__()
    first._stop.set()  # a writer that stopped renewing (paused longer than the ttl)
    first._renewer.join()
    with pytest.raises(LeaseHeld):
        WriteLease(store, memory_id, "import", wait_s=0).__enter__()
    time.sleep(1.3)
    with WriteLease(store, memory_id, "import", wait_s=0):
        with pytest.raises(LeaseLost, match="nothing was written"):
            with store.transaction() as tx:
                first.check_in(tx)
                store.tx_run(tx, "store/memory_create", memory_id=memory_id, encoder="x", dim=1,
                             speakers=[], created_at="now")
        assert not store.exists(memory_id)
    first.__exit__(None, None, None)  # gives back nothing: the lease is no longer its own


def test_the_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(store, new_id):
    memory_id = new_id("lease")
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = WriteLease(store, memory_id, "ingest")
    stale.pid = int(dead.stdout)
    store.run("lease/acquire", memory_id=memory_id, token=stale.token, holder=stale.holder, host=stale.host,
              pid=stale.pid, ttl_ms=600_000)
    with WriteLease(store, memory_id, "ingest", wait_s=0) as lease:
        assert lease.token != stale.token


def test_import_replace_and_drop_take_the_lease(store, encoder, team_doc, new_id):
    team_doc["memory_id"] = new_id("lease-td")
    memory, _ = api.import_memory(team_doc, store=store, encoder=encoder)
    before = memory.export()
    with WriteLease(store, memory.id, "ingest"):
        with pytest.raises(LeaseHeld):
            api.import_memory({**team_doc, "personas": []}, store=store, encoder=encoder, replace=True)
        with pytest.raises(LeaseHeld):
            memory.drop()
    assert memory.export() == before
    assert memory.drop() > 0


def test_a_writer_learns_at_once_that_its_database_is_gone(settings, new_id):
    from tmem_graph.errors import StoreClosed
    from tmem_graph.store import Store

    lost = Store(settings)  # a connection of its own, closed below as a lost database would be
    lease = WriteLease(lost, new_id("lease"), "ingest", ttl_s=0.6).__enter__()
    lease.ensure()  # all well so far
    lost.close()
    deadline = time.monotonic() + 5
    while lease.trouble is None and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(StoreClosed):
        lease.ensure()
    lease.__exit__(None, None, None)  # gives up quietly; the lease lapses on the server


def test_a_writer_whose_lease_is_taken_over_learns_it_before_writing(store, new_id):
    memory_id = new_id("lease")
    first = WriteLease(store, memory_id, "ingest", ttl_s=0.6).__enter__()
    store.run("lease/release", memory_id=memory_id, token=first.token)  # as if lapsed and taken
    with WriteLease(store, memory_id, "import", wait_s=0):
        deadline = time.monotonic() + 5
        while first.trouble is None and time.monotonic() < deadline:
            time.sleep(0.05)
        with pytest.raises(LeaseLost, match="taken over"):
            first.ensure()
    first.__exit__(None, None, None)
