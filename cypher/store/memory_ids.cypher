// A page of memory ids in order: those that sort after $after (null: from the first), at most
// $limit (an ordered seek of the Memory id index; hidden memories, an import or drop under
// way, are left out). Column: id.
MATCH (m:Memory)
WHERE m.id > coalesce($after, '') AND m.importing IS NULL
RETURN m.id AS id
ORDER BY id
LIMIT $limit
