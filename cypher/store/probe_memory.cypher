// A memory that holds at least one entry of a vector index (a node of $label, of trigger family
// $family when not null, with the indexed $property), for `tmem db check` to probe the index with
// a search that finds something, and how many entries the index holds for it: recall never
// searches deeper than that (Neo4j 2026.08 fails a filtered vector search that matches nothing
// after the index was rebuilt, or asks for more than it matches once the index holds a deleted
// entry: docs/reliability.md), and neither does the probe.
// Columns: memory_id, entries (no row: no such node).
CYPHER 25
MATCH (n:$($label))
WHERE ($family IS NULL OR n.family = $family) AND n[$property] IS NOT NULL
WITH n.memory_id AS memory_id
LIMIT 1
RETURN memory_id,
       COUNT { MATCH (x:$($label) {memory_id: memory_id})
               WHERE ($family IS NULL OR x.family = $family) AND x[$property] IS NOT NULL } AS entries
