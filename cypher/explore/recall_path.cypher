// The path a recall took: its scenes with their topics, its items with the scenes they come
// from, and the trigger views on them. Set the parameters from `tmem recall … --json`
// (scenes[].id, items[].id).
// :param memory_id => 'team-dinner'
// :param scene_ids => ['s1', 's3']
// :param item_ids => ['i1', 'i5']
MATCH (mem:Memory) WHERE mem.id >= $memory_id AND mem.id < $memory_id + '$' AND mem.importing IS NULL
WITH mem.id AS pid   // the memory's name resolved to the id its objects carry (store/memory_get)
CALL (pid) {
  MATCH p = (:Topic {memory_id: pid})-[:HAS_SCENE]->(s:Scene) WHERE s.id IN $scene_ids RETURN p
  UNION
  MATCH p = (v:Trigger {memory_id: pid})-[:TRIGGERS]->(s:Scene) WHERE s.id IN $scene_ids RETURN p
  UNION
  MATCH p = (s:Scene {memory_id: pid})-[:HAS_ITEM]->(i:Item) WHERE i.id IN $item_ids RETURN p
  UNION
  MATCH p = (v:Trigger {memory_id: pid})-[:TRIGGERS]->(i:Item) WHERE i.id IN $item_ids RETURN p
}
RETURN p
