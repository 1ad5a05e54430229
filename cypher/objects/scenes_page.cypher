// A page of one memory's scenes in order: those after the cursor ($after_seq, $after_id: the
// last scene of the page before; null: from the first), at most $limit. $memory_id.
// One row, none when the memory does not exist. Columns: objects ([{seq, id, title, summary,
// narrative, time, turn_ids, topic_ids, stale}]).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
RETURN COLLECT {
  MATCH (s:Scene {memory_id: $memory_id})
  WHERE $after_seq IS NULL OR s.seq > $after_seq OR (s.seq = $after_seq AND s.id > $after_id)
  WITH s ORDER BY s.seq, s.id LIMIT $limit
  RETURN {seq: s.seq, id: s.id, title: s.title, summary: s.summary, narrative: s.narrative, time: s.time,
          turn_ids: COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) RETURN t.id ORDER BY h.order },
          topic_ids: COLLECT { MATCH (p:Topic)-[:HAS_SCENE]->(s) RETURN p.id ORDER BY p.seq },
          stale: coalesce(s.stale, false)}
} AS objects
