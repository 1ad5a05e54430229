"""One writer per memory: a write lease held in Neo4j.

Every writer of a memory (`ingest`, `import --replace`, `drop`) takes the memory's lease before
it reads what it will extend and keeps it until its write transaction has committed. A second
writer waits a bounded time, then fails with a message naming the holder; nothing it would
have written is written. The lease expires `ttl` seconds after its last renewal, and a thread
renews it while the writer works, so a killed writer's lease lapses and the next writer takes
it over; a writer on the same host whose process is gone is taken over at once (so a killed
`tmem ingest` can be re-run straight away). The write transaction itself checks, under a lock, that the lease is still its own,
so a writer that lost its lease (a pause longer than the ttl) writes nothing.

While its write transaction runs, the writer marks the lease `committing`, and the transaction
gives the memory a new version: a recall reads both before and after its queries and runs again
when either says the memory changed meanwhile (retrieve/cascade.py), so no reader sees a mix.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Iterator

from ..errors import LeaseHeld, LeaseLost, TmemError

DEFAULT_TTL_S = 60.0
STAGED = "#"   # "<name>#<token>": a memory's version staged by a replacement (no name holds '#')


def name_of(memory_id: str) -> str:
    """The memory's name, from its name or the id of one of its versions (store/memory_get)."""
    return memory_id.split(STAGED, 1)[0]


def staged_id(name: str) -> str:
    """A fresh id for a version of memory `name` that a replacement writes in batches."""
    return f"{name}{STAGED}{uuid.uuid4().hex[:12]}"


def _when(ms: int | None) -> str:
    if ms is None:
        return "?"
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="seconds")


def _alive(pid) -> bool:
    """Whether a process of this host with that id runs (a pid we cannot signal counts as alive)."""
    if not isinstance(pid, int) or pid <= 0:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def what_of(holder: str | None) -> str:
    """What a lease's holder does (`build`, `import`, ...), without its process id and host: what
    a service tells its callers of another writer ("another writer" when the lease was let go
    as it was read)."""
    return holder.split(" (pid ", 1)[0] if holder else "another writer"


def holder_gone(host, pid) -> bool:
    """Whether a lease's holder is a process of this host that no longer runs."""
    return host == socket.gethostname() and not _alive(pid)


class WriteLease:
    """`with WriteLease(store, memory_id, "ingest"):` holds the memory's lease for the block
    (`memory_id`: its name, or the id of one of its versions: `name_of`).

    `wait_s` bounds how long a second writer waits for the lease (polling every `poll_s`).
    """

    def __init__(self, store, memory_id: str, what: str, ttl_s: float = DEFAULT_TTL_S,
                 wait_s: float = 10.0, poll_s: float = 0.5):
        # a memory's lease is its name's: the same across the versions a replacement stages
        self.store, self.memory_id = store, name_of(memory_id)
        self.token = uuid.uuid4().hex
        self.host, self.pid = socket.gethostname(), os.getpid()
        self.holder = f"{what} (pid {self.pid} on {self.host})"
        self.ttl_ms = int(ttl_s * 1000)
        self.wait_s, self.poll_s = wait_s, poll_s
        self._stop = threading.Event()
        self._renewer: threading.Thread | None = None
        self.trouble: TmemError | None = None   # what the renewer found: the database lost, the lease taken

    def __enter__(self) -> "WriteLease":
        deadline = time.monotonic() + self.wait_s
        who = {"memory_id": self.memory_id, "token": self.token, "holder": self.holder, "host": self.host,
               "pid": self.pid, "ttl_ms": self.ttl_ms}
        while True:
            row = self.store.run("lease/acquire", **who)[0]
            if row["acquired"]:
                break
            if row["token"] is None:   # released as it was read (a deleted node reads as nulls): ask again
                continue
            if row["host"] == self.host and not _alive(row["pid"]):
                if self.store.run("lease/take_over", stale=row["token"], **who)[0]["acquired"]:
                    break
                continue
            if time.monotonic() >= deadline:
                tail = (f" since {_when(row['since'])} (its lease runs to {_when(row['expires_at'])} unless "
                        "renewed); try again when that writer has finished")
                raise LeaseHeld(f"memory {self.memory_id!r} is being written by {row['holder']}{tail}",
                                public=f"memory {self.memory_id!r} is being written by {what_of(row['holder'])}{tail}")
            time.sleep(self.poll_s)
        self._renewer = threading.Thread(target=self._renew, name="tmem-lease", daemon=True)
        self._renewer.start()
        return self

    def _renew(self) -> None:
        failures = 0
        while not self._stop.wait(self.ttl_ms / 3000):
            try:
                rows = self.store.run("lease/renew", memory_id=self.memory_id, token=self.token, ttl_ms=self.ttl_ms)
            except TmemError as exc:
                failures += 1
                if failures >= 2:  # twice in a row (40 s of a 60 s lease): `ensure` stops the work
                    self.trouble = exc
                continue
            if not rows:
                self.trouble = LeaseLost(f"memory {self.memory_id!r}: this writer's lease was taken over; "
                                         "nothing was written, run it again")
                return
            failures, self.trouble = 0, None

    def ensure(self) -> None:
        """Between steps of long work: raise at once what the renewer found (the database lost
        or the lease taken), instead of after all the work is done."""
        if self.trouble is not None:
            raise self.trouble

    def check_in(self, tx) -> None:
        """Inside the write transaction: raise LeaseLost unless the lease is still this writer's."""
        if not self.store.tx_run(tx, "lease/check", memory_id=self.memory_id, token=self.token,
                                 ttl_ms=self.ttl_ms)[0]["held"]:
            raise LeaseLost(f"memory {self.memory_id!r}: this writer's lease lapsed or was taken over "
                            "before its write; nothing was written, run it again")

    @contextmanager
    def committing(self) -> Iterator[None]:
        """Around the write transaction: readers of the memory see the lease marked while it
        commits, so a recall that overlaps the commit runs again instead of mixing versions."""
        self.store.run("lease/committing", memory_id=self.memory_id, token=self.token, on=True)
        try:
            yield
        finally:
            try:
                self.store.run("lease/committing", memory_id=self.memory_id, token=self.token, on=False)
            except TmemError:
                pass  # the mark lapses with the lease

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._renewer is not None:
            self._renewer.join()
        try:
            self.store.run("lease/release", memory_id=self.memory_id, token=self.token)
        except TmemError:
            pass  # the lease lapses on its own
