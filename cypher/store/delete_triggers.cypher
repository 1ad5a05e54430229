// Deletes every Trigger of one memory with its relationships. $memory_id. Column: deleted.
MATCH (n:Trigger {memory_id: $memory_id})
DETACH DELETE n
RETURN count(*) AS deleted
