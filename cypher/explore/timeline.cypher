// A memory's scenes in time order, chained by NEXT (graph view), with their topics.
// :param memory_id => 'team-dinner'
MATCH (s:Scene {memory_id: $memory_id})
OPTIONAL MATCH p = (s)-[:NEXT]->(:Scene)
OPTIONAL MATCH q = (:Topic)-[:HAS_SCENE]->(s)
RETURN s, p, q
