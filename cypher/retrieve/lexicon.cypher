// Everything one version of a memory is ranked by in this process (retrieve/lexical.py for BM25,
// retrieve/vectors.py for the exact vector rankings): the memory's version, read before its
// objects (a version read first never names data older than what follows: a recall that then
// reads a newer version loads again); each kind's objects as [id, field values…] lists in the
// order of lexical.KINDS: topics, scenes, items, and the turns a scene holds; and every
// embedding recall ranks by, as [id…, embedding] lists: topics, scenes (their own and their
// dialogue's), items, the turns a scene holds ([turn id, scene id, passage embedding], a turn
// waiting for its scene left out) and the triggers ([family, host id, position, channel,
// embedding]); `turn_passages`: whether the memory's every turn has a passage embedding (the turn
// lane ranks by them); `dim`: the dimension of the memory's encoder (an embedding of another length
// is ranked nowhere, as a vector index of that dimension leaves it out).
// $memory_id. One row; none when the memory does not exist.
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
WITH m.version AS version, m.turn_passages = true AS turn_passages, m.dim AS dim
RETURN version, turn_passages, dim,
       COLLECT { MATCH (t:Topic {memory_id: $memory_id}) RETURN [t.id, t.title, t.keywords_text, t.summary] } AS topics,
       COLLECT { MATCH (s:Scene {memory_id: $memory_id}) RETURN [s.id, s.title, s.summary, s.narrative, s.text] } AS scenes,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) RETURN [i.id, i.text] } AS items,
       COLLECT { MATCH (t:Turn {memory_id: $memory_id}) WHERE EXISTS { MATCH (:Scene)-[:HAS_TURN]->(t) }
                 RETURN [t.id, t.text] } AS turns,
       COLLECT { MATCH (n:Topic {memory_id: $memory_id}) WHERE n.id IS NOT NULL AND n.embedding IS NOT NULL
                 RETURN [n.id, n.embedding] } AS topic_vectors,
       COLLECT { MATCH (n:Scene {memory_id: $memory_id}) WHERE n.id IS NOT NULL AND n.embedding IS NOT NULL
                 RETURN [n.id, n.embedding] } AS scene_vectors,
       COLLECT { MATCH (n:Scene {memory_id: $memory_id}) WHERE n.id IS NOT NULL AND n.dialogue_embedding IS NOT NULL
                 RETURN [n.id, n.dialogue_embedding] } AS dialogue_vectors,
       COLLECT { MATCH (n:Item {memory_id: $memory_id}) WHERE n.id IS NOT NULL AND n.embedding IS NOT NULL
                 RETURN [n.id, n.embedding] } AS item_vectors,
       COLLECT { MATCH (s:Scene)-[:HAS_TURN]->(n:Turn {memory_id: $memory_id})
                 WHERE s.id IS NOT NULL AND n.id IS NOT NULL AND n.passage_embedding IS NOT NULL AND NOT n:Pending
                 RETURN [n.id, s.id, n.passage_embedding] } AS turn_vectors,
       COLLECT { MATCH (n:Trigger {memory_id: $memory_id})
                 WHERE n.host_id IS NOT NULL AND n.family IS NOT NULL AND n.embedding IS NOT NULL
                 RETURN [n.family, n.host_id, n.position, n.channel, n.embedding] } AS trigger_vectors
