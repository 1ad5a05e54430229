// The given items with their source scene ids. $memory_id, $ids.
// Columns: id, kind, text, time, scene_ids.
UNWIND $ids AS id
MATCH (i:Item {memory_id: $memory_id, id: id})
RETURN i.id AS id, i.kind AS kind, i.text AS text, i.time AS time,
       COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) WITH s, h ORDER BY h.order RETURN s.id } AS scene_ids
