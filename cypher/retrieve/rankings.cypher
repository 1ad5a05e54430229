// The first round trip of a recall: the memory's state, then every ranking that depends only
// on the query, in one query (docs/retrieval.md, "Two round trips"). One row; each ranking is
// two lists, <name>_ids and <name>_scores (Neo4j's cosine mapped to [0, 1]), best first, equal
// scores by id: parallel lists cost the client far less to decode than lists of maps. BM25 is
// ranked by the caller on the memory's own statistics (retrieve/lexical.py): the topic and scene
// rankings arrive as $topic_bm25_ids and $scene_bm25_ids, to gather their topics' scenes and
// cosines here.
// No vector search asks for more entries than its index holds for the memory, and none runs when it
// holds none: Neo4j 2026.08 fails a filtered search whose LIMIT exceeds its matches with an internal
// error once the index was rebuilt (`tmem db check --repair`) or holds a deleted entry of any
// memory (docs/reliability.md); the caller caps each depth by the memory's counts (Lexicon.depth).
// $memory_id, $lease_id (the memory's name: its lease), $vector, $limit (the depth of the exact recent ranking), $commit_ms; the vector
// searches' depths $topic_k, $scene_k, $dialogue_k, $item_k, $lane_limit; $topic_bm25_ids, $scene_bm25_ids; switches $topics,
// $scene_dense, $dialogue, $turns, $item_dense, $persona, $recent, $recent_lexical (booleans) and
// $families (the trigger families asked for); $past_commit (run the searches even though a
// writer's `committing` mark is set: the caller knows it is stale; otherwise a recall that finds
// a commit under way gets the state alone); view depths $scene_limit, $horizon_limit,
// $item_limit, $lane_limit; $horizon_mean and $horizon_whole (booleans, below); $speaker (null: every persona).
// Every ranking leaves out what reads as null: a node a concurrent replacement or drop deleted
// after the search found it (its parallel lists keep one length; the version the second query
// reads tells the caller the memory changed).
// Columns: exists, version, committing, host, pid (the memory's state); the rankings
// topic_dense, scene_dense, dialogue, lane_dense (the $lane_limit turns nearest the query by
// their passage embedding, of those a scene holds, with their scenes in lane_dense_scenes: pending
// ones take places and are left out; only in a memory marked `turn_passages`, whose every turn has
// a passage embedding; the cascade's turn channel ranks scenes by their best one),
// scene_trigger (each scene's best view) and horizon (each scene's best view, or with $horizon_mean
// the mean of its views), item_dense, scene_cosine (every scene some
// ranking or ranked topic reached); topic_ids with topic_scenes (the scenes of every ranked
// topic); recent_dense (the turns no scene holds yet, by exact cosine) and recent_texts
// ([id, text] of each of them, for the caller's BM25); the item trigger views as item_views
// ([host_id, position, channel, score] lists); personas ([{speaker, summary}]).
CYPHER 25
CALL () {
  OPTIONAL MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL   // hidden: absent
  OPTIONAL MATCH (l:WriteLease {memory_id: $lease_id})   // the memory's name's (store/lease.py)
  WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
  RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
         l.host AS host, l.pid AS pid
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $topics
    AND $topic_k > 0 AND EXISTS { MATCH (:Topic {memory_id: $memory_id}) }
  MATCH (n:Topic)
    SEARCH n IN (VECTOR INDEX topic_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $topic_k)
    SCORE AS score
  WITH n, score WHERE n.id IS NOT NULL ORDER BY score DESC, n.id
  RETURN collect(n.id) AS topic_dense_ids, collect(score) AS topic_dense_scores
}
CALL (topic_dense_ids) {
  UNWIND $topic_bm25_ids + topic_dense_ids AS id
  WITH DISTINCT id
  MATCH (t:Topic {memory_id: $memory_id, id: id})
  RETURN collect(id) AS topic_ids, collect(COLLECT { MATCH (t)-[:HAS_SCENE]->(s:Scene) RETURN s.id }) AS topic_scenes
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $scene_dense
    AND $scene_k > 0 AND EXISTS { MATCH (:Scene {memory_id: $memory_id}) }
  MATCH (n:Scene)
    SEARCH n IN (VECTOR INDEX scene_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $scene_k)
    SCORE AS score
  WITH n, score WHERE n.id IS NOT NULL ORDER BY score DESC, n.id
  RETURN collect(n.id) AS scene_dense_ids, collect(score) AS scene_dense_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $dialogue
    AND $dialogue_k > 0 AND EXISTS { MATCH (:Scene {memory_id: $memory_id}) }
  MATCH (n:Scene)
    SEARCH n IN (VECTOR INDEX scene_dialogue_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $dialogue_k)
    SCORE AS score
  WITH n, score WHERE n.id IS NOT NULL ORDER BY score DESC, n.id
  RETURN collect(n.id) AS dialogue_ids, collect(score) AS dialogue_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $turns AND $lane_limit > 0
    AND EXISTS { MATCH (m:Memory {id: $memory_id}) WHERE m.turn_passages = true }
    AND EXISTS { MATCH (t:Turn {memory_id: $memory_id}) WHERE t.passage_embedding IS NOT NULL AND NOT t:Pending }
  MATCH (n:Turn)
    SEARCH n IN (VECTOR INDEX turn_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $lane_limit)
    SCORE AS score
  MATCH (s:Scene)-[:HAS_TURN]->(n)
  WITH s.id AS scene, n.id AS turn, score WHERE scene IS NOT NULL AND turn IS NOT NULL
  ORDER BY score DESC, turn
  RETURN collect(turn) AS lane_dense_ids, collect(score) AS lane_dense_scores, collect(scene) AS lane_dense_scenes
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND 'scene' IN $families AND $scene_limit > 0
    AND EXISTS { MATCH (t:Trigger {memory_id: $memory_id}) WHERE t.family = 'scene' }
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'scene' LIMIT $scene_limit)
    SCORE AS score
  WITH v.host_id AS host, score WHERE host IS NOT NULL
  WITH host, max(score) AS score ORDER BY score DESC, host
  RETURN collect(host) AS scene_trigger_ids, collect(score) AS scene_trigger_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND 'horizon' IN $families AND $horizon_limit > 0
    AND EXISTS { MATCH (t:Trigger {memory_id: $memory_id}) WHERE t.family = 'horizon' }
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'horizon' LIMIT $horizon_limit)
    SCORE AS score
  WITH v, score WHERE v.host_id IS NOT NULL
  WITH collect({host: v.host_id, score: score, view: v}) AS found, min(score) AS floor
  UNWIND found AS f
  WITH f.host AS host, floor, max(f.score) AS best, sum(f.score) AS total, count(*) AS returned,
       head(collect(f.view)) AS view
  // $horizon_mean: a scene scores the mean of all its Horizon views. The search asks for every
  // Horizon view of the memory up to a cap: when it returned them all ($horizon_whole) that is the
  // mean of the views it returned; otherwise a view of the scene it did not return counts at the
  // lowest score it returned (an upper bound of that view's score), the scene's views counted
  // through its TRIGGERS links
  OPTIONAL CALL (view) {
    WITH view WHERE $horizon_mean AND NOT $horizon_whole
    MATCH (view)-[:TRIGGERS]->(scene:Scene)
    RETURN COUNT { (scene)<-[:TRIGGERS]-(w:Trigger) WHERE w.family = 'horizon' } AS held
  }
  WITH host, CASE WHEN $horizon_mean THEN (total + (coalesce(held, returned) - returned) * floor) / coalesce(held, returned)
                  ELSE best END AS score
  ORDER BY score DESC, host
  RETURN collect(host) AS horizon_ids, collect(score) AS horizon_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND 'item' IN $families AND $item_limit > 0
    AND EXISTS { MATCH (t:Trigger {memory_id: $memory_id}) WHERE t.family = 'item' }
  MATCH (v:Trigger)
    SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector
                 WHERE v.memory_id = $memory_id AND v.family = 'item' LIMIT $item_limit)
    SCORE AS score
  WITH v, score WHERE v.host_id IS NOT NULL AND v.position IS NOT NULL ORDER BY score DESC, v.host_id, v.position
  RETURN collect([v.host_id, v.position, v.channel, score]) AS item_views
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $item_dense
    AND $item_k > 0 AND EXISTS { MATCH (:Item {memory_id: $memory_id}) }
  MATCH (n:Item)
    SEARCH n IN (VECTOR INDEX item_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $item_k)
    SCORE AS score
  WITH n, score WHERE n.id IS NOT NULL ORDER BY score DESC, n.id
  RETURN collect(n.id) AS item_dense_ids, collect(score) AS item_dense_scores
}
CALL (topic_scenes, scene_dense_ids, dialogue_ids, lane_dense_scenes, scene_trigger_ids, horizon_ids) {
  UNWIND topic_scenes + [$scene_bm25_ids + scene_dense_ids + dialogue_ids + lane_dense_scenes + scene_trigger_ids + horizon_ids] AS ids
  UNWIND ids AS id
  WITH DISTINCT id
  MATCH (s:Scene {memory_id: $memory_id, id: id})
  WITH id, vector.similarity.cosine(s.embedding, $vector) AS score WHERE score IS NOT NULL
  RETURN collect(id) AS scene_cosine_ids, collect(score) AS scene_cosine_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $recent_lexical
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE t.id IS NOT NULL AND t.text IS NOT NULL
  RETURN collect([t.id, t.text]) AS recent_texts
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $recent
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE t.embedding IS NOT NULL
  WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
  WHERE t.id IS NOT NULL AND score IS NOT NULL
  ORDER BY score DESC, t.id
  LIMIT $limit
  RETURN collect(t.id) AS recent_dense_ids, collect(score) AS recent_dense_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $persona
  MATCH (p:Persona {memory_id: $memory_id})
  WHERE $speaker IS NULL OR p.speaker = $speaker
  WITH p ORDER BY p.seq
  RETURN collect({speaker: p.speaker, summary: p.summary}) AS personas
}
RETURN exists, version, committing, host, pid, topic_dense_ids,
       topic_dense_scores, topic_ids, topic_scenes, scene_dense_ids,
       scene_dense_scores, dialogue_ids, dialogue_scores, lane_dense_ids, lane_dense_scores, lane_dense_scenes,
       scene_trigger_ids, scene_trigger_scores, horizon_ids, horizon_scores, item_views,
       item_dense_ids, item_dense_scores, scene_cosine_ids,
       scene_cosine_scores, recent_texts, recent_dense_ids, recent_dense_scores,
       personas
