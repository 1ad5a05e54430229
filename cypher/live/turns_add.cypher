// Writes added turns: each one Pending (no scene holds it yet), with its embeddings (text, passage) and its
// full-text scope; the memory's turn counter and speakers follow. $memory_id, $ft_scope,
// $next_seq (after these turns), $speakers (theirs, in order of appearance);
// $rows: [{id, seq, speaker, text, time, session, embedding, passage_embedding}].
MATCH (m:Memory {id: $memory_id})
SET m.next_turn_seq = $next_seq, m.last_add_at = timestamp(),
    m.speakers = coalesce(m.speakers, []) + [s IN $speakers WHERE NOT s IN coalesce(m.speakers, [])]
WITH m
UNWIND $rows AS r
CREATE (t:Turn:Pending {memory_id: $memory_id, id: r.id})
SET t.seq = r.seq, t.speaker = r.speaker, t.text = r.text, t.time = r.time, t.session = r.session,
    t.embedding = r.embedding, t.passage_embedding = r.passage_embedding, t.ft_scope = $ft_scope, t.added_at = timestamp()
RETURN count(t) AS added
