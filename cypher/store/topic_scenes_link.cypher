// Links topics to their scenes. $memory_id; $rows: [{topic_id, scene_id, order}].
UNWIND $rows AS r
MATCH (t:Topic {memory_id: $memory_id, id: r.topic_id})
MATCH (s:Scene {memory_id: $memory_id, id: r.scene_id})
MERGE (t)-[h:HAS_SCENE]->(s)
SET h.order = r.order
