// Inside an edit's transaction: one entry of the memory's history of edits (an object changed or
// deleted), numbered in order, and the memory's new version (recalls see the edit whole or not at
// all). $memory_id, $version, $change: {kind, object_id, op, by, before, after} (before and after
// as JSON text), $stale (the edit left objects stale: the memory is due for a build). Column: seq.
MATCH (m:Memory {id: $memory_id})
SET m.version = $version, m.change_seq = coalesce(m.change_seq, 0) + 1,
    m.stale_objects = CASE WHEN $stale THEN true ELSE m.stale_objects END
CREATE (c:Change {memory_id: $memory_id, seq: m.change_seq, at: timestamp(), kind: $change.kind,
                  object_id: $change.object_id, op: $change.op, by: $change.by,
                  before: $change.before, after: $change.after})
RETURN c.seq AS seq
