// The scenes and items of a memory marked stale by an edit (edits.py), for a build to write
// them again: scenes with their turns in order, items as they are. $memory_id.
// Columns: scenes ([{id, seq, time, turns: [{id, speaker, text, time}]}]), items ([{id, seq,
// kind, text, time, scene_ids, turn_ids}]), flagged (the memory is marked as holding some).
RETURN EXISTS { MATCH (m:Memory {id: $memory_id}) WHERE m.stale_objects = true } AS flagged,
       COLLECT { MATCH (s:Scene {memory_id: $memory_id}) WHERE s.stale = true
                 RETURN {id: s.id, seq: s.seq, time: s.time,
                         turns: COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn)
                                          RETURN {id: t.id, speaker: t.speaker, text: t.text, time: t.time}
                                          ORDER BY h.order }} ORDER BY s.seq } AS scenes,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) WHERE i.stale = true
                 RETURN {id: i.id, seq: i.seq, kind: i.kind, text: i.text, time: i.time,
                         scene_ids: COLLECT { MATCH (x:Scene)-[h:HAS_ITEM]->(i) RETURN x.id ORDER BY h.order },
                         turn_ids: coalesce(i.turn_ids, [])} ORDER BY i.seq } AS items
