// Deletes every Change of one memory with its relationships, at most
// $limit of them (a caller repeats it until fewer are deleted). $memory_id. Column: deleted.
MATCH (n:Change {memory_id: $memory_id})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
