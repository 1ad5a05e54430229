// Deletes every :Term node of one memory (its BM25 statistics and index counts), at most $limit
// of them (a caller repeats it until fewer are deleted; run after the objects that link to
// them, so that each goes with few relationships). $memory_id. Column: deleted.
MATCH (n:Term {memory_id: $memory_id})
WITH n LIMIT $limit
DETACH DELETE n
RETURN count(*) AS deleted
