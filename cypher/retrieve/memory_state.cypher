// What a recall checks before and after its queries: whether the memory exists, its version
// (new with every write), and whether a writer is committing to it right now, with the
// holder's host and pid. A mark counts while the lease is alive or the mark is younger than
// $commit_ms: the write transaction locks the lease, so a long commit cannot renew it.
// $memory_id, $commit_ms. Columns: exists, version, committing, host, pid.
OPTIONAL MATCH (m:Memory {id: $memory_id})
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
       l.host AS host, l.pid AS pid
