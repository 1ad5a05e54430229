"""One memory's objects one at a time: its turns, scenes and items listed in order with cursor
paging, one of them with its triggers, sources and neighbours, an item's history (docs/api.md,
"Objects of a memory"). Reads only; the edits are in `edits.py`."""

from __future__ import annotations

import base64
import binascii
import json

from .errors import MemoryNotFound, ObjectNotFound, UsageError
from .store import Store

KINDS = ("turn", "scene", "item")
MAX_LIMIT = 500        # objects per page: a page is one query, its size bounded like a recall's
DEFAULT_LIMIT = 50
# each kind's fields, in the order the operations show them (Neo4j's maps have none)
FIELDS = {"turn": ("id", "speaker", "text", "time", "session", "scene_id", "pending"),
          "scene": ("id", "title", "summary", "narrative", "time", "turn_ids", "topic_ids", "stale"),
          "item": ("id", "kind", "text", "time", "scene_ids", "turn_ids", "stale")}
VIEW = ("id", "family", "channel", "text", "position", "rationale")   # a trigger view
SOURCE = {"turns": ("id", "speaker", "text", "time", "session"), "scenes": ("id", "title", "time"),
          "topics": ("id", "title"), "scene": ("id", "title", "time")}
PAGES = {"turn": "objects/turns_page", "scene": "objects/scenes_page", "item": "objects/items_page"}
GETS = {"turn": "objects/turn_get", "scene": "objects/scene_get", "item": "objects/item_get"}


def kind_of(value) -> str:
    """`turn`, `scene` or `item` from that word or its plural; UsageError otherwise."""
    kind = value[:-1] if isinstance(value, str) and value.endswith("s") else value
    if kind not in KINDS:
        raise UsageError(f"kind {value!r}: must be one of turns, scenes, items (or turn, scene, item)")
    return kind


def list_objects(store: Store, memory_id: str, kind: str, after: str | None = None,
                 limit: int = DEFAULT_LIMIT) -> dict:
    """A page of a memory's turns, scenes or items in their order: {"memory_id", "kind" (plural),
    "objects", "next" (the cursor of the next page, None after the last)}."""
    kind = kind_of(kind)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT:
        raise UsageError(f"limit {limit!r}: must be an integer from 1 to {MAX_LIMIT}")
    seq, last = _cursor_position(after, kind)
    rows = store.run(PAGES[kind], memory_id=memory_id, after_seq=seq, after_id=last, limit=limit + 1)
    if not rows:
        raise MemoryNotFound(f"no memory {memory_id!r}")
    objects = rows[0]["objects"]
    following = _cursor(kind, objects[limit - 1]) if len(objects) > limit else None
    return {"memory_id": memory_id, "kind": f"{kind}s", "objects": [shown(kind, o) for o in objects[:limit]],
            "next": following}


def get_object(store: Store, memory_id: str, kind: str, object_id: str) -> dict:
    """One turn, scene or item: {"memory_id", "kind", "object", "triggers" (its trigger views),
    "sources" (what it rests on), "neighbours", and for turns and scenes "derived" (the items
    that rest on it)}; ObjectNotFound names the kind and id when the memory has no such object."""
    kind = kind_of(kind)
    if not isinstance(object_id, str) or not object_id:
        raise UsageError(f"id {object_id!r}: must be a non-empty string")
    rows = store.run(GETS[kind], memory_id=memory_id, id=object_id)
    if not rows:
        raise MemoryNotFound(f"no memory {memory_id!r}")
    row = rows[0]
    if row["object"] is None:
        raise ObjectNotFound(f"memory {memory_id!r} has no {kind} {object_id!r}")
    out = {"memory_id": memory_id, "kind": kind, "object": shown(kind, row["object"]),
           "triggers": [_ordered(v, VIEW) for v in row.get("triggers", [])]}
    if kind == "turn":
        out["sources"] = {"scene": row["scene"] and _ordered(row["scene"], SOURCE["scene"]),
                          "pending": row["object"]["pending"]}
        out["neighbours"] = {"previous": row["previous"], "next": row["next"]}
    else:
        held = ("turns", "topics") if kind == "scene" else ("scenes", "turns")
        out["sources"] = {key: [_ordered(r, SOURCE[key]) for r in row[key]] for key in held}
        out["neighbours"] = ({"previous": row["previous"], "next": row["next"]} if kind == "scene"
                             else {"items": row["items"]})
    if kind != "item":
        out["derived"] = {"items": row["items"]}
    return out


def shown(kind: str, row: dict) -> dict:
    """An object as the operations show it: its fields in order (its `seq` is the cursor's business)."""
    return _ordered(row, FIELDS[kind])


def _ordered(row: dict, keys: tuple[str, ...]) -> dict:
    return {k: row[k] for k in keys}


def _cursor(kind: str, row: dict) -> str:
    """An opaque cursor: the listing's kind and the position of the last object of a page."""
    raw = json.dumps([kind, row["seq"], row["id"]], separators=(",", ":")).encode("utf-8")
    return base64.urlsafe_b64encode(raw).decode("ascii").rstrip("=")


def _cursor_position(after: str | None, kind: str) -> tuple[int | None, str | None]:
    if after is None:
        return None, None
    problem = f"after {after!r}: not a cursor of this listing of {kind}s (pass the `next` of the page before)"
    try:
        value = json.loads(base64.urlsafe_b64decode(after + "=" * (-len(after) % 4)))
    except (ValueError, TypeError, binascii.Error):
        raise UsageError(problem) from None
    if (not isinstance(value, list) or len(value) != 3 or value[0] != kind or isinstance(value[1], bool)
            or not isinstance(value[1], int) or not isinstance(value[2], str)):
        raise UsageError(problem)
    return value[1], value[2]
