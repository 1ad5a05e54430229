// The scene pool: scenes of the prefiltered topics ∪ the given scenes (reached otherwise),
// each with the exact cosine of the query against its descriptive vector.
// $memory_id, $topic_ids, $ids, $vector.
// Columns: id, by_topic (reached through a topic), score (cosine mapped to [0, 1]), best first.
CALL () {
  MATCH (t:Topic {memory_id: $memory_id})-[:HAS_SCENE]->(s:Scene)
  WHERE t.id IN $topic_ids
  RETURN s, true AS by_topic
  UNION
  UNWIND $ids AS id
  MATCH (s:Scene {memory_id: $memory_id, id: id})
  RETURN s, false AS by_topic
}
WITH s, max(by_topic) AS by_topic
RETURN s.id AS id, by_topic, vector.similarity.cosine(s.embedding, $vector) AS score
ORDER BY score DESC
