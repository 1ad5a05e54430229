// Everything per-memory BM25 ranks (retrieve/lexical.py): the memory's version, read before its
// objects (a version read first never names data older than what follows: a recall that then
// reads a newer version loads again), and each kind's objects as [id, field values…] lists in
// the order of lexical.KINDS: topics, scenes, items, and the turns a scene holds; and how many
// entries each vector index holds for the memory (`searchable`: {index or trigger family: count}),
// which cap every vector search's LIMIT (docs/reliability.md: Neo4j 2026.08 fails a filtered
// search whose LIMIT exceeds its matches once the index holds a deleted entry).
// $memory_id. One row; none when the memory does not exist.
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
WITH m.version AS version
RETURN version,
       COLLECT { MATCH (t:Topic {memory_id: $memory_id}) RETURN [t.id, t.title, t.keywords_text, t.summary] } AS topics,
       COLLECT { MATCH (s:Scene {memory_id: $memory_id}) RETURN [s.id, s.title, s.summary, s.narrative, s.text] } AS scenes,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) RETURN [i.id, i.text] } AS items,
       COLLECT { MATCH (t:Turn {memory_id: $memory_id}) WHERE EXISTS { MATCH (:Scene)-[:HAS_TURN]->(t) }
                 RETURN [t.id, t.text] } AS turns,
       {topic_embedding: COUNT { MATCH (n:Topic {memory_id: $memory_id}) WHERE n.embedding IS NOT NULL },
        scene_embedding: COUNT { MATCH (n:Scene {memory_id: $memory_id}) WHERE n.embedding IS NOT NULL },
        scene_dialogue_embedding: COUNT { MATCH (n:Scene {memory_id: $memory_id}) WHERE n.dialogue_embedding IS NOT NULL },
        item_embedding: COUNT { MATCH (n:Item {memory_id: $memory_id}) WHERE n.embedding IS NOT NULL },
        turn_embedding: COUNT { MATCH (n:Turn {memory_id: $memory_id}) WHERE n.passage_embedding IS NOT NULL },
        scene: COUNT { MATCH (n:Trigger {memory_id: $memory_id, family: 'scene'}) WHERE n.embedding IS NOT NULL },
        horizon: COUNT { MATCH (n:Trigger {memory_id: $memory_id, family: 'horizon'}) WHERE n.embedding IS NOT NULL },
        item: COUNT { MATCH (n:Trigger {memory_id: $memory_id, family: 'item'}) WHERE n.embedding IS NOT NULL }}
       AS searchable
