"""What `tmem serve` and `tmem mcp` do, whatever the protocol: one warm process (one driver,
the encoder loaded once, one LLM client opened on first use, a background build worker),
and access rules that never reveal a memory the caller may not see.

The HTTP app (`http.py`) and the MCP tools (`mcp.py`) are thin layers over `Service`; every
call names its caller (a `Scope`: the token's patterns and whether it may write) and every
memory id goes through `Service.memory`, which answers "no memory" alike for a memory that
does not exist and for one outside the caller's patterns.
"""

from __future__ import annotations

import logging
import threading
from contextlib import ExitStack
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any, Iterable

from ..api import Memory, import_memory, list_memories
from ..config import LLMSettings, RetrievalSettings, Settings
from ..construct.worker import BuildWorker, due_memories
from ..encode import get_encoder
from ..errors import ConfigError, Forbidden, MemoryExists, MemoryNotFound, ServiceBusy, TmemError, UsageError
from ..format import check_memory_id
from ..llm.factory import open_llm
from ..store import Store
from ..store.lease import what_of
from .access import Access, Scope

log = logging.getLogger(__name__)

MAX_K = 50           # the largest budget a service recall accepts (responses stay small)
MCP_MAX_K = 20       # ... and an MCP one (an agent's context is smaller still)
MAX_TOKENS = 16_000  # the largest evidence budget a service recall packs to
MCP_MAX_TOKENS = 8_000
LIST_DEFAULT = 100   # memories per page of a listing, unless the caller asks (at most LIST_MAX)
LIST_MAX = 1000
OBJECTS_DEFAULT = 50  # a memory's turns, scenes or items per page (at most objects.MAX_LIMIT)
RECALLED_MAX = 10_000  # memory headers kept for recalls (Service._recalled)
LLM_CALLS = 4        # asks and builds a service runs at once (more get ServiceBusy: 503)


@dataclass
class Budgets:
    """A recall's budgets as a caller may set them, bounded by `MAX_K` (`budget_tokens`, the
    evidence budget the packer fills, by `MAX_TOKENS`)."""
    k_scenes: int | None = None
    k_items: int | None = None
    k_recent: int | None = None
    budget_tokens: int | None = None

    def settings(self, base: RetrievalSettings, cap: int, token_cap: int = MAX_TOKENS) -> RetrievalSettings:
        changes = {k: v for k, v in (("k_scenes", self.k_scenes), ("k_items", self.k_items),
                                     ("k_recent", self.k_recent)) if v is not None}
        for name, value in changes.items():
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= cap:
                raise UsageError(f"{name} {value!r}: must be an integer from 0 to {cap}")
        if self.budget_tokens is not None:
            value = self.budget_tokens
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= token_cap:
                raise UsageError(f"budget_tokens {value!r}: must be an integer from 1 to {token_cap}")
            changes["budget_tokens"] = value
        return replace(base, **changes)


class Service:
    """One warm process serving many memories of one database."""

    def __init__(self, settings: Settings, access: Access, worker: bool = True, flush_after_s: float | None = None,
                 poll_s: float = 2.0):
        self.settings, self.access = settings, access
        self._stack = ExitStack()
        self.store = self._stack.enter_context(Store(settings))
        self.encoder = get_encoder(settings.encoder)
        self.encoder.encode(["warm up"])   # load the model now, not on the first request
        self.store.check()
        self._llm = None
        self._llm_lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()   # set to end the worker's pause early (a stop, the database back)
        self._llm_calls = threading.BoundedSemaphore(LLM_CALLS)
        self._recalled: dict[str, dict] = {}   # memory id -> its header, read at the version a recall read
        self.worker_state = "off" if not worker else "starting"
        self._worker: threading.Thread | None = None
        if worker:
            self._worker = threading.Thread(target=self._work, args=(flush_after_s, poll_s), name="tmem-build",
                                            daemon=True)

    def start(self) -> None:
        if self._worker is not None and not self._worker.is_alive():
            self._worker.start()

    def close(self) -> None:
        """Stop the worker, then close the store and the LLM. A build still running after 30 s
        is left to end with the process (its lease is taken over at once on this host; it
        wrote nothing unless it committed)."""
        self._stop.set()
        self._wake.set()
        if self._worker is not None and self._worker.is_alive():
            self._worker.join(timeout=30)
            if self._worker.is_alive():
                log.warning("a build was still running at shutdown; it ends with the process")
                return
        self._stack.close()

    def health(self) -> dict:
        """Whether the database answers now (not cached), and the worker's state."""
        try:
            self.store.ping()
            if self.worker_state == "retrying after an error":
                self._wake.set()   # the database answers again: the worker need not sleep out its pause
            return {"ok": True, "worker": self.worker_state}
        except TmemError as exc:
            log.warning("health: %s", exc)
            return {"ok": False, "error": "the database is unavailable", "worker": self.worker_state}

    @contextmanager
    def _llm_call(self):
        """At most LLM_CALLS asks and builds at once: the others are refused, not queued."""
        if not self._llm_calls.acquire(blocking=False):
            raise ServiceBusy(f"the server runs {LLM_CALLS} LLM calls already; try again shortly")
        try:
            yield
        finally:
            self._llm_calls.release()

    # -- the LLM, opened once, on first use ------------------------------------------------
    @property
    def llm(self):
        with self._llm_lock:
            if self._llm is None:
                self._llm = self._stack.enter_context(open_llm())
            return self._llm

    def _work(self, flush_after_s: float | None, poll_s: float) -> None:
        """The background builder of the memories this server may see: it looks for work
        every `poll_s` (a cheap query) and opens the LLM only when there is some. Failures
        are logged (once each in a row) and retried with a growing pause, up to a minute (cut
        short when `health` finds the database answering); a pass without an error sets the
        state back to running and the pause to `poll_s`. Only a missing LLM configuration stops it (`worker_state` says so in /health)."""
        worker: BuildWorker | None = None
        pause, last = poll_s, None
        self.worker_state = "running"
        while not self._stop.is_set():
            try:
                due = [r for r in due_memories(self.store, flush_after_s) if self.access.allows(r["memory_id"])]
                built = []
                if due:
                    worker = worker or BuildWorker(self.store, self.llm, self.encoder, flush_after_s,
                                                   allow=self.access.allows)
                    built = worker.run_once().built
                    for report in built:
                        log.info("built %s: +%d scenes, %d turns pending", report.memory_id, report.new_scenes,
                                 report.pending_turns)
                        self._preload(report.memory_id)
                pause, last, self.worker_state = poll_s, None, "running"   # a pass without an error
                if built:
                    continue
            except ConfigError as exc:  # no LLM configured: the service serves, nothing is built
                log.error("the build worker stops: %s", exc)
                self.worker_state = f"stopped: {exc}"
                return
            except Exception as exc:  # noqa: BLE001 - the worker outlives any one failure
                if str(exc) != last:
                    log.warning("the build worker: %s", exc, exc_info=not isinstance(exc, TmemError))
                last, self.worker_state = str(exc), "retrying after an error"
                pause = min(60.0, pause * 2)
            self._wake.wait(pause)
            self._wake.clear()

    def _preload(self, memory_id: str) -> None:
        """Load a memory just built into the recall cache, so that its next recall does not pay
        for it (a quarter of a second on a LoCoMo-sized memory); a failure only costs that."""
        try:
            Memory(memory_id, store=self.store, encoder=self.encoder).preload()
        except TmemError as exc:
            log.info("preloading %s after its build: %s", memory_id, exc)

    # -- memories: each call as one caller may make it --------------------------------------
    def memory(self, caller: Scope, memory_id: str, must_exist: bool = True, write: bool = False,
               header: dict | None = None) -> Memory:
        """The Memory for `memory_id`: "no memory" alike when absent and when outside the caller's
        patterns; a change asked by a read-only caller is refused (Forbidden) whether or not it exists.
        Its encoder is checked against `header` when given, else against the header read here."""
        check_memory_id(memory_id)
        if not caller.allows(memory_id):
            raise MemoryNotFound(f"no memory {memory_id!r}")
        if write and not caller.write:
            raise Forbidden(f"read-only: this token may read memory {memory_id!r} but not change it")
        if must_exist and header is None:
            header = self._header(memory_id)
        return Memory(memory_id, store=self.store, encoder=self.encoder, header=header)

    def _header(self, memory_id: str) -> dict:
        try:
            return self.store.memory(memory_id)
        except MemoryNotFound:
            raise MemoryNotFound(f"no memory {memory_id!r}") from None

    def list_memories(self, caller: Scope, after: str | None = None, limit: int = LIST_DEFAULT) -> dict[str, Any]:
        """A page of the memories the caller may use, in id order: {"memories", "next"} (the
        `after` of the next page; null on the last). Memories outside its scope are not counted."""
        rows = list_memories(store=self.store, after=after, limit=limit + 1, keep=caller.allows)
        return {"memories": rows[:limit], "next": rows[limit - 1]["id"] if len(rows) > limit else None}

    def list_objects(self, caller: Scope, memory_id: str, kind: str, after: str | None = None,
                     limit: int = OBJECTS_DEFAULT) -> dict:
        return self.memory(caller, memory_id).list(kind, after, limit)

    def get_object(self, caller: Scope, memory_id: str, kind: str, object_id: str) -> dict:
        return self.memory(caller, memory_id).get(kind, object_id)

    def delete_object(self, caller: Scope, memory_id: str, kind: str, object_id: str) -> dict:
        return self.memory(caller, memory_id, write=True).delete(kind, object_id, by=self._by(caller))

    def update_object(self, caller: Scope, memory_id: str, kind: str, object_id: str, text: str) -> dict:
        """Correct an item's text; its triggers are rewritten with the service's LLM when one is
        configured (one of the LLM_CALLS), else the item is marked stale."""
        memory = self.memory(caller, memory_id, write=True)
        if not LLMSettings.from_env().model:
            return memory.update(kind, object_id, text, by=self._by(caller))
        with self._llm_call():
            return memory.update(kind, object_id, text, by=self._by(caller), llm=self.llm)

    def history(self, caller: Scope, memory_id: str, kind: str, object_id: str) -> dict:
        """The object's history, each edit's `by` as `caller` may see it (`_shown`)."""
        found = self.memory(caller, memory_id).history(kind, object_id)
        for change in found["changes"]:
            change["by"] = self._shown(caller, change["by"])
        return found

    @staticmethod
    def _by(caller: Scope) -> str:
        """Who asked, for an edit's history: the caller's token name (never its secret)."""
        return f"token:{caller.name}" if caller.name else "service"

    @classmethod
    def _shown(cls, caller: Scope, by: str | None) -> str | None:
        """An edit's `by` as `caller` sees it: its own token's edits by name, another token's as
        `another token`, a command-line user's as `cli` (no login); `service`, `build` as kept."""
        if by == cls._by(caller) or not isinstance(by, str):
            return by
        if by.startswith("token:"):
            return "another token"
        return "cli" if by.startswith("cli:") else by

    def stats(self, caller: Scope, memory_id: str) -> dict:
        """The memory's stats; the writer holding it by what it does (no process id or host)."""
        found = self.memory(caller, memory_id).stats()
        return {**found, "writer": found["writer"] and what_of(found["writer"])}

    def add(self, caller: Scope, memory_id: str, turns: list) -> dict:
        report = self.memory(caller, memory_id, must_exist=False, write=True).add(turns)
        return {"memory_id": memory_id, "added": report.added, "skipped": report.skipped, "created": report.created}

    def build(self, caller: Scope, memory_id: str, flush: bool = False) -> dict:
        memory = self.memory(caller, memory_id, write=True)
        with self._llm_call():
            report = memory.build(flush=flush, llm=self.llm, wait_s=5.0)
        return {"memory_id": memory_id, "new_scenes": report.new_scenes, "new_items": report.new_items,
                "new_topics": report.new_topics, "pending_turns": report.pending_turns}

    def flush(self, caller: Scope, memory_id: str) -> dict:
        self.memory(caller, memory_id, write=True).flush()
        return {"memory_id": memory_id, "flush": "asked: the background builder closes the open scene"}

    def recall(self, caller: Scope, memory_id: str, query: str, speaker: str | None = None,
               without: Iterable[str] = (), budgets: Budgets | None = None, cap: int = MAX_K,
               token_cap: int = MAX_TOKENS, only: dict | None = None) -> dict:
        """`only`: the recall filters (speakers, since, until: Memory.recall), unset ones None."""
        # the header an earlier recall found at the version it read: not read again while the
        # recalls read that version (any write of the memory, or a memory made anew, is another)
        known = self._recalled.get(memory_id)
        memory = self.memory(caller, memory_id, header=known)
        settings = (budgets or Budgets()).settings(self.settings.retrieval, cap, token_cap)
        try:
            result = memory.recall(query, speaker=speaker, without=list(without), settings=settings,
                                   **(only or {}))
        except MemoryNotFound:   # dropped since its header was read
            self._recalled.pop(memory_id, None)
            raise MemoryNotFound(f"no memory {memory_id!r}") from None
        header = memory.header
        if known is not None and known["version"] != result.version:   # written since: read, checked again
            header = self._header(memory_id)
            self.memory(caller, memory_id, header=header).encoder  # noqa: B018 - raises EncoderMismatch
        if header["version"] == result.version:
            if len(self._recalled) >= RECALLED_MAX:   # bounded, whatever the number of memories
                self._recalled.clear()
            self._recalled[memory_id] = header
        else:
            self._recalled.pop(memory_id, None)
        return result.to_json()

    def ask(self, caller: Scope, memory_id: str, question: str, speaker: str | None = None,
            without: Iterable[str] = (), only: dict | None = None) -> dict:
        memory = self.memory(caller, memory_id)
        with self._llm_call():
            return memory.ask(question, speaker=speaker, without=list(without), llm=self.llm, **(only or {}))

    def export(self, caller: Scope, memory_id: str) -> dict:
        return self.memory(caller, memory_id).export()

    def import_(self, caller: Scope, memory_id: str, document: dict, replace_existing: bool = False) -> dict:
        if not isinstance(document, dict) or document.get("memory_id") != memory_id:
            raise UsageError(f"the document's memory_id must be {memory_id!r}, the memory of the request")
        self.memory(caller, memory_id, must_exist=False, write=True)  # the access rule, before anything is read
        try:
            memory, warnings = import_memory(document, replace=replace_existing, store=self.store,
                                             encoder=self.encoder)
        except MemoryExists:
            raise MemoryExists(f"memory {memory_id!r} already exists (PUT with ?replace=true to overwrite)") from None
        return {"memory_id": memory.id, "warnings": warnings, **self.store.counts(memory.pid)}

    def delete(self, caller: Scope, memory_id: str) -> dict:
        return {"memory_id": memory_id, "deleted_nodes": self.memory(caller, memory_id, write=True).drop()}
