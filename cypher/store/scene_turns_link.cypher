// Links scenes to their turns in order. $memory_id; $rows: [{scene_id, turn_id, order}].
UNWIND $rows AS r
MATCH (s:Scene {memory_id: $memory_id, id: r.scene_id})
MATCH (t:Turn {memory_id: $memory_id, id: r.turn_id})
MERGE (s)-[h:HAS_TURN]->(t)
SET h.order = r.order
