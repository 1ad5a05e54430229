// Who holds a memory's write lease, if anyone. $memory_id.
// Columns: holder, since, expires_at (ms since the epoch), committing; no row when free.
MATCH (l:WriteLease {memory_id: $memory_id})
RETURN l.holder AS holder, l.since AS since, l.expires_at AS expires_at, coalesce(l.committing, false) AS committing
