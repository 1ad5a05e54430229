// Dense ranking of one memory's Topic nodes (index topic_embedding), filtered to the memory inside the
// index. $vector, $memory_id, $limit. Columns: id, score (cosine mapped to [0, 1]).
CYPHER 25
MATCH (n:Topic)
  SEARCH n IN (VECTOR INDEX topic_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC, id
