// Hides a memory from every reader before it is deleted in batches (`importing` set: readers
// and adds treat it as absent), so a drop killed half-way leaves hidden debris, never a memory
// missing part of its objects. $memory_id, $token. Column: id.
MATCH (m:Memory {id: $memory_id})
SET m.importing = $token
RETURN m.id AS id
