// The second round trip of a recall: the chosen scenes with their turns, the item pool, then
// the memory's state again (read last, so that a write landing meanwhile shows).
// $memory_id, $lease_id (the memory's name: its lease), $vector, $commit_ms; $scene_ids (the chosen scenes, in order); $cue_ids (SceneCue's
// scenes for the packer's associative pass, none of $scene_ids: their turns only); $items (whether
// the item layer is on), $item_ids (items reached through triggers or flat search), $recent_ids
// (the chosen turns that no scene holds yet, in order), $lane_ids (the turn lane's turns, in order),
// $day ({since, until, k}: a time window the query names, ISO text, until exclusive; k 0: none).
// Columns: scenes ([{id, title, summary, narrative, time, turns: [{id, speaker, text, time, n, score}]}]:
// n the turn's place in its scene, score its cosine with the query mapped to [0, 1] or null),
// in the order of $scene_ids then $cue_ids), items ([{id, by_scene, kind, text, time, turn_ids, scene_ids, score}]: the
// selected scenes' items ∪ $item_ids, exact cosine mapped to [0, 1], best first, equal scores by id),
// recent ([{id, speaker, text, time, seq}] of $recent_ids still pending, in order), lane ([{id,
// speaker, text, time, n, scene: {id, title, time}}] of $lane_ids a scene holds, in order; the
// scene's time its own, else its first dated turn's, as the cascade dates a recalled scene), then
// day (the ids of the $day.k scenes holding the window's turns, best first by their best turn's
// cosine; their rows are in scenes, after the others), exists, version, committing, host, pid as
// in retrieve/rankings.
CYPHER 25
CALL () {   // a question that names a day: that window's best scenes, by their best turn's cosine
  WITH 1 AS one WHERE $day.k > 0
  MATCH (t:Turn) WHERE t.memory_id = $memory_id AND t.time >= $day.since AND t.time < $day.until
                   AND t.embedding IS NOT NULL
  MATCH (s:Scene {memory_id: $memory_id})-[:HAS_TURN]->(t)
  WITH s, max(vector.similarity.cosine(t.embedding, $vector)) AS best
  ORDER BY best DESC, s.id LIMIT $day.k
  RETURN collect(s.id) AS day
}
CALL (day) {
  WITH $scene_ids + $cue_ids + [key IN day WHERE NOT key IN $scene_ids + $cue_ids] AS ids
  UNWIND range(0, size(ids) - 1) AS n
  MATCH (s:Scene {memory_id: $memory_id, id: ids[n]})
  WITH s, n ORDER BY n
  RETURN collect({id: s.id, title: s.title, summary: s.summary, narrative: s.narrative, time: s.time,
                  turns: COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) WITH t, h ORDER BY h.order
                                   RETURN {id: t.id, speaker: t.speaker, text: t.text, time: t.time, n: h.order,
                                           score: CASE WHEN t.embedding IS NULL THEN null
                                                  ELSE vector.similarity.cosine(t.embedding, $vector) END} }}) AS scenes
}
CALL () {
  CALL () {
    WITH 1 AS one WHERE $items
    MATCH (s:Scene {memory_id: $memory_id})-[:HAS_ITEM]->(i:Item)
    WHERE s.id IN $scene_ids
    RETURN i, true AS by_scene
    UNION
    WITH 1 AS one WHERE $items
    UNWIND $item_ids AS id
    MATCH (i:Item {memory_id: $memory_id, id: id})
    RETURN i, false AS by_scene
  }
  WITH i, max(by_scene) AS by_scene
  WITH i, by_scene, vector.similarity.cosine(i.embedding, $vector) AS score
  ORDER BY score DESC, i.id
  RETURN collect({id: i.id, by_scene: by_scene, kind: i.kind, text: i.text, time: i.time, score: score,
                  turn_ids: coalesce(i.turn_ids, []),
                  scene_ids: COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) WITH s, h ORDER BY h.order RETURN s.id }}) AS items
}
CALL () {
  UNWIND range(0, size($recent_ids) - 1) AS n
  MATCH (t:Pending {memory_id: $memory_id, id: $recent_ids[n]})
  WITH t, n ORDER BY n
  RETURN collect({id: t.id, speaker: t.speaker, text: t.text, time: t.time, seq: t.seq}) AS recent
}
CALL () {
  UNWIND range(0, size($lane_ids) - 1) AS n
  MATCH (s:Scene {memory_id: $memory_id})-[h:HAS_TURN]->(t:Turn {memory_id: $memory_id, id: $lane_ids[n]})
  WITH s, h, t, n ORDER BY n
  RETURN collect({id: t.id, speaker: t.speaker, text: t.text, time: t.time, n: h.order,
                  scene: {id: s.id, title: s.title,
                          time: coalesce(s.time, COLLECT { MATCH (s)-[g:HAS_TURN]->(u:Turn) WHERE u.time IS NOT NULL
                                                           WITH u, g ORDER BY g.order LIMIT 1 RETURN u.time }[0])}}) AS lane
}
CALL (day, scenes, items, recent, lane) {
  OPTIONAL MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL   // hidden: absent
  OPTIONAL MATCH (l:WriteLease {memory_id: $lease_id})   // the memory's name's (store/lease.py)
  WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
  RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
         l.host AS host, l.pid AS pid
}
RETURN scenes, items, recent, lane, day, exists, version, committing, host, pid
