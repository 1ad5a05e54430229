// A memory's scenes in order with their turn ids. $memory_id.
// Columns: id, title, summary, narrative, time, turn_ids.
MATCH (s:Scene {memory_id: $memory_id})
RETURN s.id AS id, s.title AS title, s.summary AS summary, s.narrative AS narrative, s.time AS time,
       COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) RETURN t.id ORDER BY h.order } AS turn_ids
ORDER BY s.seq
