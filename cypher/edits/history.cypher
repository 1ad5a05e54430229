// One object's history: how it was first written and the edits recorded for it, oldest first.
// $memory_id, $kind, $id. One row; none when the memory does not exist.
// Columns: created_at (the memory's, ISO 8601), written_at (an item's first write, epoch ms; null
// for turns and scenes, and items written before it was kept), written_by (an item's writer,
// `import` or `build`; else how the memory was made: `import`, or `add` for a live memory),
// changes ([{seq, at (epoch ms), op, by, before, after (JSON text)}]).
MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL
OPTIONAL MATCH (i:Item {memory_id: $memory_id, id: $id}) WHERE $kind = 'item'
RETURN m.created_at AS created_at, i.written_at AS written_at,
       coalesce(i.written_by, CASE WHEN m.created_by_add THEN 'add' ELSE 'import' END) AS written_by,
       COLLECT { MATCH (c:Change {memory_id: $memory_id, kind: $kind, object_id: $id})
                 RETURN {seq: c.seq, at: c.at, op: c.op, by: c.by, before: c.before, after: c.after} ORDER BY c.seq } AS changes
