// Marks one memory's BM25 statistics, index counts and Horizon vectors as kept (store/memory_create) (retrieve/statistics reads the
// mark). $memory_id (the id its objects carry), $version (new: every process reads them again).
// Column: id.
MATCH (m:Memory {id: $memory_id})
SET m.terms = 2, m.version = $version
RETURN m.id AS id
