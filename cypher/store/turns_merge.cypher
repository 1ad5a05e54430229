// Writes turns. $memory_id; $rows: [{id, seq, speaker, text, time, session}].
UNWIND $rows AS r
MERGE (t:Turn {memory_id: $memory_id, id: r.id})
SET t.seq = r.seq, t.speaker = r.speaker, t.text = r.text, t.time = r.time, t.session = r.session
