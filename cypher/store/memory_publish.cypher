// The switch of an import written in batches: the memory, hidden while its objects were
// written (`importing`: the import's token), becomes visible with a new version in one small
// transaction. $memory_id, $token, $version. Column: id (none: not this import's memory).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing = $token
REMOVE m.importing
SET m.version = $version
RETURN m.id AS id
