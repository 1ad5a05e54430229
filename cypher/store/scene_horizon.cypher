// Writes each listed scene's Horizon vector from its Horizon views (after they were written or
// cleared): m, the mean of the views' unit vectors, with one more component sqrt(1 - |m|²), a
// unit vector (`horizon_embedding`, index scene_horizon_embedding). A query vector q with a 0
// appended has cosine q̂·m with it, the mean of the views' cosines with q: a search of that
// index ranks scenes by the mean of their views exactly, and its score (cosine mapped to [0, 1])
// is the mean of the views' scores. A scene without Horizon views has none. Its link to the
// memory's "vec|scene_horizon_embedding|" :Term node follows (retrieve/lexical.py: the index's
// count for the memory). $memory_id; $rows: [{id}] (scene ids). Column: written.
UNWIND $rows AS r
MATCH (s:Scene {memory_id: $memory_id, id: r.id})
WITH s, [(s)<-[:TRIGGERS]-(v:Trigger {family: 'horizon'}) WHERE v.embedding IS NOT NULL
         | {e: v.embedding, norm: sqrt(reduce(a = 0.0, x IN v.embedding | a + x * x))}] AS views
WITH s, [v IN views WHERE v.norm > 0 AND size(v.e) = size(views[0].e)] AS views
WITH s, views, CASE WHEN size(views) = 0 THEN null
                    ELSE [i IN range(0, size(views[0].e) - 1)
                          | reduce(a = 0.0, v IN views | a + v.e[i] / v.norm) / size(views)] END AS mean
SET s.horizon_embedding = CASE WHEN mean IS NULL THEN null
                               ELSE mean + [sqrt(CASE WHEN reduce(a = 0.0, x IN mean | a + x * x) < 1.0
                                                      THEN 1.0 - reduce(a = 0.0, x IN mean | a + x * x) ELSE 0.0 END)] END
WITH s
CALL (s) {
  OPTIONAL MATCH (s)-[old:HAS_TERM]->(:Term {memory_id: $memory_id, key: 'vec|scene_horizon_embedding|'})
  DELETE old
}
CALL (s) {
  WITH s WHERE s.horizon_embedding IS NOT NULL
  MERGE (t:Term {memory_id: $memory_id, key: 'vec|scene_horizon_embedding|'})
  CREATE (s)-[:HAS_TERM {tf: 1}]->(t)
}
RETURN count(s) AS written
