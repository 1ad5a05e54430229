// One item with its trigger views, source scenes and turns, and the other items of its scenes.
// $memory_id, $id. One row, none when the memory does not exist. Columns: object ({seq, id, kind,
// text, time, scene_ids, turn_ids, stale}; null: no such item), triggers ([{id, family, channel, text,
// position, rationale}]), scenes ([{id, title, time}] in order), turns ([{id, speaker, text, time,
// session}] in conversation order), items (ids of the other items of its scenes).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
OPTIONAL MATCH (i:Item {memory_id: $memory_id, id: $id})
WITH i, COLLECT { MATCH (s:Scene)-[h:HAS_ITEM]->(i) RETURN s ORDER BY h.order } AS scenes
RETURN CASE WHEN i IS NOT NULL THEN {seq: i.seq, id: i.id, kind: i.kind, text: i.text, time: i.time,
                                     scene_ids: [s IN scenes | s.id], turn_ids: coalesce(i.turn_ids, []),
                                     stale: coalesce(i.stale, false)} END AS object,
       COLLECT { MATCH (v:Trigger)-[:TRIGGERS]->(i)
                 RETURN {id: v.id, family: v.family, channel: v.channel, text: v.text, position: v.position,
                         rationale: v.rationale} AS view ORDER BY v.position, v.channel } AS triggers,
       [s IN scenes | {id: s.id, title: s.title, time: s.time}] AS scenes,
       COLLECT { MATCH (t:Turn {memory_id: $memory_id}) WHERE t.id IN coalesce(i.turn_ids, [])
                 RETURN {id: t.id, speaker: t.speaker, text: t.text, time: t.time, session: t.session} AS turn
                 ORDER BY t.seq } AS turns,
       COLLECT { MATCH (i)<-[:HAS_ITEM]-(:Scene)-[:HAS_ITEM]->(o:Item) WHERE o <> i
                 WITH DISTINCT o ORDER BY o.seq RETURN o.id } AS items
