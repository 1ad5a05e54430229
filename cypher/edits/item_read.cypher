// Inside an edit's transaction: one item as it is before the edit (the history keeps it), with
// the memory node write-locked as an add does (live/memory_lock). $memory_id, $id. One row; none
// when the memory does not exist (or is hidden). Column: item ({id, kind, text, time, scene_ids,
// turn_ids, stale}; null: no such item).
MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL
SET m.add_lock = timestamp()
WITH m
OPTIONAL MATCH (i:Item {memory_id: $memory_id, id: $id})
RETURN CASE WHEN i IS NOT NULL THEN {id: i.id, kind: i.kind, text: i.text, time: i.time,
         scene_ids: COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) RETURN s.id ORDER BY h.order },
         turn_ids: coalesce(i.turn_ids, []), stale: coalesce(i.stale, false)} END AS item
