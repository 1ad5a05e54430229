// Marks one memory's BM25 statistics and index counts as kept (retrieve/statistics reads the
// mark). $memory_id (the id its objects carry), $version (new: every process reads them again).
// Column: id.
MATCH (m:Memory {id: $memory_id})
SET m.terms = 1, m.version = $version
RETURN m.id AS id
