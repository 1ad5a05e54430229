// Memories left hidden by an import or a drop that did not finish (`importing` still set).
// $memory_id (null: every one). Columns: id, token.
MATCH (m:Memory)
WHERE m.importing IS NOT NULL AND ($memory_id IS NULL OR m.id = $memory_id)
RETURN m.id AS id, m.importing AS token
ORDER BY id
