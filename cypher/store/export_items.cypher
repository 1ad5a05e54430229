// A memory's items in order with their source scene ids and source turn ids. $memory_id.
// Columns: id, kind, text, time, scene_ids, turn_ids.
MATCH (i:Item {memory_id: $memory_id})
RETURN i.id AS id, i.kind AS kind, i.text AS text, i.time AS time,
       COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) RETURN s.id ORDER BY h.order } AS scene_ids,
       coalesce(i.turn_ids, []) AS turn_ids
ORDER BY i.seq
