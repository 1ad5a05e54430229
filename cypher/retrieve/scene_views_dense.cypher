// Dense ranking of one memory's scenes' Scene-trigger views (label SceneView, index
// scene_trigger_view_embedding), filtered inside the index by memory. $vector, $memory_id, $limit.
// Columns: host_id, position, channel, score (best first, equal scores by host and position).
CYPHER 25
MATCH (v:SceneView)
  SEARCH v IN (VECTOR INDEX scene_trigger_view_embedding FOR $vector WHERE v.memory_id = $memory_id LIMIT $limit)
  SCORE AS score
RETURN v.host_id AS host_id, v.position AS position, v.channel AS channel, score
ORDER BY score DESC, host_id, position
