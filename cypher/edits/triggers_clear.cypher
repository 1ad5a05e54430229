// Deletes the trigger views of some hosts of one memory (before new ones are written): the
// views of $families whose host is one of $ids. $memory_id. Column: deleted.
MATCH (v:Trigger {memory_id: $memory_id})
WHERE v.host_id IN $ids AND v.family IN $families
DETACH DELETE v
RETURN count(*) AS deleted
