// One scene with its turns, its items and every trigger view attached to it or its items.
// :param memory_id => 'team-dinner'
// :param scene_id => 's1'
MATCH (mem:Memory) WHERE mem.id >= $memory_id AND mem.id < $memory_id + '$' AND mem.importing IS NULL
WITH mem.id AS pid   // the memory's name resolved to the id its objects carry (store/memory_get)
MATCH (s:Scene {memory_id: pid, id: $scene_id})
CALL (s) {
  MATCH p = (s)-[:HAS_TURN]->(:Turn) RETURN p
  UNION
  MATCH p = (s)-[:HAS_ITEM]->(:Item)<-[:TRIGGERS]-(:Trigger) RETURN p
  UNION
  MATCH p = (s)-[:HAS_ITEM]->(:Item) RETURN p
  UNION
  MATCH p = (s)<-[:TRIGGERS]-(:Trigger) RETURN p
}
RETURN p
