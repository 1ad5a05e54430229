// Deletes items of one memory with their trigger views. $memory_id, $ids.
// Columns: items, triggers (how many of each were deleted).
UNWIND $ids AS id
MATCH (i:Item {memory_id: $memory_id, id: id})
WITH collect(i) AS items
CALL (items) {
  UNWIND items AS i
  MATCH (v:Trigger)-[:TRIGGERS]->(i)
  DETACH DELETE v
  RETURN count(v) AS triggers
}
CALL (items) {
  UNWIND items AS i
  DETACH DELETE i
  RETURN count(*) AS deleted
}
RETURN deleted AS items, triggers
