// Dense ranking of one memory's Item nodes (index item_embedding), filtered to the memory inside the
// index. $vector, $memory_id, $limit. Columns: id, score (cosine mapped to [0, 1]).
CYPHER 25
MATCH (n:Item)
  SEARCH n IN (VECTOR INDEX item_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC, id
