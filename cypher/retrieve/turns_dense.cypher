// Dense ranking of one memory's Turn nodes (index turn_embedding), filtered to the memory inside the
// index; `tmem db check` probes the index with it. $vector, $memory_id, $limit. Columns: id, score
// (cosine mapped to [0, 1]).
CYPHER 25
MATCH (n:Turn)
  SEARCH n IN (VECTOR INDEX turn_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN n.id AS id, score
ORDER BY score DESC, id
