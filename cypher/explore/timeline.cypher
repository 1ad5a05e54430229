// A memory's scenes in time order, chained by NEXT (graph view), with their topics.
// :param memory_id => 'team-dinner'
MATCH p = (a:Scene {memory_id: $memory_id})-[:NEXT]->(b:Scene)
OPTIONAL MATCH q = (:Topic)-[:HAS_SCENE]->(a)
RETURN p, q
