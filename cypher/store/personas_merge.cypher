// Writes personas. $memory_id; $rows: [{speaker, seq, summary}].
UNWIND $rows AS r
MERGE (p:Persona {memory_id: $memory_id, speaker: r.speaker})
SET p.seq = r.seq, p.summary = r.summary
