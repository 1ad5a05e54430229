// Writes turns with their embeddings: of the text (the packer scores a recalled scene's turns by
// it) and of the passage `speaker: text` (the turn channel's, index turn_embedding).
// $memory_id, $ft_scope (of turns in scenes, see schema/0041);
// $rows: [{id, seq, speaker, text, time, session, embedding, passage_embedding}].
UNWIND $rows AS r
MERGE (t:Turn {memory_id: $memory_id, id: r.id})
SET t.seq = r.seq, t.speaker = r.speaker, t.text = r.text, t.time = r.time, t.session = r.session,
    t.ft_scope = $ft_scope, t.embedding = r.embedding, t.passage_embedding = r.passage_embedding
