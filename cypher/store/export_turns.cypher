// A memory's turns in conversation order. $memory_id. Columns: id, speaker, text, time, session.
MATCH (t:Turn {memory_id: $memory_id})
RETURN t.id AS id, t.speaker AS speaker, t.text AS text, t.time AS time, t.session AS session
ORDER BY t.seq
