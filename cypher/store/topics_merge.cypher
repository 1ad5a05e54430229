// Writes topics. $memory_id, $ft_scope;
// $rows: [{id, seq, title, keywords, keywords_text, summary, embedding}].
UNWIND $rows AS r
MERGE (t:Topic {memory_id: $memory_id, id: r.id})
SET t.seq = r.seq, t.title = r.title, t.keywords = r.keywords, t.keywords_text = r.keywords_text,
    t.summary = r.summary, t.ft_scope = $ft_scope, t.embedding = r.embedding
