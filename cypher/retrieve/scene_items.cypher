// Items of the given scenes. $memory_id, $scene_ids. Column: id.
MATCH (s:Scene {memory_id: $memory_id})-[:HAS_ITEM]->(i:Item)
WHERE s.id IN $scene_ids
RETURN DISTINCT i.id AS id
