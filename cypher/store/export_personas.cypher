// A memory's personas. $memory_id. Columns: speaker, summary.
MATCH (p:Persona {memory_id: $memory_id})
RETURN p.speaker AS speaker, p.summary AS summary
ORDER BY p.seq
