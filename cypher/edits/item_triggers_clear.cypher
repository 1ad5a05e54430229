// Deletes one item's trigger views (before new ones are written). $memory_id, $id. Column: deleted.
MATCH (v:Trigger {memory_id: $memory_id, host_id: $id, family: 'item'})
DETACH DELETE v
RETURN count(*) AS deleted
