// Writes items. $memory_id, $ft_scope; $rows: [{id, seq, kind, text, time, turn_ids, embedding,
// written_by}]. turn_ids: the turns an item was distilled from ([] when unknown: older builds and
// imports); written_at and written_by (`import` or `build`) are kept from the first write (history).
UNWIND $rows AS r
MERGE (i:Item {memory_id: $memory_id, id: r.id})
SET i.seq = r.seq, i.kind = r.kind, i.text = r.text, i.time = r.time, i.turn_ids = r.turn_ids,
    i.ft_scope = $ft_scope, i.embedding = r.embedding,
    i.written_at = coalesce(i.written_at, timestamp()), i.written_by = coalesce(i.written_by, r.written_by)
