// Memories left hidden by an import or a drop that did not finish (`importing` still set), and
// staged versions of a replacement under way or killed. $memory_id (a name: its own node and its
// staged versions, the range of store/memory_get; null: every one). Columns: id (the node's
// id: `store.lease.name_of` gives its name), token.
MATCH (m:Memory)
WHERE m.importing IS NOT NULL AND ($memory_id IS NULL OR (m.id >= $memory_id AND m.id < $memory_id + '$'))
RETURN m.id AS id, m.importing AS token
ORDER BY id
