// The given scenes with their turns in order. $memory_id, $ids.
// Columns: id, title, summary, narrative, time, turns ([{id, speaker, text, time}]).
UNWIND $ids AS id
MATCH (s:Scene {memory_id: $memory_id, id: id})
RETURN s.id AS id, s.title AS title, s.summary AS summary, s.narrative AS narrative, s.time AS time,
       COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) WITH t, h ORDER BY h.order
                 RETURN {id: t.id, speaker: t.speaker, text: t.text, time: t.time} } AS turns
