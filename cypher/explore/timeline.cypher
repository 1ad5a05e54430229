// A memory's scenes in time order, chained by NEXT (graph view), with their topics.
// :param memory_id => 'team-dinner'
MATCH (mem:Memory) WHERE mem.id >= $memory_id AND mem.id < $memory_id + '$' AND mem.importing IS NULL
WITH mem.id AS pid   // the memory's name resolved to the id its objects carry (store/memory_get)
MATCH (s:Scene {memory_id: pid})
OPTIONAL MATCH p = (s)-[:NEXT]->(:Scene)
OPTIONAL MATCH q = (:Topic)-[:HAS_SCENE]->(s)
RETURN s, p, q
