// Scenes of the given topics. $memory_id, $topic_ids. Column: id.
MATCH (t:Topic {memory_id: $memory_id})-[:HAS_SCENE]->(s:Scene)
WHERE t.id IN $topic_ids
RETURN DISTINCT s.id AS id
