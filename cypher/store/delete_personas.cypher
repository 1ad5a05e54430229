// Deletes every Persona of one memory with its relationships. $memory_id. Column: deleted.
MATCH (n:Persona {memory_id: $memory_id})
DETACH DELETE n
RETURN count(*) AS deleted
