// Take over a lease whose holder is known to be dead (a process of this host that no longer
// runs), only if it is still that holder's: a compare-and-swap on its token.
// $memory_id, $stale (the dead holder's token), $token, $holder, $host, $pid, $ttl_ms.
// Columns: acquired (bool).
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.token = $stale
SET l.token = $token, l.holder = $holder, l.host = $host, l.pid = $pid, l.since = timestamp(),
    l.expires_at = timestamp() + $ttl_ms, l.committing = false
RETURN l IS NOT NULL AS acquired
