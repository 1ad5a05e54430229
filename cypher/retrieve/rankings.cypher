// The first round trip of a recall: the memory's state, then every ranking that depends only
// on the query, in one query (docs/retrieval.md, "Two round trips"). One row; each ranking is
// a list of {id, score} (score: Neo4j's cosine mapped to [0, 1], or BM25), best first.
// $memory_id, $vector, $limit, $commit_ms; lexical queries $topic_lucene, $scene_lucene,
// $item_lucene (null: not asked); switches $topics, $scene_dense, $dialogue, $item_dense,
// $persona (booleans) and $families (the trigger families asked for); view depths
// $scene_limit, $horizon_limit, $item_limit; $speaker (null: every persona).
// Columns: exists, version, committing, host, pid (as retrieve/memory_state), topic_bm25,
// topic_dense, topic_scenes ([{id, scenes}] for every ranked topic), scene_bm25, scene_dense,
// dialogue, scene_trigger and horizon (each scene's best view), item_views (item trigger views
// {host_id, position, channel, score}), item_bm25, item_dense, scene_cosine (the cosine of
// every scene some ranking or ranked topic reached), personas ([{speaker, summary}]).
CYPHER 25
CALL () {
  OPTIONAL MATCH (m:Memory {id: $memory_id})
  OPTIONAL MATCH (l:WriteLease {memory_id: $memory_id})
  WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
  RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
         l.host AS host, l.pid AS pid
}
CALL (exists) {
  WITH exists WHERE exists AND $topic_lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes('text_search', $topic_lucene, {limit: $limit}) YIELD node, score
  WHERE node.memory_id = $memory_id
  RETURN collect({id: node.id, score: score}) AS topic_bm25
}
CALL (exists) {
  WITH exists WHERE exists AND $topics
  MATCH (n:Topic)
    SEARCH n IN (VECTOR INDEX topic_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
    SCORE AS score
  WITH n, score ORDER BY score DESC
  RETURN collect({id: n.id, score: score}) AS topic_dense
}
CALL (topic_bm25, topic_dense) {
  UNWIND topic_bm25 + topic_dense AS ranked
  WITH DISTINCT ranked.id AS id
  MATCH (t:Topic {memory_id: $memory_id, id: id})
  RETURN collect({id: id, scenes: COLLECT { MATCH (t)-[:HAS_SCENE]->(s:Scene) RETURN s.id }}) AS topic_scenes
}
CALL (exists) {
  WITH exists WHERE exists AND $scene_lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes('text_search', $scene_lucene, {limit: $limit}) YIELD node, score
  WHERE node.memory_id = $memory_id
  RETURN collect({id: node.id, score: score}) AS scene_bm25
}
CALL (exists) {
  WITH exists WHERE exists AND $scene_dense
  MATCH (n:Scene)
    SEARCH n IN (VECTOR INDEX scene_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
    SCORE AS score
  WITH n, score ORDER BY score DESC
  RETURN collect({id: n.id, score: score}) AS scene_dense
}
CALL (exists) {
  WITH exists WHERE exists AND $dialogue
  MATCH (n:Scene)
    SEARCH n IN (VECTOR INDEX scene_dialogue_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
    SCORE AS score
  WITH n, score ORDER BY score DESC
  RETURN collect({id: n.id, score: score}) AS dialogue
}
CALL (exists) {
  WITH exists WHERE exists AND 'scene' IN $families
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'scene' LIMIT $scene_limit)
    SCORE AS score
  WITH v.host_id AS host, max(score) AS score ORDER BY score DESC
  RETURN collect({id: host, score: score}) AS scene_trigger
}
CALL (exists) {
  WITH exists WHERE exists AND 'horizon' IN $families
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'horizon' LIMIT $horizon_limit)
    SCORE AS score
  WITH v.host_id AS host, max(score) AS score ORDER BY score DESC
  RETURN collect({id: host, score: score}) AS horizon
}
CALL (exists) {
  WITH exists WHERE exists AND 'item' IN $families
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'item' LIMIT $item_limit)
    SCORE AS score
  WITH v, score ORDER BY score DESC
  RETURN collect({host_id: v.host_id, position: v.position, channel: v.channel, score: score}) AS item_views
}
CALL (exists) {
  WITH exists WHERE exists AND $item_lucene IS NOT NULL
  CALL db.index.fulltext.queryNodes('text_search', $item_lucene, {limit: $limit}) YIELD node, score
  WHERE node.memory_id = $memory_id
  RETURN collect({id: node.id, score: score}) AS item_bm25
}
CALL (exists) {
  WITH exists WHERE exists AND $item_dense
  MATCH (n:Item)
    SEARCH n IN (VECTOR INDEX item_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $limit)
    SCORE AS score
  WITH n, score ORDER BY score DESC
  RETURN collect({id: n.id, score: score}) AS item_dense
}
CALL (topic_scenes, scene_bm25, scene_dense, dialogue, scene_trigger, horizon) {
  UNWIND [t IN topic_scenes | t.scenes] + [[r IN scene_bm25 + scene_dense + dialogue + scene_trigger + horizon | r.id]] AS ids
  UNWIND ids AS id
  WITH DISTINCT id
  MATCH (s:Scene {memory_id: $memory_id, id: id})
  RETURN collect({id: id, score: vector.similarity.cosine(s.embedding, $vector)}) AS scene_cosine
}
CALL (exists) {
  WITH exists WHERE exists AND $persona
  MATCH (p:Persona {memory_id: $memory_id})
  WHERE $speaker IS NULL OR p.speaker = $speaker
  WITH p ORDER BY p.seq
  RETURN collect({speaker: p.speaker, summary: p.summary}) AS personas
}
RETURN exists, version, committing, host, pid, topic_bm25, topic_dense, topic_scenes, scene_bm25,
       scene_dense, dialogue, scene_trigger, horizon, item_views, item_bm25, item_dense,
       scene_cosine, personas
