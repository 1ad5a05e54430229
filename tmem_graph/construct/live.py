"""The live path: turns are added as a conversation happens and are recallable at once;
scenes close when their event closes, and only closed scenes are built (docs/live.md).

- `add_turns` validates nothing itself (its callers pass checked `InputTurn`s), encodes the
  turns, and writes them in one short transaction of its own, never under the builder's
  lease: each is a `Pending` turn (no scene holds it yet) with its embedding and full-text
  entry, which the recall's `recent` channel searches.
- `segment_pending` is the boundary model's side of a build: the pending turns are read in
  the windows a batch segmentation would use (`stages.WINDOW` turns, the open scene's last
  turns as context), a window only when it is full or a flush reaches it, with the rules of
  `stages.closes`; what the model said of each turn is kept on the turn (`examined`,
  `starts_scene`), so no window is asked twice and a build resumes where the last one stopped.
- `final_scenes` says which of the scenes so formed are closed for good: every one but the
  open one, except the last closed one while the open one could still be merged into it
  (`stages.merge_short`); a flush closes all.

Replaying a conversation a turn or an exchange at a time therefore asks the boundary model the
same windows as one batch ingest of it and reaches the same scenes.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone

from ..encode import Encoder, same_encoder
from ..errors import EncoderMismatch, MemoryBusy, RolledBack, ValidationError
from ..format import check_memory_id
from ..llm.client import LLMClient
from ..model import Turn, turn_passage
from ..store import TRANSIENT_TRIES, Store, ft_scope, new_version
from . import stages
from .inputs import InputTurn


@dataclass
class AddReport:
    memory_id: str
    added: list[str] = field(default_factory=list)    # ids of the turns written, in order
    skipped: int = 0                                   # turns the memory held already
    created: bool = False                              # whether this add created the memory


def add_turns(store: Store, encoder: Encoder, memory_id: str, incoming: list[InputTurn]) -> AddReport:
    """Write the turns the memory does not hold yet (same id, or without ids the same speaker,
    time and text) in one transaction, after its last turn; create the memory if absent.

    Adds to one memory are serialised by a lock on its node, so two writers adding at once
    each see what the other committed: every turn is written once, with a unique id.
    """
    check_memory_id(memory_id)
    if not incoming:
        raise ValidationError([f"memory {memory_id!r}: no turns to add"])
    store.require_schema(encoder.dim)
    # each turn's text (the packer ranks a scene's turns by it) and its passage (the turn channel's)
    texts = [t.text for t in incoming] + [turn_passage(t.speaker, t.text) for t in incoming]
    encoded = encoder.encode(texts, batch_size=store.settings.encode_batch)
    vectors = list(zip(encoded[:len(incoming)], encoded[len(incoming):]))
    for attempt in range(1, TRANSIENT_TRIES + 1):
        try:
            return _add(store, encoder, memory_id, incoming, vectors)
        except _Vanished:
            continue  # the memory was dropped while this add waited for it: add to a new one
        except RolledBack:   # a deadlock with a build of the memory: Neo4j undid this add whole
            if attempt == TRANSIENT_TRIES:
                raise
            time.sleep(0.05 * attempt)
    raise MemoryBusy(f"memory {memory_id!r} was dropped or replaced three times while turns were added to it; "
                     "try again")


class _Vanished(Exception):
    """The memory's node was deleted by the transaction an add waited for."""


def _add(store: Store, encoder: Encoder, memory_id: str, incoming: list[InputTurn],
         vectors: list[tuple[list[float], list[float]]]) -> AddReport:
    report = AddReport(memory_id)
    with store.transaction() as tx:
        head = store.tx_run(tx, "live/memory_lock", memory_id=memory_id, encoder=encoder.name, dim=encoder.dim,
                            created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
                            version=new_version())[0]
        if head["encoder"] is None:  # MERGE found the node, then its deletion committed first
            raise _Vanished()
        if head["hidden"]:   # an import written in batches, or a drop, is under way (or its debris)
            if store.run("store/memory_get", memory_id=memory_id):
                raise _Vanished()   # a replacement switched versions while this add waited: add to the new one
            raise MemoryBusy(f"memory {memory_id!r} is being imported or dropped; try again when that writer "
                             "has finished (`tmem db check --repair` removes what a killed one left)")
        if not same_encoder(head["encoder"], encoder) or head["dim"] != encoder.dim:
            raise EncoderMismatch(f"memory {memory_id!r} was built with encoder {head['encoder']!r}, "
                                  f"not {encoder.name!r}; set TMEM_ENCODER to the memory's encoder")
        report.created = bool(head["created"])
        pid = head["pid"]   # the id the memory's objects carry (store/memory_get)
        seq = head["next_seq"]
        keyed = [(n, t) for n, t in enumerate(incoming) if t.id is None]
        given = [t.id for t in incoming if t.id is not None]
        candidates = [f"T{seq + k + 1}" for k in range(len(incoming))]
        known = store.tx_run(tx, "live/turns_known", memory_id=pid, ids=given, candidates=candidates,
                             keys=[{"n": n, "speaker": t.speaker, "time": t.time, "text": t.text}
                                   for n, t in keyed])[0]
        held, stored = set(known["keys"]), set(known["ids"])
        checked = set(given) | set(candidates)
        while True:  # ids for turns without one: free in the memory and among this add's own ids
            rows, ids = _rows(incoming, vectors, seq, stored, held)
            unchecked = [i for i in ids if i not in checked]
            if not unchecked:
                break
            stored |= set(store.tx_run(tx, "live/turns_known", memory_id=pid, ids=unchecked, candidates=[],
                                       keys=[])[0]["ids"])
            checked |= set(unchecked)
        report.added = [r["id"] for r in rows]
        report.skipped = len(incoming) - len(rows)
        if rows:
            store.tx_run(tx, "live/turns_add", memory_id=pid, rows=rows, next_seq=seq + len(rows),
                         ft_scope=ft_scope("recent", pid),
                         speakers=list(dict.fromkeys(r["speaker"] for r in rows)))
    return report


def _rows(incoming: list[InputTurn], vectors: list[tuple[list[float], list[float]]], seq: int, stored: set[str],
          held: set[int]) -> tuple[list[dict], list[str]]:
    """The rows of the turns to write (not held already: the same id in the memory, or without
    an id the same speaker, time and text in the memory or earlier in this add), from seq on,
    and the ids given to turns without one: `T<seq + 1>` (the id a batch gives), or the next
    `T<n>` that neither the memory (`stored`, as far as known) nor this add uses."""
    taken = stored | {t.id for t in incoming if t.id is not None}
    seen: set[tuple] = set()
    rows, made = [], []
    for n, t in enumerate(incoming):
        key = (t.speaker, t.time, t.text)
        if (t.id is not None and t.id in stored) or (t.id is None and (n in held or key in seen)):
            continue
        seen.add(key)
        tid = t.id
        if tid is None:
            k = seq + len(rows) + 1
            while f"T{k}" in taken:
                k += 1
            tid = f"T{k}"
            made.append(tid)
        taken.add(tid)
        rows.append({"id": tid, "seq": seq + len(rows), "speaker": t.speaker, "text": t.text, "time": t.time,
                     "session": t.session, "embedding": vectors[n][0], "passage_embedding": vectors[n][1]})
    return rows, made


# ------------------------------------------------------------------------------------------
# Segmentation of the pending turns
# ------------------------------------------------------------------------------------------

@dataclass
class PendingState:
    """The pending turns of a memory in order, and what the boundary model said of them:
    `starts[id]` for every examined turn (examined turns are a prefix of `turns`)."""
    turns: list[Turn]
    starts: dict[str, bool]

    @property
    def examined(self) -> int:
        n = 0
        while n < len(self.turns) and self.turns[n].id in self.starts:
            n += 1
        return n

    def groups(self) -> list[list[Turn]]:
        """The examined turns split into scenes (the first pending turn always opens one)."""
        out: list[list[Turn]] = []
        for turn in self.turns[:self.examined]:
            if not out or self.starts[turn.id]:
                out.append([])
            out[-1].append(turn)
        return out


def covered_by_flush(state: PendingState, flush_upto: int | None, seq: dict[str, int]) -> int:
    """How many pending turns (a prefix) a flush asked up to turn seq `flush_upto` covers."""
    if flush_upto is None:
        return 0
    return sum(1 for t in state.turns if seq[t.id] <= flush_upto)


def segment_pending(state: PendingState, llm: LLMClient, idle_s: float | None, covered: int) -> int:
    """Ask the boundary model about every window that is due: full windows of unexamined
    turns or, while a flush covers the first `covered` pending turns, the windows up to the
    flush point only (the last one partial, as a batch's last window is; the turns after it
    wait for the next round, which starts a new scene). Records the answers in
    `state.starts`; returns the number of windows asked."""
    asked = 0
    while True:
        start = state.examined
        rest = state.turns[start:covered] if covered else state.turns[start:]
        if not rest or (not covered and len(rest) < stages.WINDOW):
            return asked
        window = rest[:stages.WINDOW]
        groups = state.groups()
        current = groups[-1] if groups else []
        model_starts = stages.boundary_starts(current, window, llm)
        asked += 1
        for n, turn in enumerate(window, 1):
            opens = not current or stages.closes(current, turn, n in model_starts, idle_s)
            if opens:
                current = []
            current.append(turn)
            state.starts[turn.id] = opens


def final_scenes(state: PendingState, covered: int) -> list[list[Turn]]:
    """The scenes formed from the examined turns that are closed for good, in order.

    A flush whose turns are all examined closes every scene. Otherwise the open (last) scene
    stays open, and so does the scene before it while `merge_short` could still join the two
    (the open one is still short, or the closed one is, and both are of one session)."""
    groups = state.groups()
    if not groups:
        return []
    if covered and state.examined >= covered:
        return stages.merge_short(groups)
    closed, open_ = stages.merge_short(groups[:-1]), groups[-1]
    if closed and closed[-1][-1].session == open_[0].session and (
            len(open_) < stages.MIN_SCENE_TURNS or len(closed[-1]) < stages.MIN_SCENE_TURNS):
        closed = closed[:-1]
    return closed
