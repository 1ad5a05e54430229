"""The Python face of tmem-graph: open a memory, add turns, build, recall, import, export,
inspect, drop."""

from __future__ import annotations

import contextlib
import json
import time
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from .config import LLMSettings, RetrievalSettings, Settings
from .edits import delete_item, delete_turn, object_history, update_item
from .encode import Encoder, get_encoder, same_encoder
from .errors import (EncoderMismatch, LeaseHeld, MemoryBusy, MemoryNotFound, SchemaError, StoreClosed, TmemError,
                     UsageError, ValidationError)
from .format import MAX_TEXT_BYTES, check_memory_id, load_file, parse_document, to_document
from .model import MemoryDoc
from .objects import DEFAULT_LIMIT, get_object, kind_of, list_objects
from .retrieve.cascade import Cascade
from .retrieve.evidence import asks_when, compact_evidence, format_evidence, supporting_turns
from .retrieve.filters import TurnFilter
from .retrieve.pack import pack
from .retrieve.results import Recall
from .store import LIST_PAGE, Store, WriteLease
from .textio import text_problem
from .transfer import add_statistics, export_memory, import_memory as _import_memory

if TYPE_CHECKING:
    from .construct.inputs import InputTurn
    from .construct.live import AddReport
    from .construct.pipeline import IngestReport
    from .construct.worker import Pass
    from .llm.client import LLMClient


SWITCH_TRIES = 5   # runs of one operation on the versions of a memory that replacements keep switching


class Memory:
    """One memory in a Neo4j database, addressed by its id (its name).

    Its objects carry the name, or after a batched replacement the id of the version the
    replacement staged (`pid`, store/memory_get): read with the header, and read again when a
    replacement switches versions under an operation, which then runs again on the new one.

    A Memory made without a `store` opens its own and closes it in `close()` (or at the end of
    `with Memory(...) as memory:`); a store passed in belongs to the caller. A recall is two
    round trips on the store's driver from the calling thread (the first query's second half,
    when the recall is the process's only one, on a thread that ends with it).
    """

    def __init__(self, memory_id: str, settings: Settings | None = None, store: Store | None = None,
                 encoder: Encoder | None = None, header: dict | None = None):
        self.id = check_memory_id(memory_id)
        self._owns_store = store is None
        self.store = store or Store(settings or Settings.from_env())
        self.settings = self.store.settings
        self._encoder = encoder
        self._encoder_checked = False
        # the memory's header (`Store.memory`) as the caller has read it: the encoder is checked
        # against it instead of reading it again (a round trip less per service call)
        self.header = header

    def close(self) -> None:
        """Close the store if this Memory opened it."""
        if self._owns_store:
            self.store.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def encoder(self) -> Encoder:
        """The configured encoder, which must be the one this memory was built with."""
        if self._encoder is None:
            self._encoder = get_encoder(self.settings.encoder)
        if self._encoder_checked:
            return self._encoder
        header = self.header = self.header or self.store.memory(self.id)
        if not same_encoder(header["encoder"], self._encoder) or header["dim"] != self._encoder.dim:
            raise EncoderMismatch(
                f"memory {self.id!r} was built with encoder {header['encoder']!r} "
                f"({header['dim']}-d), not {self._encoder.name!r} ({self._encoder.dim}-d); "
                "set TMEM_ENCODER to the memory's encoder")
        self._encoder_checked = True
        return self._encoder

    @property
    def pid(self) -> str:
        """The id this memory's objects carry: its name, or a replacement's staged version's."""
        self.header = self.header or self.store.memory(self.id)
        return self.header["pid"]

    def _current(self, operation: Callable[[str], Any]) -> Any:
        """`operation(pid)`; when the memory is gone from under it, run again on the memory's
        current version if a replacement switched to another (else the memory is gone), up to
        SWITCH_TRIES runs."""
        pid = self.pid
        for _ in range(SWITCH_TRIES):
            try:
                return operation(pid)
            except MemoryNotFound as exc:   # or one of its objects
                self.header, self._encoder_checked = None, False
                try:
                    fresh = self.pid
                except MemoryNotFound:
                    raise MemoryNotFound(f"no memory {self.id!r} in {self.settings.uri}") from None
                if fresh == pid:
                    raise self._renamed(exc, pid) from None
                pid = fresh
            except TmemError as exc:
                raise self._renamed(exc, pid) from None
        raise MemoryBusy(f"memory {self.id!r} was replaced {SWITCH_TRIES} times while it was read; try again")

    def _renamed(self, exc: TmemError, pid: str) -> TmemError:
        """`exc`, its message naming the memory where it names the id of the memory's version."""
        if pid == self.id or repr(pid) not in str(exc) or isinstance(exc, ValidationError):
            return exc
        return type(exc)(str(exc).replace(repr(pid), repr(self.id)))

    def _named(self, out: dict) -> dict:
        """An operation's JSON object, with the memory's name."""
        out["memory_id"] = self.id
        return out

    def exists(self) -> bool:
        """Whether the memory is in the database (a live memory appears with its first add)."""
        return self.store.exists(self.id)

    def add(self, turns: "list[dict | InputTurn]") -> "AddReport":
        """Add turns as the conversation happens: checked, then written at once in one short
        transaction with their embeddings, recallable before any build (channel `recent`).
        The memory is created when absent. Turns already held (the same id, or without ids
        the same speaker, time and text) are skipped, so a re-sent exchange adds nothing.

        Each turn is a dict `{"speaker", "text", "time"?, "session"?, "id"?}` (the turn-list
        format of `tmem ingest`) or an `InputTurn`. Nothing is built: run `build()` (or a
        worker: `tmem build --all --watch`) for scenes, topics, items and triggers.
        """
        from .construct.inputs import turn_records
        from .construct.live import add_turns

        checked = turn_records(turns)
        encoder = self._encoder or get_encoder(self.settings.encoder)
        self._encoder = encoder
        return add_turns(self.store, encoder, self.id, checked)

    def build(self, flush: bool = False, llm: "LLMClient | None" = None, progress=None,
              wait_s: float = 10.0) -> "IngestReport":
        """Build what is due of the turns added so far, holding the memory's write lease: the
        scenes whose event has closed, with cards, topics, items, triggers and personas.
        `flush` closes every turn added so far into scenes (the end of a conversation). With
        no `llm`, the configured one (TMEM_LLM_* settings) is opened for the build. While
        another process builds the memory, this waits up to `wait_s`, then raises `LeaseHeld`."""
        from .construct.pipeline import Builder
        from .llm.factory import open_llm

        if llm is None:
            with open_llm() as client:
                return self.build(flush=flush, llm=client, progress=progress, wait_s=wait_s)
        builder = Builder(self.store, llm, self.encoder, progress=progress)
        builder.lease_wait_s = wait_s
        return builder.build(self.id, flush=flush)

    def flush(self) -> None:
        """Ask that every turn added so far be closed into scenes by the next build (of any
        process: `build()`, `tmem build`, a worker), without building here."""
        self.encoder  # noqa: B018 - the memory must exist, with this encoder

        def flush(pid: str) -> None:
            if not self.store.run("live/flush_request", memory_id=pid):
                raise MemoryNotFound(f"no memory {self.id!r} in {self.settings.uri}")

        self._current(flush)

    def recall(self, query: str, speaker: str | None = None, without: Iterable[str] = (),
               settings: RetrievalSettings | None = None, trace: bool = False,
               speakers: "Iterable[str] | str | None" = None, since: str | None = None,
               until: str | None = None) -> Recall:
        """Evidence for `query`: ranked scenes with their turns, items, and persona.

        `without` switches cascade components off (see `ABLATIONS`); `settings` overrides the
        budgets, the gate and the fusion for this call; `trace` keeps each layer's candidates
        in `Recall.trace` (for `tmem recall --trace` and benchmarks/recall_study.py). `speakers`, `since` and `until` filter the
        evidence to those speakers' turns and that time window (ISO 8601; docs/api.md, "Recall
        filters"); `speaker` is who asks (their persona), not a filter.
        """
        only = TurnFilter.of(speakers, since, until)
        if not isinstance(query, str) or not query.strip():
            raise UsageError("the query is empty")
        for what, value in (("the query", query), ("the speaker", speaker)):
            why = text_problem(value) if isinstance(value, str) else None
            if why:
                raise UsageError(f"{what} is {why}")
        if len(query.encode("utf-8")) > MAX_TEXT_BYTES:
            raise UsageError(f"the query is longer than the limit of {MAX_TEXT_BYTES} bytes")
        t0 = time.perf_counter()
        vector = self.encoder.encode([query])[0]
        encode_ms = (time.perf_counter() - t0) * 1000
        if self.store.closed:
            raise StoreClosed(f"memory {self.id!r}: its connection is closed")
        cfg = settings or self.settings.retrieval
        ranked = only.widened(cfg.for_budget()) if only else cfg.for_budget()
        listed = only.widened(cfg).k_scenes if only else cfg.k_scenes   # as deep as the unpacked recall ranks

        runs: list[str] = []

        def cascade(pid: str) -> Recall:
            runs.append(pid)
            self.encoder  # noqa: B018 - a version switched to is checked too
            return Cascade(self.store, ranked, listed=listed).recall(pid, query, vector, speaker=speaker,
                                                                     without=without, trace=trace)

        result = self._current(cascade)
        result.memory_id = self.id
        result.attempts += len(runs) - 1   # a run on a version a replacement switched away from counts
        if only is not None:
            result = only.apply(result, cfg.for_budget(), self._turns_of, listed=cfg.k_scenes)
        timings = {"encode": encode_ms, "cascade": result.timings_ms["total"]}
        if cfg.budget_tokens is not None:  # one evidence budget: the packer fills it (retrieve/pack.py)
            t1 = time.perf_counter()
            split = cfg.split_for(result.match)   # the shares the cascade chose its lists with
            result = pack(result, cfg.budget_tokens, self.encoder.count_tokens, self._speakers(), split.lane_share,
                          split.cue_share, split.joint_k0)
            timings["pack"] = (time.perf_counter() - t1) * 1000
        result.timings_ms = {**timings, "total": sum(timings.values())}
        return result

    def _turns_of(self, turn_ids: list[str], scene_ids: list[str]) -> tuple[dict, dict]:
        """({turn id: (speaker, time)}, {scene id: [turn ids]}): what a recall filter reads."""
        row = self.store.run("retrieve/filter_turns", memory_id=self.pid, turn_ids=turn_ids, scene_ids=scene_ids)[0]
        return {t: (who, when) for t, who, when in row["turns"]}, dict(row["scenes"])

    def _speakers(self) -> list[str]:
        return list(self.store.memory(self.id)["speakers"] or [])

    def preload(self) -> None:
        """Load what recall ranks this memory by (its BM25 statistics and embeddings, of its
        current version) into this process's cache, so that the next recall need not: the
        service does it after its worker built the memory (docs/design-and-evidence.md)."""
        if self.store.closed:
            raise StoreClosed(f"memory {self.id!r}: its connection is closed")
        self._current(lambda pid: Cascade(self.store, self.settings.retrieval).reload(pid))

    def evidence(self, recall: Recall) -> str:
        """This recall as the context block for an answer model (`ask` reads `answer_context`, whose
        default focus layout is more compact)."""
        return format_evidence(recall, self._speakers())

    def ask(self, question: str, speaker: str | None = None, without: Iterable[str] = (),
            llm: "LLMClient | None" = None, settings: RetrievalSettings | None = None,
            style: str = "focus", speakers: "Iterable[str] | str | None" = None, since: str | None = None,
            until: str | None = None) -> dict:
        """Recall, then answer with the configured LLM (TMEM_LLM_* settings).

        `speakers`, `since`, `until`: the recall's filters (`recall`).
        `style`: the answer prompt (`llm.prompts.answer.PROMPTS`): "focus" (the default: first the
        memory to keep in mind among what the triggers reached, then the answer with it, over
        `compact_evidence`; docs/models.md), "assistant" (one call, "Not in memory."
        when nothing supports an answer) or "locomo" (the benchmark's).
        Returns {"answer", "kept_in_mind" (what the focus style chose to keep in mind among what
        the triggers reached, None otherwise), "cites" (the evidence turns the answer rests on,
        `supporting_turns`),
        "recall" (the recall's JSON object), "evidence", "timings_ms"}.
        """
        from .answering import answer as answer_from
        from .llm.factory import open_llm

        if llm is None:
            with open_llm() as client:
                return self.ask(question, speaker=speaker, without=without, llm=client, settings=settings,
                                style=style, speakers=speakers, since=since, until=until)
        evidence = (settings or self.settings.retrieval).for_answer()   # packed by default
        recall = self.recall(question, speaker=speaker, without=without, settings=evidence, speakers=speakers,
                             since=since, until=until)
        context = self.answer_context(recall, style)
        t0 = time.perf_counter()
        answer, kept = answer_from(llm, context, question, style, recall)
        timings = {**recall.timings_ms, "answer": (time.perf_counter() - t0) * 1000}
        timings["total"] = recall.timings_ms["total"] + timings["answer"]
        return {"memory_id": self.id, "question": question, "answer": answer, "kept_in_mind": kept or None,
                "cites": supporting_turns(answer, recall, self._speakers()),
                "recall": recall.to_json(), "evidence": context, "timings_ms": timings}

    def answer_context(self, recall: Recall, style: str = "focus") -> str:
        """The evidence block the answer prompt of `style` reads: `compact_evidence` (dates only
        when the question asks when) for the styles of `llm.prompts.answer.COMPACT`, else
        `evidence`."""
        from .llm.prompts.answer import COMPACT

        if style in COMPACT:
            return compact_evidence(recall, self._speakers(), asks_when(recall.query))
        return self.evidence(recall)

    def document(self) -> MemoryDoc:
        """The whole memory as data classes."""
        return export_memory(self.store, self.id)

    def export(self) -> dict:
        """The whole memory as a `tmem-memory/1` document."""
        return to_document(self.document())

    def stats(self) -> dict:
        """Object counts (`pending_turns`: turns no scene holds yet), encoder, the writer holding
        the memory's lease (None when free) and the construction cost ledger."""
        def stats(pid: str) -> dict:
            header = self.store.memory(pid)
            writer = self.store.run("lease/holder", memory_id=self.id)
            return {"memory_id": self.id, "encoder": header["encoder"], "dim": header["dim"],
                    "created_at": header["created_at"], **self.store.counts(pid),
                    "writer": writer[0]["holder"] if writer else None, "ledger": header["ledger"]}

        return self._current(stats)

    def drop(self) -> int:
        """Delete this memory (and nothing else); return the number of nodes deleted."""
        return self.store.drop(self.id)

    def list(self, kind: str, after: str | None = None, limit: int = DEFAULT_LIMIT) -> dict:
        """A page of the memory's `turns`, `scenes` or `items` in their order: {"memory_id",
        "kind", "objects", "next"}; pass `next` as `after` for the page after (None: the last)."""
        return self._named(self._current(lambda pid: list_objects(self.store, pid, kind, after, limit)))

    def get(self, kind: str, object_id: str) -> dict:
        """One `turn`, `scene` or `item` with its triggers, sources and neighbours (docs/api.md)."""
        return self._named(self._current(lambda pid: get_object(self.store, pid, kind, object_id)))

    def delete(self, kind: str, object_id: str, by: str | None = None) -> dict:
        """Delete one `turn` (and what rests on it alone) or one `item` (docs/api.md, "Delete");
        `by` (who asked) goes into the history."""
        kind = kind_of(kind)
        if kind == "item":
            return self._named(self._current(lambda pid: delete_item(self.store, pid, object_id, by)))
        if kind == "turn":
            return self._named(self._current(lambda pid: delete_turn(self.store, pid, object_id, self.encoder, by)))
        raise UsageError(f"kind {kind!r}: only a turn or an item is deleted one at a time "
                         "(a scene goes with its last turn)")

    def update(self, kind: str, object_id: str, text: str, by: str | None = None,
               llm: "LLMClient | None" = None) -> dict:
        """Correct one item's text (docs/api.md, "Correct"): its embedding is rewritten, and its
        trigger views by the build's item-trigger stage when an LLM is given or configured
        (TMEM_LLM_*), else kept and the item marked stale."""
        if kind_of(kind) != "item":
            raise UsageError(f"kind {kind!r}: only an item's text is corrected")
        if llm is None and LLMSettings.from_env().model:
            from .llm.factory import open_llm

            with open_llm() as client:
                return self.update(kind, object_id, text, by, client)
        from .construct.stages import item_triggers

        triggers_of = (lambda item: item_triggers(item, llm)) if llm is not None else None
        return self._named(self._current(
            lambda pid: update_item(self.store, pid, object_id, text, self.encoder, triggers_of, by)))

    def history(self, kind: str, object_id: str) -> dict:
        """How one `turn`, `scene` or `item` was written and every edit of it since (docs/api.md)."""
        return self._named(self._current(lambda pid: object_history(self.store, pid, kind, object_id)))


def import_memory(source: str | Path | dict | MemoryDoc, settings: Settings | None = None,
                  replace: bool = False, store: Store | None = None,
                  encoder: Encoder | None = None) -> tuple[Memory, list[str]]:
    """Validate and load a `tmem-memory/1` document (path, dict or MemoryDoc), all or nothing.

    Returns the memory and the validation warnings (unknown keys ignored, ...).
    """
    if isinstance(source, MemoryDoc):
        doc, warnings = source, []
    elif isinstance(source, dict):
        doc, warnings = parse_document(source)
    else:
        doc, warnings = load_file(source)
    owned = store is None
    store = store or Store(settings or Settings.from_env())
    try:
        encoder = encoder or get_encoder(store.settings.encoder)
        _import_memory(store, doc, encoder, replace=replace, batch_size=store.settings.encode_batch)
    except BaseException:
        if owned:
            store.close()
        raise
    memory = Memory(doc.memory_id, store=store, encoder=encoder)
    memory._owns_store = owned  # the store opened here is the returned Memory's to close
    return memory, warnings


def ingest(memory_id: str, source, fmt: str | None = None, sample: str | None = None,
           settings: Settings | None = None, store: Store | None = None, llm: "LLMClient | None" = None,
           encoder: Encoder | None = None, concurrency: int = 4, progress=None):
    """Build or extend a memory from a conversation with the configured LLM.

    `source` is a path (LoCoMo JSON or the generic turn list; `fmt` forces one) or a list of
    `InputTurn`. Input is validated before any LLM call. Returns an `IngestReport`.
    """
    from .construct.inputs import read_conversation
    from .construct.pipeline import Builder
    from .llm.factory import open_llm

    check_memory_id(memory_id)
    turns = source if isinstance(source, list) else read_conversation(source, fmt, sample)
    with _borrowed(store, settings) as store:
        encoder = encoder or get_encoder(store.settings.encoder)
        if llm is not None:
            return Builder(store, llm, encoder, concurrency, progress).ingest(memory_id, turns)
        with open_llm() as client:
            return Builder(store, client, encoder, concurrency, progress).ingest(memory_id, turns)


def build_due(settings: Settings | None = None, store: Store | None = None, llm: "LLMClient | None" = None,
              encoder: Encoder | None = None, watch_s: float | None = None, flush_after_s: float | None = None,
              concurrency: int = 4, stop: "threading.Event | None" = None) -> "Iterator[Pass]":
    """Build every memory with work due, one `Pass` at a time: once, or with `watch_s` pass
    after pass (waiting `watch_s` after an idle one) until `stop` is set (a worker). With
    `flush_after_s`, a memory no turn was added to for that long is flushed."""
    import threading

    from .construct.worker import BuildWorker
    from .llm.factory import open_llm

    stop = stop or threading.Event()
    with _borrowed(store, settings) as store, contextlib.ExitStack() as stack:
        client = llm or stack.enter_context(open_llm())
        worker = BuildWorker(store, client, encoder or get_encoder(store.settings.encoder), flush_after_s,
                             concurrency)
        yield from worker.passes(stop, watch_s)


def list_memories(settings: Settings | None = None, store: Store | None = None, after: str | None = None,
                  limit: int | None = None, keep: Callable[[str], bool] | None = None) -> list[dict[str, Any]]:
    """The memories in the database in id order with their object counts: every one, or the
    page of at most `limit` whose ids sort after `after` (the last id of the page before);
    with `keep`, only those whose id it accepts (a caller's scope: the others are not counted)."""
    if limit is not None and limit < 1:
        raise UsageError(f"limit must be at least 1, not {limit}")
    with _borrowed(store, settings) as store:
        rows: list[dict[str, Any]] = []
        while True:   # id page by id page: one query never counts them all
            ids = store.memory_ids(after, LIST_PAGE)
            chosen = [i for i in ids if keep is None or keep(i)]
            if limit is not None:
                chosen = chosen[:limit - len(rows)]
            rows += store.summaries(chosen)
            if len(ids) < LIST_PAGE or limit is not None and len(rows) >= limit:
                return rows
            after = ids[-1]


def apply_schema(settings: Settings | None = None, store: Store | None = None,
                 encoder: Encoder | None = None) -> list[str]:
    """Apply the schema migrations for the configured encoder's dimension; wait for indexes; then
    add the BM25 statistics and index counts of every memory written before they were kept with
    it (`transfer.add_statistics`)."""
    with _borrowed(store, settings) as store:
        encoder = encoder or get_encoder(store.settings.encoder)
        applied = store.apply_schema(encoder.dim)
        add_statistics(store)
        return applied


@contextmanager
def _borrowed(store: Store | None, settings: Settings | None) -> Iterator[Store]:
    """The caller's store as it is, or a store of our own closed on the way out."""
    if store is not None:
        yield store
        return
    with Store(settings or Settings.from_env()) as own:
        yield own


def check_database(repair: bool = False, settings: Settings | None = None, store: Store | None = None,
                   encoder: Encoder | None = None) -> dict:
    """Whether every index of the schema is usable, and what interrupted writes left: {"indexes":
    [{name, state, ok, problem}], "repaired": [names], "hidden": [memory ids an import or a drop
    left hidden: under way, or killed], "removed": [ids]}. With `repair`, the unusable indexes
    are dropped and built again from the stored data, then checked again, and each hidden
    memory whose writer is gone (its lease free) is deleted in batches."""
    with _borrowed(store, settings) as store:
        # the database's own dimension (its indexes', else its memories'): probing or rebuilding
        # with another encoder's would break every index
        dims = set(store.vector_dimensions().values()) or {m["dim"] for m in list_memories(store=store) if m["dim"]}
        if len(dims) > 1:
            raise SchemaError(f"the database's vector indexes and memories disagree on the dimension "
                              f"({sorted(dims)}); one database holds one dimension: export its memories, drop "
                              "them and import them again with one encoder")
        dim = dims.pop() if dims else (encoder or get_encoder(store.settings.encoder)).dim
        report = store.check_indexes(dim)
        broken = [e["name"] for e in report if not e["ok"]]
        if repair and broken:
            store.repair_indexes(broken, dim)
            report = store.check_indexes(dim)
        hidden, removed = [h["id"] for h in store.hidden()], []
        for memory_id in hidden if repair else []:
            try:
                with WriteLease(store, memory_id, "db check --repair", wait_s=0) as lease:
                    removed += [m for m in store.remove_debris(memory_id, lease) if m not in removed]
            except LeaseHeld:
                continue   # its writer is at work: not debris
        return {"indexes": report, "repaired": broken if repair else [],
                "hidden": [m for m in hidden if m not in removed], "removed": removed}


def dumps(document: dict) -> str:
    """A document as indented JSON text."""
    return json.dumps(document, ensure_ascii=False, indent=2) + "\n"
