// Inside a write transaction: lock this writer's lease and confirm it is still held, so that no
// one takes it over while the transaction commits. $memory_id, $token, $ttl_ms.
// Columns: held (bool).
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.token = $token AND l.expires_at >= timestamp()
SET l.expires_at = timestamp() + $ttl_ms
RETURN l IS NOT NULL AS held
