// Links each item to its source scenes. $memory_id; $rows: [{item_id, scene_id, order}].
UNWIND $rows AS r
MATCH (s:Scene {memory_id: $memory_id, id: r.scene_id})
MATCH (i:Item {memory_id: $memory_id, id: r.item_id})
MERGE (s)-[h:HAS_ITEM]->(i)
SET h.order = r.order
