// A page of memory names in order: those that sort after $after (null: from the first), at most
// $limit (an ordered seek of the Memory id index; hidden memories, an import or drop under
// way, are left out). A staged version's id ("<name>#<token>", store/memory_get) sorts where
// its name does, and `$after + '$'` skips $after's own versions. Columns: id (the name), pid.
MATCH (m:Memory)
WHERE m.id >= coalesce($after + '$', '') AND m.importing IS NULL
RETURN m.id AS pid, split(m.id, '#')[0] AS id
ORDER BY pid
LIMIT $limit
