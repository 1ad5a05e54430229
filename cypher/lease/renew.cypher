// Extend this writer's lease; no row when the lease is no longer this writer's.
// $memory_id, $token, $ttl_ms. Columns: expires_at.
MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.token = $token
SET l.expires_at = timestamp() + $ttl_ms
RETURN l.expires_at AS expires_at
