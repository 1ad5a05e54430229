// One turn with its scene, the turns before and after it and the items distilled from it.
// $memory_id, $id. One row, none when the memory does not exist. Columns: object ({seq, id,
// speaker, text, time, session, scene_id, pending}; null: no such turn), scene ({id, title, time}
// or null), previous, next (turn ids or null), items (ids of the items whose turn_ids name it).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
OPTIONAL MATCH (t:Turn {memory_id: $memory_id, id: $id})
OPTIONAL MATCH (s:Scene)-[:HAS_TURN]->(t)
RETURN CASE WHEN t IS NOT NULL THEN {seq: t.seq, id: t.id, speaker: t.speaker, text: t.text, time: t.time,
                                     session: t.session, scene_id: s.id, pending: t:Pending} END AS object,
       CASE WHEN s IS NOT NULL THEN {id: s.id, title: s.title, time: s.time} END AS scene,
       COLLECT { MATCH (p:Turn {memory_id: $memory_id}) WHERE p.seq < t.seq OR (p.seq = t.seq AND p.id < t.id)
                 RETURN p.id ORDER BY p.seq DESC, p.id DESC LIMIT 1 }[0] AS previous,
       COLLECT { MATCH (n:Turn {memory_id: $memory_id}) WHERE n.seq > t.seq OR (n.seq = t.seq AND n.id > t.id)
                 RETURN n.id ORDER BY n.seq, n.id LIMIT 1 }[0] AS next,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) WHERE t.id IN i.turn_ids RETURN i.id ORDER BY i.seq } AS items
