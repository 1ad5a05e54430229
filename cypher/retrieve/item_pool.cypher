// The item pool: items of the selected scenes ∪ the given items (reached through triggers or
// flat search), with their source scenes and the exact cosine of the query.
// $memory_id, $scene_ids, $ids, $vector.
// Columns: id, by_scene, kind, text, time, scene_ids, score (cosine mapped to [0, 1]), best first.
CALL () {
  MATCH (s:Scene {memory_id: $memory_id})-[:HAS_ITEM]->(i:Item)
  WHERE s.id IN $scene_ids
  RETURN i, true AS by_scene
  UNION
  UNWIND $ids AS id
  MATCH (i:Item {memory_id: $memory_id, id: id})
  RETURN i, false AS by_scene
}
WITH i, max(by_scene) AS by_scene
RETURN i.id AS id, by_scene, i.kind AS kind, i.text AS text, i.time AS time,
       COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) WITH s, h ORDER BY h.order RETURN s.id } AS scene_ids,
       vector.similarity.cosine(i.embedding, $vector) AS score
ORDER BY score DESC
