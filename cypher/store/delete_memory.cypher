// Deletes the Memory node itself (after its objects). $memory_id. Column: deleted.
MATCH (m:Memory {id: $memory_id})
DELETE m
RETURN count(*) AS deleted
