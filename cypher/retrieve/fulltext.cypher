// BM25 ranking of one kind of object in one memory. $lucene: a query from lucene.scoped_query
// (its +ft_scope clause limits kind and memory inside Lucene); $memory_id; $limit.
// Columns: id, score (best first).
CALL db.index.fulltext.queryNodes('text_search', $lucene, {limit: $limit}) YIELD node, score
WHERE node.memory_id = $memory_id
RETURN node.id AS id, score
