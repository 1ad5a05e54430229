// Take a memory's write lease, or report who holds it. The lease is created if absent; the
// SET of `touched` locks it before it is read, so two writers taking an expired lease at once
// are served one after the other and only the first takes it over. Times are the server's
// (timestamp(), ms), so writers on other machines agree on expiry.
// $memory_id, $token (this writer's), $holder (who it is), $host, $pid, $ttl_ms.
// Columns: acquired (bool), token, holder, host, pid, since, expires_at (ms since the epoch).
MERGE (l:WriteLease {memory_id: $memory_id})
  ON CREATE SET l.token = $token, l.holder = $holder, l.host = $host, l.pid = $pid, l.since = timestamp(),
                l.expires_at = timestamp() + $ttl_ms
SET l.touched = timestamp()
WITH l, l.token <> $token AND l.expires_at < timestamp() AS takeover
SET l.token = CASE WHEN takeover THEN $token ELSE l.token END,
    l.holder = CASE WHEN takeover THEN $holder ELSE l.holder END,
    l.host = CASE WHEN takeover THEN $host ELSE l.host END,
    l.pid = CASE WHEN takeover THEN $pid ELSE l.pid END,
    l.since = CASE WHEN takeover THEN timestamp() ELSE l.since END,
    l.expires_at = CASE WHEN takeover THEN timestamp() + $ttl_ms ELSE l.expires_at END,
    l.committing = CASE WHEN takeover THEN false ELSE l.committing END
RETURN l.token = $token AS acquired, l.token AS token, l.holder AS holder, l.host AS host, l.pid AS pid,
       l.since AS since, l.expires_at AS expires_at
