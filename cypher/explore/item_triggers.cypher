// The trigger views that can reach one item, and the scenes it comes from (table view:
// family, channel, text).
// :param memory_id => 'team-dinner'
// :param item_id => 'i1'
MATCH (mem:Memory) WHERE mem.id >= $memory_id AND mem.id < $memory_id + '$' AND mem.importing IS NULL
WITH mem.id AS pid   // the memory's name resolved to the id its objects carry (store/memory_get)
MATCH (i:Item {memory_id: pid, id: $item_id})
OPTIONAL MATCH (v:Trigger)-[:TRIGGERS]->(i)
RETURN i.text AS item, v.channel AS channel, v.text AS trigger, v.rationale AS rationale,
       COLLECT { MATCH (s:Scene)-[:HAS_ITEM]->(i) RETURN s.id } AS scenes
ORDER BY v.position, v.channel
