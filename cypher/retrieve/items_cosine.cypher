// Exact cosine of the query against the given items. $memory_id, $ids, $vector.
// Columns: id, score (cosine mapped to [0, 1]).
UNWIND $ids AS id
MATCH (i:Item {memory_id: $memory_id, id: id})
RETURN id, vector.similarity.cosine(i.embedding, $vector) AS score
ORDER BY score DESC
