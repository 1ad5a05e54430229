// A memory's topic map: every topic with the scenes it holds (graph view in Browser).
// :param memory_id => 'team-dinner'
MATCH p = (t:Topic {memory_id: $memory_id})-[:HAS_SCENE]->(s:Scene)
RETURN p
