// Writes items. $memory_id, $ft_scope; $rows: [{id, seq, kind, text, time, embedding}].
UNWIND $rows AS r
MERGE (i:Item {memory_id: $memory_id, id: r.id})
SET i.seq = r.seq, i.kind = r.kind, i.text = r.text, i.time = r.time, i.ft_scope = $ft_scope,
    i.embedding = r.embedding
