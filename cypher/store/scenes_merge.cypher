// Writes scenes with their embeddings and lexical fields. $memory_id, $ft_scope;
// $rows: [{id, seq, title, summary, narrative, time, text, embedding, dialogue_embedding}].
UNWIND $rows AS r
MERGE (s:Scene {memory_id: $memory_id, id: r.id})
SET s.seq = r.seq, s.title = r.title, s.summary = r.summary, s.narrative = r.narrative,
    s.time = r.time, s.text = r.text, s.ft_scope = $ft_scope,
    s.embedding = r.embedding, s.dialogue_embedding = r.dialogue_embedding
