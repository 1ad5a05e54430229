"""Whole memories in and out: `import_memory` writes a validated `MemoryDoc` with every text
encoded, in bounded batches behind one small switch (a replacement as a staged version);
`export_memory` reads it back."""

from __future__ import annotations

import contextlib
import time
from collections import defaultdict
from typing import TYPE_CHECKING, Iterator

from .encode import Encoder
from .errors import LeaseLost, MemoryBusy, MemoryExists, TmemError
from .model import (
    HorizonTrigger,
    Item,
    ItemTrigger,
    MemoryDoc,
    Persona,
    Scene,
    Topic,
    Turn,
    trigger_views_of_item,
    trigger_views_of_scene,
    turn_passage,
)
from .retrieve.lexical import KINDS, LABELS, link_rows, term_rows
from .store import Store, WriteLease, ft_scope, name_of, new_version, staged_id
from .triggers import HORIZON, SCENE

if TYPE_CHECKING:
    import numpy as np


def scene_text(scene: Scene, turns: dict[str, Turn]) -> str:
    """Text of a scene's descriptive embedding: title, summary and narrative (the dialogue
    when a scene has none of them)."""
    return " ".join(p for p in (scene.title, scene.summary, scene.narrative) if p) or \
        dialogue_text(scene, turns)


def dialogue_text(scene: Scene, turns: dict[str, Turn]) -> str:
    """The scene's raw dialogue, one "speaker: text" line per turn."""
    return "\n".join(f"{turns[t].speaker}: {turns[t].text}" for t in scene.turn_ids)


def topic_text(topic: Topic) -> str:
    """Text of a topic's embedding: title twice, then keywords and summary (paper §3.3)."""
    parts = [topic.title, topic.title, ", ".join(topic.keywords), topic.summary]
    return " | ".join(p for p in parts if p) or topic.id


ENCODE_CHUNK = 4096   # texts encoded at a time by `memory_rows`, each chunk's vectors stored as float32


class _Batch:
    """Collects texts to encode, encodes each distinct text once, in batches."""

    def __init__(self) -> None:
        self.texts: dict[str, int] = {}

    def add(self, text: str) -> int:
        return self.texts.setdefault(text, len(self.texts))

    def encode(self, encoder: Encoder, batch_size: int) -> "np.ndarray":
        """One float32 row per text: an eighth of the memory of Python lists of floats (a
        100,000-item memory held 6.8 GB of them: docs/design-and-evidence.md); the driver sends a row as
        a list."""
        import numpy as np

        texts = list(self.texts)
        out = np.empty((len(texts), encoder.dim), dtype=np.float32)
        for start in range(0, len(texts), ENCODE_CHUNK):
            part = texts[start:start + ENCODE_CHUNK]
            out[start:start + len(part)] = encoder.encode(part, batch_size=batch_size)
        return out


def import_memory(store: Store, memory: MemoryDoc, encoder: Encoder, replace: bool = False,
                  batch_size: int = 64) -> dict:
    """Write a whole memory; refuse an existing id unless `replace`. Returns the object counts
    written. Readers see the memory whole or not at all, never a part, and the write is in
    bounded batches (`Settings.write_batch` rows per transaction, so its size needs no server
    setting raised), hidden from every reader and add (`importing`) until one small switch:

    - a new memory is written under its name, then made visible (`publish`);
    - a replacement is written as a staged version ("<name>#<token>", `staged_id`); the switch
      makes it visible and hides the old version in one transaction (readers see the old
      version or the new one), and the old one is then deleted in batches.

    A failure removes what was written; a killed import leaves it hidden (a replacement leaves
    the old version whole), and the next write of the memory or `tmem db check --repair`
    removes it (`Store.remove_debris`).
    """
    store.require_schema(encoder.dim)
    if store.exists(memory.memory_id) and not replace:
        raise MemoryExists(f"memory {memory.memory_id!r} already exists (use --replace to overwrite)")
    rows = memory_rows(memory, encoder, batch_size)
    m = memory.memory_id
    with WriteLease(store, m, "import") as lease:
        current = store.run("store/memory_get", memory_id=m)   # its version, now that no one else may write it
        if current and not replace:
            raise MemoryExists(f"memory {m!r} already exists (use --replace to overwrite)")
        store.remove_debris(m, lease)
        if not current:
            _import_in_batches(store, lease, m, memory, encoder, rows)
        else:
            old = current[0]["pid"]
            _import_in_batches(store, lease, staged_id(m), memory, encoder, rows, replacing=old)
            with contextlib.suppress(TmemError):   # hidden now; what a failure leaves the next write removes
                store.delete_in_batches(old, lease)
    return memory.counts()


def _import_in_batches(store: Store, lease: WriteLease, pid: str, memory: MemoryDoc, encoder: Encoder,
                       rows: dict[str, list[dict]], replacing: str | None = None) -> None:
    """Write `rows` under the hidden Memory node `pid` in batches, then make it visible: alone
    (`publish`), or in place of the version `replacing` (`switch`, which hides that one)."""
    token = f"import:{lease.token}"
    with store.transaction() as tx:
        lease.check_in(tx)
        store.create_memory_in(tx, pid, encoder.name, encoder.dim, memory.speakers, importing=token)
    try:
        for name, chunk, params in write_steps(pid, rows, store.settings.write_batch):
            lease.ensure()
            with store.transaction() as tx:
                lease.check_in(tx)
                store.tx_run(tx, name, rows=chunk, **params)
        with store.transaction() as tx:   # the switch: the memory becomes visible, whole
            lease.check_in(tx)
            if replacing is None:
                store.tx_run(tx, "store/memory_publish", memory_id=pid, token=token, version=new_version())
            else:
                store.tx_run(tx, "live/memory_hold", memory_id=replacing)   # an add runs wholly before or after
                if not store.tx_run(tx, "store/memory_switch", old=replacing, staged=pid, token=token,
                                    hide=f"replaced:{lease.token}", version=new_version()):
                    raise LeaseLost(f"memory {memory.memory_id!r}: its version changed under this import's "
                                    "lease; nothing was replaced, run it again")
    except BaseException:
        with contextlib.suppress(TmemError):   # the database may be gone: then the debris waits
            # only while still hidden as this import's: a commit whose reply was lost (or a Ctrl-C
            # during it) may have made it the memory, which must not be deleted then
            if any(h["id"] == pid and h["token"] == token for h in store.hidden(name_of(pid))):
                store.delete_in_batches(pid, lease)
        raise


def write_steps(m: str, rows: dict[str, list[dict]], size: int) -> Iterator[tuple[str, list[dict], dict]]:
    """Every write query of a memory's rows, in order (links after the nodes they join, an
    object's statistics after it: retrieve/lexical.py), each with at most `size` rows: (query
    name, rows, other parameters). MERGE: idempotent."""
    steps = [("store/turns_merge", "turns", {"ft_scope": ft_scope("turn", m)}),
             ("store/turns_pending", "pending", {"ft_scope": ft_scope("recent", m)}),
             ("store/scenes_merge", "scenes", {"ft_scope": ft_scope("scene", m)}),
             ("store/scene_turns_link", "scene_turns", {}),
             ("store/terms_write", "terms_scene", {"label": "Scene"}),
             ("store/terms_write", "terms_turn", {"label": "Turn"}),
             ("store/scenes_chain", "chain", {}),
             ("store/topics_merge", "topics", {"ft_scope": ft_scope("topic", m)}),
             ("store/topic_scenes_link", "topic_scenes", {}),
             ("store/terms_write", "terms_topic", {"label": "Topic"}),
             ("store/items_merge", "items", {"ft_scope": ft_scope("item", m)}),
             ("store/item_scenes_link", "item_scenes", {}),
             ("store/terms_write", "terms_item", {"label": "Item"}),
             ("store/scene_triggers_merge", "scene_triggers", {}),
             ("store/item_triggers_merge", "item_triggers", {}),
             ("store/terms_write", "terms_trigger", {"label": "Trigger"}),
             ("store/scene_horizon", "scene_horizon", {}),   # from the views written just before
             ("store/personas_merge", "personas", {})]
    for name, key, params in steps:
        for start in range(0, len(rows[key]), size):
            yield name, [_as_lists(r) for r in rows[key][start:start + size]], {"memory_id": m, **params}


def _as_lists(row: dict) -> dict:
    """A row with its vectors (float32 rows of `_Batch.encode`) as lists of floats, which the
    driver sends several times faster than arrays (measured: docs/design-and-evidence.md); one batch's
    worth at a time."""
    return {k: v.tolist() if hasattr(v, "tolist") else v for k, v in row.items()}


def write_rows(store: Store, tx, m: str, rows: dict[str, list[dict]]) -> None:
    """Run every write query of a memory's rows inside transaction `tx`."""
    for name, chunk, params in write_steps(m, rows, store.settings.write_batch):
        store.tx_run(tx, name, rows=chunk, **params)


def memory_rows(memory: MemoryDoc, encoder: Encoder, batch_size: int, offsets: dict[str, int] | None = None,
                chain_from: str | None = None, turns_too: bool = True,
                written_by: str = "import") -> dict[str, list[dict]]:
    """Parameter rows of every write query, with every text encoded in one pass.

    `offsets` shifts the `seq` of turns, scenes, topics and items (when extending a memory);
    `chain_from` is the id of the memory's last scene, to be linked to the first new one;
    `turns_too=False` leaves the turns out (a build: they were written, encoded, when added);
    `written_by` (`import` or `build`) is kept on new items for their history.
    """
    off = {"turns": 0, "scenes": 0, "topics": 0, "items": 0, **(offsets or {})}
    batch = _Batch()
    turns = {t.id: t for t in memory.turns}
    scene_vec = [(batch.add(scene_text(s, turns)), batch.add(dialogue_text(s, turns))) for s in memory.scenes]
    topic_vec = [batch.add(topic_text(t)) for t in memory.topics]
    item_vec = [batch.add(i.text) for i in memory.items]
    scene_views = [v for s in memory.scenes for v in trigger_views_of_scene(s)]
    item_views = [v for i in memory.items for v in trigger_views_of_item(i)]
    view_vec = [batch.add(v.text) for v in scene_views + item_views]
    in_scene = {t for s in memory.scenes for t in s.turn_ids}
    pending = [t for t in memory.turns if t.id not in in_scene]   # no scene holds them yet (docs/live.md)
    turn_vec = ([(batch.add(t.text), batch.add(turn_passage(t.speaker, t.text))) for t in memory.turns]
                if turns_too else [])
    vectors = batch.encode(encoder, batch_size)
    chain_ids = ([chain_from] if chain_from else []) + [s.id for s in memory.scenes]

    def view_row(v, n):
        return {"id": v.id, "host_id": v.host_id, "family": v.family, "channel": v.channel,
                "text": v.text, "position": v.position, "rationale": v.rationale,
                "embedding": vectors[view_vec[n]]}

    held = [t for t in memory.turns if t.id in in_scene]
    return {
        "terms_topic": term_rows("topic", ((t.id, {"title": t.title, "keywords_text": " ".join(t.keywords) or None,
                                                    "summary": t.summary}) for t in memory.topics)),
        "terms_scene": term_rows("scene", ((s.id, {"title": s.title, "summary": s.summary, "narrative": s.narrative,
                                                    "text": dialogue_text(s, turns)}) for s in memory.scenes)),
        "terms_item": term_rows("item", ((i.id, {"text": i.text}) for i in memory.items)),
        "terms_turn": term_rows("turn", ((t.id, {"text": t.text}) for t in held)),   # once a scene holds them
        "terms_trigger": link_rows(v.id for v in scene_views + item_views),
        "turns": [{"id": t.id, "seq": off["turns"] + n, "speaker": t.speaker, "text": t.text, "time": t.time,
                   "session": t.session, "embedding": vectors[turn_vec[n][0]],
                   "passage_embedding": vectors[turn_vec[n][1]]}
                  for n, t in enumerate(memory.turns)] if turns_too else [],
        "pending": [{"id": t.id} for t in pending] if turns_too else [],
        "scenes": [{"id": s.id, "seq": off["scenes"] + n, "title": s.title, "summary": s.summary,
                    "narrative": s.narrative, "time": s.time, "text": dialogue_text(s, turns),
                    "embedding": vectors[scene_vec[n][0]], "dialogue_embedding": vectors[scene_vec[n][1]]}
                   for n, s in enumerate(memory.scenes)],
        "scene_turns": [{"scene_id": s.id, "turn_id": t, "order": k}
                        for s in memory.scenes for k, t in enumerate(s.turn_ids)],
        "chain": [{"from": a, "to": b} for a, b in zip(chain_ids, chain_ids[1:])],
        "topics": [{"id": t.id, "seq": off["topics"] + n, "title": t.title, "keywords": t.keywords,
                    "keywords_text": " ".join(t.keywords) or None, "summary": t.summary,
                    "embedding": vectors[topic_vec[n]]} for n, t in enumerate(memory.topics)],
        "topic_scenes": [{"topic_id": t.id, "scene_id": s, "order": k}
                         for t in memory.topics for k, s in enumerate(t.scene_ids)],
        "items": [{"id": i.id, "seq": off["items"] + n, "kind": i.kind, "text": i.text, "time": i.time,
                   "turn_ids": i.turn_ids, "embedding": vectors[item_vec[n]], "written_by": written_by}
                  for n, i in enumerate(memory.items)],
        "item_scenes": [{"item_id": i.id, "scene_id": s, "order": k}
                        for i in memory.items for k, s in enumerate(i.scene_ids)],
        "scene_triggers": [view_row(v, n) for n, v in enumerate(scene_views)],
        "scene_horizon": [{"id": s.id} for s in memory.scenes],
        "item_triggers": [view_row(v, len(scene_views) + n) for n, v in enumerate(item_views)],
        "personas": [{"speaker": p.speaker, "seq": n, "summary": p.summary}
                     for n, p in enumerate(memory.personas)],
    }


def add_statistics(store: Store) -> list[str]:
    """Keep the BM25 statistics, index counts and scenes' Horizon vectors of every memory
    written before they were kept with it (retrieve/lexical.py, store/scene_horizon): each
    object linked to the memory's :Term nodes (unless it has them already), each scene's Horizon
    vector written, in batches, under the memory's write lease, then the memory marked. Returns
    the memories done."""
    done = []
    for row in store.run("store/memory_unstated"):
        pid = row["pid"]
        with WriteLease(store, name_of(pid), "add its statistics") as lease:
            kinds = [("scene", "Scene")] if row["terms"] else [*LABELS.items(), ("trigger", "Trigger")]
            for kind, label in kinds:
                after = None
                while True:
                    lease.ensure()
                    with store.transaction() as tx:
                        lease.check_in(tx)
                        found = store.tx_run(tx, "store/terms_read", memory_id=pid, label=label, ids=None,
                                             after=after, limit=store.settings.write_batch)
                        if not row["terms"]:
                            docs = ((r["id"], r["fields"]) for r in found)
                            rows = term_rows(kind, docs) if kind in KINDS else link_rows(r["id"] for r in found)
                            store.tx_run(tx, "store/terms_write", memory_id=pid, label=label, rows=rows)
                        if label == "Scene":
                            store.tx_run(tx, "store/scene_horizon", memory_id=pid, rows=[{"id": r["id"]} for r in found])
                    if len(found) < store.settings.write_batch:
                        break
                    after = found[-1]["id"]
            with lease.committing(), store.transaction() as tx:
                lease.check_in(tx)
                store.tx_run(tx, "store/memory_stated", memory_id=pid, version=new_version())
        done.append(pid)
    return done


EXPORT_TRIES = 5   # reads of a memory that a write keeps changing before `export_memory` gives up


def export_memory(store: Store, memory_id: str, settled: bool = True) -> MemoryDoc:
    """Read a whole memory (by its name, or the id its objects carry) back from the database:
    one version of it, the header read before and after every object (a write that lands
    meanwhile, or a replacement's switch, makes it read again). `settled=False` (a build, which
    holds the lease: only adds of turns may land) reads again after a switch alone."""
    for attempt in range(EXPORT_TRIES):
        time.sleep(0.2 * attempt)   # a write landed during the read before: let the writer go on
        header = store.memory(memory_id)
        doc = _read_memory(store, header)
        after = store.run("store/memory_get", memory_id=memory_id)
        if after and after[0]["pid"] == header["pid"] and (not settled or after[0]["version"] == header["version"]):
            return doc
    raise MemoryBusy(f"memory {name_of(memory_id)!r} kept changing while it was exported; try again")


def _read_memory(store: Store, header: dict) -> MemoryDoc:
    pid = header["pid"]
    q = lambda name: store.run(name, memory_id=pid)  # noqa: E731
    scene_trig: dict[str, dict] = defaultdict(dict)
    horizon: dict[str, list] = defaultdict(list)
    item_trig: dict[str, dict[int, ItemTrigger]] = defaultdict(dict)
    for v in q("store/export_triggers"):
        if v["family"] == SCENE.key:
            scene_trig[v["host_id"]][v["channel"]] = v["text"]
        elif v["family"] == HORIZON.key:
            horizon[v["host_id"]].append((v["position"], HorizonTrigger(v["channel"], v["text"])))
        else:
            trig = item_trig[v["host_id"]].setdefault(v["position"], ItemTrigger(rationale=v["rationale"]))
            if v["channel"] in ("concept", "bridge"):  # the joint view is derived from both
                setattr(trig, v["channel"], v["text"])
    return MemoryDoc(
        memory_id=header["id"],
        speakers=list(header["speakers"] or []),
        turns=[Turn(**r) for r in q("store/export_turns")],
        scenes=[Scene(**r, scene_trigger=scene_trig[r["id"]],
                      horizon=[h for _, h in sorted(horizon[r["id"]], key=lambda p: p[0])])
                for r in q("store/export_scenes")],
        topics=[Topic(id=r["id"], scene_ids=r["scene_ids"], title=r["title"],
                      keywords=list(r["keywords"] or []), summary=r["summary"]) for r in q("store/export_topics")],
        items=[Item(**r, triggers=[t for _, t in sorted(item_trig[r["id"]].items())])
               for r in q("store/export_items")],
        personas=[Persona(**r) for r in q("store/export_personas")],
    )
