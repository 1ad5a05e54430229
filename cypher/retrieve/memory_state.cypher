// What a recall checks before and after its queries: whether the memory exists, its version
// (new with every write), and whether a writer is committing to it right now (a lease marked
// `committing` that has not expired, with its holder's host and pid). $memory_id.
// Columns: exists, version, committing, host, pid.
OPTIONAL MATCH (m:Memory {id: $memory_id})
OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
WHERE l.committing = true AND l.expires_at >= timestamp()
RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
       l.host AS host, l.pid AS pid
