// A page of one memory's turns in conversation order: those after the cursor ($after_seq,
// $after_id: the last turn of the page before; null: from the first), at most $limit. $memory_id.
// One row, none when the memory does not exist. Columns: objects ([{seq, id, speaker, text,
// time, session, scene_id (null while no scene holds it), pending}]).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
RETURN COLLECT {
  MATCH (t:Turn {memory_id: $memory_id})
  WHERE $after_seq IS NULL OR t.seq > $after_seq OR (t.seq = $after_seq AND t.id > $after_id)
  WITH t ORDER BY t.seq, t.id LIMIT $limit
  RETURN {seq: t.seq, id: t.id, speaker: t.speaker, text: t.text, time: t.time, session: t.session,
          scene_id: COLLECT { MATCH (s:Scene)-[:HAS_TURN]->(t) RETURN s.id }[0], pending: t:Pending}
} AS objects
