"""Edits of one memory's objects: delete one turn or one item, correct one item's text, and the
history every edit leaves (docs/api.md, "Delete, correct, history"). Reads are in `objects.py`.

Each edit runs under the memory's write lease (so no build, import or other edit runs beside
it), marks the lease `committing` around one write transaction that also locks the memory node
as an add does, and sets a new version in that transaction: a recall sees the memory before the
edit or after it, never between. Every edit records a `Change` (what was there before, what is
there after, who asked) that `history` answers, also once the object is gone.

What an edit cannot redo without an LLM it marks `stale`: a scene that lost a turn keeps the
title, summary, narrative and trigger views written from it (its dialogue text and dialogue
embedding are recomputed); an item that lost one of its source turns, or whose text was
corrected with no LLM configured, keeps its trigger views. `get` and `list` show the mark.
"""

from __future__ import annotations

import datetime
import json
from typing import Callable

from .encode import Encoder
from .errors import MemoryNotFound, ObjectNotFound, UsageError
from .format import MAX_TEXT_BYTES
from .model import Item, MemoryDoc, Scene, Turn
from .objects import FIELDS, get_object, kind_of
from .retrieve.lexical import KINDS, LABELS, term_key, term_rows
from .store import Store, WriteLease, new_version
from .textio import text_problem
from .transfer import dialogue_text, memory_rows, write_rows

MAX_BY = 200   # characters of an edit's `by` (who asked: a user, a token's name)


def delete_item(store: Store, memory_id: str, item_id: str, by: str | None = None) -> dict:
    """Delete one item and its trigger views; {"memory_id", "kind": "item", "id", "deleted":
    {"items", "triggers"}, "change"} (the history entry's number)."""
    _check_id("id", item_id)
    by = _who(by)
    with WriteLease(store, memory_id, f"delete item {item_id}") as lease:
        with lease.committing(), store.transaction() as tx:
            lease.check_in(tx)
            item = _read(store, tx, memory_id, "item", item_id)
            gone = store.tx_run(tx, "edits/items_delete", memory_id=memory_id, ids=[item_id])[0]
            restat(store, tx, memory_id)
            seq = _record(store, tx, memory_id, "item", item_id, "deleted", by, before=item)
    return {"memory_id": memory_id, "kind": "item", "id": item_id,
            "deleted": {"items": [item_id], "triggers": gone["triggers"]}, "change": seq}


def delete_turn(store: Store, memory_id: str, turn_id: str, encoder: Encoder, by: str | None = None) -> dict:
    """Delete one turn, and what rests on it alone.

    The items distilled from it alone go (with their trigger views); items distilled from it
    and other turns keep the others and are marked stale. Its scene keeps its other turns (its
    dialogue text and dialogue embedding recomputed, the scene marked stale), or, holding no
    other turn, goes with its trigger views, the items that rest on no other scene and the topics
    that hold no other scene; the scene chain is relinked around it. Nothing is left dangling.
    Returns {"memory_id", "kind": "turn", "id", "deleted": {"turns", "items", "scenes",
    "topics", "triggers"}, "stale": {"items", "scenes"}, "change"}."""
    _check_id("id", turn_id)
    by = _who(by)
    with WriteLease(store, memory_id, f"delete turn {turn_id}") as lease:
        with lease.committing(), store.transaction() as tx:
            lease.check_in(tx)
            rows = store.tx_run(tx, "edits/turn_read", memory_id=memory_id, id=turn_id)
            turn, scene, citing = _found(rows, memory_id, "turn", turn_id), rows[0]["scene"], rows[0]["citing"]
            alone = [i["id"] for i in citing if i["turn_ids"] == [turn_id]]
            shared = [{"id": i["id"], "turn_ids": [t for t in i["turn_ids"] if t != turn_id]}
                      for i in citing if i["turn_ids"] != [turn_id]]
            deleted = {"turns": [turn_id], "items": list(alone), "scenes": [], "topics": [], "triggers": 0}
            stale = {"items": [r["id"] for r in shared], "scenes": []}
            deleted["triggers"] += store.tx_run(tx, "edits/items_delete", memory_id=memory_id, ids=alone)[0]["triggers"]
            store.tx_run(tx, "edits/items_retarget", memory_id=memory_id, rows=shared)
            store.tx_run(tx, "edits/turn_delete", memory_id=memory_id, id=turn_id)
            if scene is not None:
                kept = [t for t in scene["turns"] if t["id"] != turn_id]
                if kept:
                    turns = {t["id"]: Turn(t["id"], t["speaker"], t["text"]) for t in kept}
                    text = dialogue_text(Scene(scene["id"], list(turns)), turns)
                    store.tx_run(tx, "edits/scene_rewrite", memory_id=memory_id, id=scene["id"], text=text,
                                 dialogue_embedding=encoder.encode([text])[0])
                    stale["scenes"].append(scene["id"])
                else:
                    out = store.tx_run(tx, "edits/scene_delete", memory_id=memory_id, id=scene["id"])[0]
                    deleted["scenes"].append(scene["id"])
                    deleted["items"] += out["items"]
                    deleted["topics"] += out["topics"]
                    deleted["triggers"] += out["triggers"]
            restat(store, tx, memory_id, {"scene": stale["scenes"]})
            seq = _record(store, tx, memory_id, "turn", turn_id, "deleted", by, before=turn,
                          after={"deleted": deleted, "stale": stale}, stale=bool(stale["items"] or stale["scenes"]))
    return {"memory_id": memory_id, "kind": "turn", "id": turn_id, "deleted": deleted, "stale": stale,
            "change": seq}


def update_item(store: Store, memory_id: str, item_id: str, text: str, encoder: Encoder,
                triggers_of: Callable[[Item], list] | None = None, by: str | None = None) -> dict:
    """Correct one item's text: its embedding is rewritten; its trigger views are written anew by
    `triggers_of` (the build's item-trigger stage with an LLM) or, without one, kept and the item
    marked stale until a build with an LLM rewrites them. Returns {"memory_id", "kind": "item",
    "id", "object" (the item after), "triggers": "rewritten" or "stale", "change"}."""
    _check_id("id", item_id)
    if not isinstance(text, str) or not text.strip():
        raise UsageError("text: must be a non-empty string")
    why = text_problem(text)
    if why:
        raise UsageError(f"text is {why}")
    if len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        raise UsageError(f"text is longer than the limit of {MAX_TEXT_BYTES} bytes")
    by = _who(by)
    with WriteLease(store, memory_id, f"correct item {item_id}") as lease:
        before = _read_item(store, memory_id, item_id)   # the lease keeps it as it is until the write
        corrected = Item(item_id, before["kind"], text, before["scene_ids"], before["time"],
                         turn_ids=before["turn_ids"])
        if triggers_of is not None:   # the LLM's work, outside the transaction
            corrected.triggers = triggers_of(corrected)
        lease.ensure()
        rows = memory_rows(MemoryDoc(memory_id=memory_id, turns=[], scenes=[], topics=[], items=[corrected]),
                           encoder, store.settings.encode_batch, turns_too=False)
        with lease.committing(), store.transaction() as tx:
            lease.check_in(tx)
            _read(store, tx, memory_id, "item", item_id)
            store.tx_run(tx, "edits/item_rewrite", memory_id=memory_id, id=item_id, text=text,
                         embedding=rows["items"][0]["embedding"].tolist(), stale=triggers_of is None)
            if triggers_of is not None:
                store.tx_run(tx, "edits/triggers_clear", memory_id=memory_id, ids=[item_id], families=["item"])
                write_rows(store, tx, memory_id, _only(rows, "item_triggers", "terms_trigger"))
            restat(store, tx, memory_id, {"item": [item_id]})
            after = _in_order("item", {**before, "text": text, "stale": triggers_of is None})
            seq = _record(store, tx, memory_id, "item", item_id, "updated", by, before=before, after=after,
                          stale=triggers_of is None)
    return {"memory_id": memory_id, "kind": "item", "id": item_id, "object": after,
            "triggers": "stale" if triggers_of is None else "rewritten", "change": seq}


def refresh_stale(store: Store, lease: WriteLease, memory_id: str, encoder: Encoder,
                  card: Callable[[Scene, list[Turn]], object], scene_views: Callable[[Scene, list[Turn]], object],
                  item_views: Callable[[Item], list]) -> dict[str, list[str]]:
    """Inside a build (holding the lease): write again what edits marked stale. A stale scene
    gets a new card (title, summary, narrative) and new trigger views from the turns it keeps
    (`card`, `scene_views`: the build's stages, which fill the Scene in place); a stale item new
    trigger views (`item_views`). One transaction; each object's history records it. Returns
    {"scenes", "items"}: the ids written again."""
    row = store.run("edits/stale_read", memory_id=memory_id)[0]
    if not row["scenes"] and not row["items"]:
        if row["flagged"]:   # what was stale went since (deleted): the memory is no longer due
            store.run("edits/stale_clear", memory_id=memory_id, scene_ids=[], item_ids=[])
        return {"scenes": [], "items": []}
    turns = {t["id"]: Turn(t["id"], t["speaker"], t["text"], t["time"]) for s in row["scenes"] for t in s["turns"]}
    scenes = [Scene(s["id"], [t["id"] for t in s["turns"]], time=s["time"]) for s in row["scenes"]]
    for scene in scenes:
        lease.ensure()
        card(scene, [turns[t] for t in scene.turn_ids])
        scene_views(scene, [turns[t] for t in scene.turn_ids])
    items = [Item(i["id"], i["kind"], i["text"], i["scene_ids"], i["time"], turn_ids=i["turn_ids"]) for i in row["items"]]
    for item in items:
        lease.ensure()
        item.triggers = item_views(item)
    rows = memory_rows(MemoryDoc(memory_id=memory_id, turns=list(turns.values()), scenes=scenes, items=items),
                       encoder, store.settings.encode_batch, turns_too=False)
    for out, old in zip(rows["scenes"], row["scenes"]):
        out["seq"] = old["seq"]
    scene_ids, item_ids = [s.id for s in scenes], [i.id for i in items]
    with lease.committing(), store.transaction() as tx:
        lease.check_in(tx)
        store.tx_run(tx, "edits/triggers_clear", memory_id=memory_id, ids=scene_ids, families=["scene", "horizon"])
        store.tx_run(tx, "edits/triggers_clear", memory_id=memory_id, ids=item_ids, families=["item"])
        write_rows(store, tx, memory_id, _only(rows, "scenes", "terms_scene", "scene_triggers", "item_triggers",
                                               "terms_trigger", "scene_horizon"))
        restat(store, tx, memory_id)
        store.tx_run(tx, "edits/stale_clear", memory_id=memory_id, scene_ids=scene_ids, item_ids=item_ids)
        for kind, ids in (("scene", scene_ids), ("item", item_ids)):
            for object_id in ids:
                _record(store, tx, memory_id, kind, object_id, "rebuilt", "build")
    return {"scenes": scene_ids, "items": item_ids}


def restat(store: Store, tx, memory_id: str, written: dict[str, list[str]] | None = None) -> None:
    """Inside an edit's transaction: link the objects whose texts it wrote (`written`: ids per
    kind) to the memory's :Term nodes again, and total each field's lengths again (what deleted
    objects added goes): the memory's BM25 statistics stay its own (retrieve/lexical.py)."""
    for kind, ids in (written or {}).items():
        if ids:
            found = store.tx_run(tx, "store/terms_read", memory_id=memory_id, label=LABELS[kind], ids=ids,
                                 after=None, limit=len(ids))
            store.tx_run(tx, "store/terms_write", memory_id=memory_id, label=LABELS[kind],
                         rows=term_rows(kind, ((r["id"], r["fields"]) for r in found)))
    store.tx_run(tx, "store/terms_totals", memory_id=memory_id,
                 keys=[term_key(kind, f) for kind, fields in KINDS.items() for f in fields])


def _only(rows: dict[str, list[dict]], *keys: str) -> dict[str, list[dict]]:
    """The rows of some write queries of `memory_rows`, the others empty (transfer.write_rows)."""
    return {k: v if k in keys else [] for k, v in rows.items()}


def object_history(store: Store, memory_id: str, kind: str, object_id: str) -> dict:
    """How one turn, scene or item came to be as it is: {"memory_id", "kind", "id", "written"
    ({"at", "by", "turn_ids", "scene_ids"} for an item that exists; for a turn or scene
    {"at"}: the memory's creation; None once the object is gone), "changes" ([{seq, at, op,
    by, before, after}], oldest first)}. ObjectNotFound when the memory never held it."""
    kind = kind_of(kind)
    _check_id("id", object_id)
    rows = store.run("edits/history", memory_id=memory_id, kind=kind, id=object_id)
    if not rows:
        raise MemoryNotFound(f"no memory {memory_id!r}")
    row = rows[0]
    changes = [{**c, "at": _iso(c["at"]), "before": _loads(c["before"]), "after": _loads(c["after"])}
               for c in row["changes"]]
    try:
        now = get_object(store, memory_id, kind, object_id)["object"]
    except ObjectNotFound:
        if not changes:
            raise
        now = None
    written = None
    if now is not None:
        written = {"at": _iso(row["written_at"]) or row["created_at"], "by": row["written_by"]}
        if kind == "item":
            written.update(turn_ids=now["turn_ids"], scene_ids=now["scene_ids"])
    return {"memory_id": memory_id, "kind": kind, "id": object_id, "written": written, "changes": changes}


def _read_item(store: Store, memory_id: str, item_id: str) -> dict:
    rows = store.run("edits/item_read", memory_id=memory_id, id=item_id)
    return _found(rows, memory_id, "item", item_id)


def _read(store: Store, tx, memory_id: str, kind: str, object_id: str) -> dict:
    name = {"item": "edits/item_read", "turn": "edits/turn_read"}[kind]
    return _found(store.tx_run(tx, name, memory_id=memory_id, id=object_id), memory_id, kind, object_id)


def _found(rows: list[dict], memory_id: str, kind: str, object_id: str) -> dict:
    if not rows:
        raise MemoryNotFound(f"no memory {memory_id!r}")
    if rows[0][kind] is None:
        raise ObjectNotFound(f"memory {memory_id!r} has no {kind} {object_id!r}")
    return _in_order(kind, rows[0][kind])


def _in_order(kind: str, row: dict) -> dict:
    """An object's fields in the order `get` shows them (Neo4j's maps have none)."""
    return {k: row[k] for k in FIELDS[kind] if k in row}


def _record(store: Store, tx, memory_id: str, kind: str, object_id: str, op: str, by: str | None,
            before: dict | None = None, after: dict | None = None, stale: bool = False) -> int:
    """One history entry, and the memory's new version; `stale`: the edit left objects stale,
    so the memory is due for a build (the background worker builds it: live/due)."""
    change = {"kind": kind, "object_id": object_id, "op": op, "by": by,
              "before": json.dumps(before) if before is not None else None,
              "after": json.dumps(after) if after is not None else None}
    return store.tx_run(tx, "edits/change_add", memory_id=memory_id, version=new_version(), change=change,
                        stale=stale)[0]["seq"]


def _check_id(name: str, value) -> None:
    if not isinstance(value, str) or not value or len(value) > 256:
        raise UsageError(f"{name} {value!r}: must be a non-empty string of at most 256 characters")


def _who(by) -> str | None:
    if by is None:
        return None
    if not isinstance(by, str) or not by.strip() or len(by) > MAX_BY or text_problem(by):
        raise UsageError(f"by {by!r}: must be a non-empty line of text of at most {MAX_BY} characters")
    return by


def _loads(value: str | None):
    return json.loads(value) if value is not None else None


def _iso(ms: int | None) -> str | None:
    """Epoch milliseconds as an ISO 8601 UTC time."""
    if ms is None:
        return None
    return datetime.datetime.fromtimestamp(ms / 1000, datetime.timezone.utc).isoformat(timespec="milliseconds")
