// Deletes one turn of a memory. $memory_id, $id. Column: deleted.
MATCH (t:Turn {memory_id: $memory_id, id: $id})
DETACH DELETE t
RETURN count(*) AS deleted
