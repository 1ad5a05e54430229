// One scene with its trigger views, turns, topics, the scenes before and after it (NEXT) and its
// items. $memory_id, $id. One row, none when the memory does not exist. Columns: object ({seq,
// id, title, summary, narrative, time, turn_ids, topic_ids, stale}; null: no such scene), triggers
// ([{id, family, channel, text, position, rationale}]), turns ([{id, speaker, text, time,
// session}] in order), topics ([{id, title}]), previous, next (scene ids or null), items (ids).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import, a drop or a replaced version being deleted
OPTIONAL MATCH (s:Scene {memory_id: $memory_id, id: $id})
WITH s, COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) RETURN t ORDER BY h.order } AS turns,
     COLLECT { MATCH (p:Topic)-[:HAS_SCENE]->(s) RETURN p ORDER BY p.seq } AS topics
RETURN CASE WHEN s IS NOT NULL THEN {seq: s.seq, id: s.id, title: s.title, summary: s.summary,
                                     narrative: s.narrative, time: s.time, turn_ids: [t IN turns | t.id],
                                     topic_ids: [p IN topics | p.id], stale: coalesce(s.stale, false)} END AS object,
       COLLECT { MATCH (v:Trigger)-[:TRIGGERS]->(s)
                 RETURN {id: v.id, family: v.family, channel: v.channel, text: v.text, position: v.position,
                         rationale: v.rationale} AS view ORDER BY v.family, v.position, v.channel } AS triggers,
       [t IN turns | {id: t.id, speaker: t.speaker, text: t.text, time: t.time, session: t.session}] AS turns,
       [p IN topics | {id: p.id, title: p.title}] AS topics,
       COLLECT { MATCH (p:Scene)-[:NEXT]->(s) RETURN p.id }[0] AS previous,
       COLLECT { MATCH (s)-[:NEXT]->(n:Scene) RETURN n.id }[0] AS next,
       COLLECT { MATCH (s)-[:HAS_ITEM]->(i:Item) RETURN i.id ORDER BY i.seq } AS items
