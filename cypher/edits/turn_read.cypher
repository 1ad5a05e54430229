// Inside an edit's transaction: one turn with what rests on it, for `edits.delete_turn` to plan
// the delete. Write-locks the memory node first, as an add does (live/memory_lock), so an add
// runs wholly before or after the edit. $memory_id, $id. One row; none when the memory does not
// exist (or is hidden). Columns: turn ({id, speaker, text, time, session, pending}; null: no such
// turn), scene ({id, turns: [{id, speaker, text}] in order, the turn among them; null: pending),
// citing ([{id, turn_ids}]: the items whose turn_ids name the turn).
MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL
SET m.add_lock = timestamp()
WITH m
OPTIONAL MATCH (t:Turn {memory_id: $memory_id, id: $id})
OPTIONAL MATCH (s:Scene)-[:HAS_TURN]->(t)
RETURN CASE WHEN t IS NOT NULL THEN {id: t.id, speaker: t.speaker, text: t.text, time: t.time, session: t.session,
                                     pending: t:Pending} END AS turn,
       CASE WHEN s IS NOT NULL THEN {id: s.id, turns: COLLECT { MATCH (s)-[h:HAS_TURN]->(x:Turn)
                                                               RETURN {id: x.id, speaker: x.speaker, text: x.text}
                                                               ORDER BY h.order }} END AS scene,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) WHERE t IS NOT NULL AND t.id IN coalesce(i.turn_ids, [])
                 RETURN {id: i.id, turn_ids: i.turn_ids} ORDER BY i.seq } AS citing
