// Exact cosine of the query against the descriptive vector of the given scenes.
// $memory_id, $ids, $vector. Columns: id, score (cosine mapped to [0, 1]).
UNWIND $ids AS id
MATCH (s:Scene {memory_id: $memory_id, id: id})
RETURN id, vector.similarity.cosine(s.embedding, $vector) AS score
ORDER BY score DESC
