// What a recall filter (retrieve/filters.py) reads of the turns that items rest on: the speaker
// and time of each turn of $turn_ids, and the turns of each scene of $scene_ids (for items that
// record no turns). $memory_id. One row. Columns: turns ([[id, speaker, time]]), scenes
// ([[scene id, [turn ids]]]).
RETURN COLLECT { MATCH (t:Turn {memory_id: $memory_id}) WHERE t.id IN $turn_ids
                 RETURN [t.id, t.speaker, t.time] } AS turns,
       COLLECT { MATCH (s:Scene {memory_id: $memory_id}) WHERE s.id IN $scene_ids
                 RETURN [s.id, COLLECT { MATCH (s)-[h:HAS_TURN]->(t:Turn) RETURN t.id ORDER BY h.order }] } AS scenes
