// A memory that holds at least one node of a label (of a trigger family, for triggers), for
// `tmem db check` to probe an index with a search that finds something: Neo4j 2026.08 fails a
// filtered vector search that matches nothing after the index was rebuilt. $label, $family
// (null: any), $property (the indexed property the node must have; null: any node: turns
// written before the turn channel have no passage embedding). Columns: memory_id (no row: no such node).
CYPHER 25
MATCH (n:$($label))
WHERE ($family IS NULL OR n.family = $family) AND ($property IS NULL OR n[$property] IS NOT NULL)
RETURN n.memory_id AS memory_id
LIMIT 1
