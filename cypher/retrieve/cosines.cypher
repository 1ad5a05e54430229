// The cosine of each of some scenes of one memory with the query, for the scenes of a recall's
// pool that retrieve/rankings did not score (rare: a fusion lifted a scene from deep in its
// lists). $memory_id, $vector, $ids. Columns: id, score (cosine mapped to [0, 1]); a scene
// without a usable embedding is left out.
UNWIND $ids AS id
MATCH (s:Scene {memory_id: $memory_id, id: id})
WHERE size(s.embedding) = size($vector)
  AND CASE WHEN s.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL>
           THEN 0 < reduce(q = 0.0, x IN s.embedding | q + x * x) < 1e300 ELSE false END
RETURN s.id AS id, vector.similarity.cosine(s.embedding, $vector) AS score
