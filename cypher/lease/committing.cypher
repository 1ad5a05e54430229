// Mark this writer's lease as committing (true) or not (false): readers that see the mark, or a
// changed version, while they recall run again (retrieve/rankings, retrieve/finish). The mark is set in a
// transaction of its own before the write transaction starts and cleared after it ends.
// $memory_id, $token, $on (bool). Columns: held (bool).
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.token = $token
SET l.committing = $on, l.committing_since = CASE WHEN $on THEN timestamp() ELSE null END
RETURN l IS NOT NULL AS held
