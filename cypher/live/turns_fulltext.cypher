// BM25 ranking of one memory's turns (the probe of `tmem db check`; recall runs the same
// search inside retrieve/rankings). $lucene: a query from lucene.scoped_query; $memory_id;
// $limit. Columns: id, score (best first).
CALL db.index.fulltext.queryNodes('turn_search', $lucene, {limit: $limit}) YIELD node, score
WHERE node.memory_id = $memory_id
RETURN node.id AS id, score
