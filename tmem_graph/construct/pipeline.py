"""Build or extend a memory: new turns → scenes → topics → items → triggers → personas →
one write transaction.

Incremental: only turns the memory does not hold yet are processed; topics are matched
against the existing ones; items are extracted for touched topics from the new scenes only
(older scenes of the topic are shown for connections); triggers are made for new objects;
personas are updated from the new turns. Resumable: every accepted LLM reply is cached by
(model, prompt, schema), ids are deterministic and the graph is written in one transaction,
so a killed build re-run gives the same graph without asking the LLM again.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

from ..edits import refresh_stale
from ..encode import Encoder, same_encoder
from ..errors import EncoderMismatch, MemoryNotFound, RolledBack
from ..llm.client import LLMClient
from ..format import check_memory_id
from ..model import Item, MemoryDoc, Persona, Scene, Turn
from ..store import TRANSIENT_TRIES, Store, WriteLease, ft_scope, new_version
from ..transfer import export_memory, memory_rows, write_rows
from . import live, stages
from .inputs import InputTurn

T = TypeVar("T")
R = TypeVar("R")
Progress = Callable[[str, int, int], None]


@dataclass
class IngestReport:
    memory_id: str
    new_turns: int = 0
    skipped_turns: int = 0
    new_scenes: int = 0
    new_topics: int = 0
    touched_topics: int = 0
    new_items: int = 0
    new_trigger_views: int = 0
    ledger: dict[str, dict] = field(default_factory=dict)
    windows: int = 0          # windows the boundary model read
    rounds: int = 0           # build rounds that wrote something
    pending_turns: int = 0    # turns no scene holds after the build (the open scene, the unread tail)
    rebuilt: dict[str, list[str]] = field(default_factory=dict)   # stale scenes and items written again


def _fresh_ids(prefix: str, taken: Iterable[str]) -> Callable[[], str]:
    """A generator of ids `<prefix><n>` that skips ids already taken."""
    used = set(taken)
    counter = [0]

    def next_id() -> str:
        while True:
            counter[0] += 1
            candidate = f"{prefix}{counter[0]}"
            if candidate not in used:
                used.add(candidate)
                return candidate

    return next_id


def new_turns(existing: list[Turn], incoming: list[InputTurn]) -> tuple[list[Turn], int]:
    """The incoming turns the memory does not hold yet (same id, or same speaker, time and
    text without ids), with ids assigned; and how many were skipped."""
    ids = {t.id for t in existing}
    keys = {(t.speaker, t.time, t.text) for t in existing}
    next_id = _fresh_ids("T", ids)
    out, skipped = [], 0
    for t in incoming:
        if (t.id is not None and t.id in ids) or (t.id is None and (t.speaker, t.time, t.text) in keys):
            skipped += 1
            continue
        tid = t.id or next_id()
        ids.add(tid)
        keys.add((t.speaker, t.time, t.text))
        out.append(Turn(tid, t.speaker, t.text, t.time, t.session))
    return out, skipped


def _due(row: dict) -> bool:
    """Whether a build round has work, from what live/pending returned: a full window of
    unread turns, a flush asked, or a full persona window of built turns. Scenes closed for
    good are built in the round that read their last window, so none waits without one."""
    unread = sum(1 for r in row["pending"] if not r["examined"])
    return (unread >= stages.WINDOW or row["flush_upto"] is not None
            or len(row["built_after"]) >= stages.PERSONA_WINDOW)


class Builder:
    """Runs the construction pipeline for one memory with one LLM, encoder and store."""

    def __init__(self, store: Store, llm: LLMClient, encoder: Encoder, concurrency: int = 4,
                 progress: Progress | None = None):
        self.store, self.llm, self.encoder = store, llm, encoder
        self.idle_s = store.settings.scene_idle_s
        self.lease_wait_s = 10.0   # how long a build waits for another writer of the memory
        self.concurrency = max(1, concurrency)
        self.progress = progress or (lambda stage, done, total: None)

    def _map(self, stage: str, fn: Callable[[T], R], values: list[T]) -> list[R]:
        """fn over values with a bounded pool, in order, reporting progress."""
        self.progress(stage, 0, len(values))
        out: list[R] = []
        with ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix=f"tmem-{stage}") as pool:
            for n, result in enumerate(pool.map(fn, values), 1):
                out.append(result)
                self.progress(stage, n, len(values))
        return out

    def add(self, memory_id: str, incoming: list[InputTurn]) -> live.AddReport:
        """Write turns at once, recallable before any build (construct/live.py)."""
        return live.add_turns(self.store, self.encoder, memory_id, incoming)

    def ingest(self, memory_id: str, incoming: list[InputTurn]) -> IngestReport:
        """Build the memory, or extend it with the turns it does not hold yet: add them, then
        build with a flush, so every turn ends in a scene (a killed ingest run again adds
        nothing twice and builds what is left)."""
        added = self.add(memory_id, incoming)
        report = self.build(memory_id, flush=True)
        report.new_turns, report.skipped_turns = len(added.added), added.skipped
        return report

    def build(self, memory_id: str, flush: bool = False) -> IngestReport:
        """Build what is due of a memory's pending turns, round after round, holding the
        memory's write lease (turns added meanwhile wait for the next round): full windows
        are read by the boundary model, the scenes closed for good are built, personas are
        updated per PERSONA_WINDOW built turns. `flush` closes every turn added so far into
        scenes and updates the personas with all of them."""
        check_memory_id(memory_id)
        self.store.require_schema(self.encoder.dim)
        asked = self._existing_header(memory_id)["pid"]
        if flush:   # recorded first: a builder holding the lease now does it too
            self.store.run("live/flush_request", memory_id=asked)
        report = IngestReport(memory_id)
        with WriteLease(self.store, memory_id, "build", wait_s=self.lease_wait_s) as lease:
            self._lease = lease
            # the id its objects carry, read again now that no replacement can switch it (the lease)
            memory_id = self._existing_header(memory_id)["pid"]
            if flush and memory_id != asked:   # a replacement switched versions meanwhile
                self.store.run("live/flush_request", memory_id=memory_id)
            notify = self.progress

            def progress(stage: str, done: int, total: int) -> None:
                if stage != "write":  # the write checks its lease itself; after it, all is done
                    lease.ensure()  # a lost database or lease stops the LLM work at the next step
                notify(stage, done, total)

            self.progress = progress
            try:
                while self._round(memory_id, report):
                    report.rounds += 1
                report.rebuilt = refresh_stale(   # what deletes and corrections left stale
                    self.store, lease, memory_id, self.encoder,
                    lambda s, turns: stages.scene_card(s, turns, self.llm),
                    lambda s, turns: stages.scene_triggers(s, turns, self.llm),
                    lambda i: stages.item_triggers(i, self.llm))
            finally:
                self.progress = notify
            report.ledger = self._ledger_totals(memory_id)   # under the lease: the same version
        return report

    def _round(self, memory_id: str, report: IngestReport) -> bool:
        """One build round; whether more work may be due after it."""
        self._ledger_start = {k: dict(vars(v)) for k, v in self.llm.ledger.items()}
        row = self.store.run("live/pending", memory_id=memory_id)[0]
        if not _due(row):  # nothing to read, close or fold: the memory is not read at all
            report.pending_turns = len(row["pending"])
            return False
        old = export_memory(self.store, memory_id, settled=False)   # turns may be added meanwhile
        turns_by_id = {t.id: t for t in old.turns}
        seq = {r["id"]: r["seq"] for r in row["pending"]}
        state = live.PendingState([turns_by_id[r["id"]] for r in row["pending"]],
                                  {r["id"]: r["starts"] for r in row["pending"] if r["examined"]})
        covered = live.covered_by_flush(state, row["flush_upto"], seq)
        self.progress("segment", 0, 1)
        asked = live.segment_pending(state, self.llm, self.idle_s, covered)
        self.progress("segment", 1, 1)
        final = live.final_scenes(state, covered)
        flushed = row["flush_upto"] is not None and state.examined >= covered
        built = [t for g in final for t in g]
        seq.update({r["id"]: r["seq"] for r in row["built_after"]})
        readable = [turns_by_id[r["id"]] for r in row["built_after"]] + built
        fold = readable if flushed else readable[:len(readable) // stages.PERSONA_WINDOW * stages.PERSONA_WINDOW]
        if not (asked or final or fold or flushed):
            report.pending_turns = len(state.turns)
            return False

        old_topics = {t.id for t in old.topics}   # the topic stage adds to old.topics in place
        scenes, touched_topics, items, personas = self._build_scenes(old, final, fold, turns_by_id)
        built_ids = {t.id for t in built}
        marks = [{"id": t.id, "starts": state.starts[t.id]} for t in state.turns[:state.examined]
                 if t.id not in built_ids]
        speakers = list(dict.fromkeys(old.speakers + [t.speaker for t in built]))
        delta = MemoryDoc(memory_id, speakers, built, scenes, touched_topics, items, personas)
        persona_upto = seq[fold[-1].id] if fold else row["persona_upto"]
        self._write(old, delta, built_ids, marks, persona_upto, row["flush_upto"] if flushed else None)
        report.windows += asked
        report.new_scenes += len(scenes)
        report.new_items += len(items)
        report.touched_topics += len(touched_topics)
        report.new_topics += sum(1 for t in touched_topics if t.id not in old_topics)
        report.new_trigger_views += delta.counts()["triggers"]
        report.pending_turns = len(state.turns) - len(built)
        unexamined = len(state.turns) - state.examined
        return unexamined >= stages.WINDOW or (row["flush_upto"] is not None and not flushed)

    def _build_scenes(self, old: MemoryDoc, groups: list[list[Turn]], fold: list[Turn],
                      turns_by_id: dict[str, Turn]) -> tuple[list[Scene], list, list[Item], list[Persona]]:
        """Scenes of the closed groups with their cards, topics, items and triggers, and the
        personas after the turns in `fold`."""
        next_scene = _fresh_ids("s", (s.id for s in old.scenes))
        scenes = [Scene(next_scene(), [t.id for t in g], time=g[0].time) for g in groups]
        self._map("scene", lambda s: stages.scene_card(s, [turns_by_id[t] for t in s.turn_ids], self.llm), scenes)

        topics = old.topics
        scene_by_id = {s.id: s for s in old.scenes + scenes}
        self.progress("topic", 0, len(scenes))
        touched = stages.assign_topics(scenes, topics, self.llm, _fresh_ids("t", (t.id for t in topics)),
                                       self.encoder, scene_by_id, {t.speaker for t in turns_by_id.values()})
        self.progress("topic", len(scenes), len(scenes))
        touched_topics = [t for t in topics if t.id in touched]

        def items_of(scene: Scene) -> list[Item]:
            return stages.extract_items(scene, [turns_by_id[t] for t in scene.turn_ids],
                                        earlier_of(scene), self.llm)

        place = {s.id: n for n, s in enumerate(old.scenes + scenes)}

        def earlier_of(scene: Scene) -> list[Scene]:
            """The last EARLIER_SCENES scenes before `scene` of the topics it joined."""
            before = {sid for t in touched_topics if scene.id in t.scene_ids
                      for sid in t.scene_ids if place.get(sid, -1) < place[scene.id]}
            return sorted((scene_by_id[sid] for sid in before), key=lambda s: place[s.id])[-stages.EARLIER_SCENES:]

        next_item = _fresh_ids("i", (i.id for i in old.items))
        items: list[Item] = []
        seen: set[tuple[str, tuple[str, ...]]] = set()
        for batch in self._map("items", items_of, scenes):
            for item in batch:
                key = (item.text.lower(), tuple(item.scene_ids))
                if key not in seen:
                    seen.add(key)
                    item.id = next_item()
                    items.append(item)
        for item, trigs in zip(items, self._map("item_triggers", lambda i: stages.item_triggers(i, self.llm), items)):
            item.triggers = trigs
        self._map("scene_triggers",
                  lambda s: stages.scene_triggers(s, [turns_by_id[t] for t in s.turn_ids], self.llm), scenes)

        speakers = list(dict.fromkeys(old.speakers + [t.speaker for t in fold]))
        current = {p.speaker: p.summary for p in old.personas}
        talking = [s for s in speakers if any(t.speaker == s for t in fold)]
        summaries = self._map("persona", lambda s: stages.persona(s, current.get(s), fold, self.llm, self.encoder,
                                                                  speakers), talking)
        personas = [Persona(s, text) for s, text in zip(talking, summaries) if text]
        return scenes, touched_topics, items, personas

    def _existing_header(self, memory_id: str) -> dict:
        """The memory's header; an error unless it exists with this builder's encoder."""
        header = self.store.memory(memory_id)
        if not same_encoder(header["encoder"], self.encoder) or header["dim"] != self.encoder.dim:
            raise EncoderMismatch(f"memory {header['id']!r} was built with encoder {header['encoder']!r}, "
                                  f"not {self.encoder.name!r}; set TMEM_ENCODER to the memory's encoder")
        return header

    def _write(self, old: MemoryDoc, delta: MemoryDoc, built: set[str], marks: list[dict], persona_upto: int,
               flushed: int | None) -> None:
        """Write a round's new and changed objects, the turns it settled (now in scenes) and
        what the boundary model said of the others, and the updated ledger, in one transaction."""
        self.progress("write", 0, 1)
        offsets = {"scenes": len(old.scenes), "items": len(old.items), "topics": 0}
        # changed topics keep their place; new ones go after the old ones
        rows = memory_rows(delta, self.encoder, self.store.settings.encode_batch, offsets,
                           chain_from=old.scenes[-1].id if old.scenes else None,
                           turns_too=False,  # the turns are in the memory already (live.add_turns)
                           written_by="build")
        position = {t.id: n for n, t in enumerate(old.topics)}
        for n, row in enumerate(rows["topics"]):
            row["seq"] = position.get(row["id"], len(old.topics) + n)
        m = delta.memory_id
        ledger = self._merged_ledger(m)
        for attempt in range(1, TRANSIENT_TRIES + 1):
            try:
                with self._lease.committing(), self.store.transaction() as tx:
                    self._lease.check_in(tx)
                    write_rows(self.store, tx, m, rows)
                    self.store.tx_run(tx, "live/turns_settle", memory_id=m, built=sorted(built), marks=marks,
                                      ft_scope=ft_scope("turn", m))
                    self.store.tx_run(tx, "live/build_done", memory_id=m, persona_upto=persona_upto,
                                      flushed=flushed, speakers=delta.speakers, ledger=json.dumps(ledger),
                                      version=new_version())
                break
            except RolledBack:   # a deadlock with an add: Neo4j undid the round's write whole
                if attempt == TRANSIENT_TRIES:
                    raise
                time.sleep(0.05 * attempt)
        self.progress("write", 1, 1)

    def _merged_ledger(self, memory_id: str) -> dict[str, dict]:
        try:
            previous = self.store.memory(memory_id)["ledger"] or {}
        except MemoryNotFound:
            previous = {}
        merged = {k: dict(v) for k, v in previous.items()}
        for stage, usage in self.llm.ledger.items():  # only what this ingest used
            row = merged.setdefault(stage, {})
            start = self._ledger_start.get(stage, {})
            for key, value in vars(usage).items():
                row[key] = row.get(key, 0) + value - start.get(key, 0)
        return merged

    def _ledger_totals(self, memory_id: str) -> dict[str, dict]:
        return self.store.memory(memory_id)["ledger"] or {}
