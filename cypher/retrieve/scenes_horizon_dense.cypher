// Scenes of one memory by the mean cosine of their Horizon views (index scene_horizon_embedding,
// store/scene_horizon), filtered to the memory inside the index. $vector (the query's, of the
// encoder's dimension), $memory_id, $limit. Columns: id, score (the views' mean cosine mapped to [0, 1]).
CYPHER 25
WITH $vector + [0.0] AS query
MATCH (n:Scene)
  SEARCH n IN (VECTOR INDEX scene_horizon_embedding FOR query WHERE n.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC, id
