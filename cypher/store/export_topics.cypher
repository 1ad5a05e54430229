// A memory's topics in order with their scene ids. $memory_id.
// Columns: id, title, keywords, summary, scene_ids.
MATCH (t:Topic {memory_id: $memory_id})
RETURN t.id AS id, t.title AS title, t.keywords AS keywords, t.summary AS summary,
       COLLECT { MATCH (t)-[h:HAS_SCENE]->(s:Scene) RETURN s.id ORDER BY h.order } AS scene_ids
ORDER BY t.seq
