// Give this writer's lease back (nothing happens when it is someone else's).
// $memory_id, $token. Columns: released (count).
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.token = $token
DELETE l
RETURN count(l) AS released
