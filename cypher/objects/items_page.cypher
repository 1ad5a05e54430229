// A page of one memory's items in order: those after the cursor ($after_seq, $after_id: the last
// item of the page before; null: from the first), at most $limit. $memory_id.
// One row, none when the memory does not exist. Columns: objects ([{seq, id, kind, text, time,
// scene_ids, turn_ids, stale}]).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
RETURN COLLECT {
  MATCH (i:Item {memory_id: $memory_id})
  WHERE $after_seq IS NULL OR i.seq > $after_seq OR (i.seq = $after_seq AND i.id > $after_id)
  WITH i ORDER BY i.seq, i.id LIMIT $limit
  RETURN {seq: i.seq, id: i.id, kind: i.kind, text: i.text, time: i.time,
          scene_ids: COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) RETURN s.id ORDER BY h.order },
          turn_ids: coalesce(i.turn_ids, []), stale: coalesce(i.stale, false)}
} AS objects
