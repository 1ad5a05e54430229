"""A build worker: finds the memories whose build has work due (the queue is in Neo4j:
pending turns, flushes asked) and builds each under its write lease. Any number of workers,
in any number of processes or machines, may share one database: a memory another builder
holds is left to it (`LeaseHeld`) and looked at again on the next pass.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..encode import Encoder
from ..errors import DatabaseUnavailable, LeaseHeld, TmemError
from ..llm.client import LLMClient
from ..store import Store
from . import stages
from .pipeline import Builder, IngestReport, Progress

log = logging.getLogger(__name__)


@dataclass
class Pass:
    """What one pass over the due memories did."""
    built: list[IngestReport] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)      # held by another builder: left to it
    skipped: list[str] = field(default_factory=list)   # failed (another encoder's, dropped, its LLM failing)


def due_memories(store: Store, flush_after_s: float | None = None) -> list[dict]:
    """Memories with work due: [{memory_id, pending, unexamined, flush}]. With
    `flush_after_s`, a memory with no turn added for that long is due for a flush."""
    return store.run("live/due", window=stages.WINDOW,
                     idle_ms=None if flush_after_s is None else int(flush_after_s * 1000))


class BuildWorker:
    """Builds every due memory of one database with one LLM and encoder."""

    def __init__(self, store: Store, llm: LLMClient, encoder: Encoder, flush_after_s: float | None = None,
                 concurrency: int = 4, progress: Progress | None = None,
                 allow: Callable[[str], bool] | None = None):
        self.builder = Builder(store, llm, encoder, concurrency, progress)
        self.builder.lease_wait_s = 0.0   # a memory another builder holds is left to it
        self.store, self.flush_after_s = store, flush_after_s
        self.allow = allow or (lambda memory_id: True)   # the memories this worker may build
        self._warned: set[str] = set()   # memories a warning was logged for (once each)

    def run_once(self) -> Pass:
        """One pass: build each memory that is due now. A memory whose build fails (its LLM
        failing, another encoder's memory, dropped meanwhile) is skipped, with a warning the
        first time, and tried again on the next pass; the others are built all the same."""
        done = Pass()
        for row in due_memories(self.store, self.flush_after_s):
            m = row["memory_id"]
            if not self.allow(m):
                continue
            try:
                # a flush asked is recorded in the memory and done by any build; the worker asks
                # one itself only for a memory gone quiet
                done.built.append(self.builder.build(m, flush=row["idle"]))
                self._warned.discard(m)
            except LeaseHeld:
                done.busy.append(m)
            except DatabaseUnavailable:
                raise  # nothing can be built: the caller says so
            except TmemError as exc:
                if m not in self._warned:
                    log.warning("build worker: %s", exc)
                    self._warned.add(m)
                done.skipped.append(m)
        return done

    def passes(self, stop: threading.Event, poll_s: float | None = 2.0) -> Iterator[Pass]:
        """Pass after pass until `stop` is set, waiting `poll_s` after a pass that built
        nothing; with `poll_s` None, one pass only."""
        while True:
            done = self.run_once()
            yield done
            if poll_s is None or stop.is_set():
                return
            if not done.built:
                stop.wait(poll_s)
            if stop.is_set():
                return
