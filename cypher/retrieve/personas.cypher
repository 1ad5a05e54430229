// Personas of one memory, optionally of one speaker. $memory_id, $speaker (null = all).
// Columns: speaker, summary.
MATCH (p:Persona {memory_id: $memory_id})
WHERE $speaker IS NULL OR p.speaker = $speaker
RETURN p.speaker AS speaker, p.summary AS summary
ORDER BY p.seq
