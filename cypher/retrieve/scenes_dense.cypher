// Dense ranking of one memory's Scene nodes (index scene_embedding), filtered to the memory inside the
// index. $vector, $memory_id, $limit. Columns: id, score (cosine mapped to [0, 1]).
CYPHER 25
MATCH (n:Scene)
  SEARCH n IN (VECTOR INDEX scene_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC, id
