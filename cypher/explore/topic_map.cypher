// A memory's topic map: every topic with the scenes it holds (graph view in Browser).
// :param memory_id => 'team-dinner'
MATCH (mem:Memory) WHERE mem.id >= $memory_id AND mem.id < $memory_id + '$' AND mem.importing IS NULL
WITH mem.id AS pid   // the memory's name resolved to the id its objects carry (store/memory_get)
MATCH p = (t:Topic {memory_id: pid})-[:HAS_SCENE]->(s:Scene)
RETURN p
