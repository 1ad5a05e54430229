// Scenes and items written again by a build: no longer stale, nor the memory (live/due).
// $memory_id, $scene_ids, $item_ids.
CALL () { MATCH (m:Memory {id: $memory_id}) REMOVE m.stale_objects }
CALL () { MATCH (s:Scene {memory_id: $memory_id}) WHERE s.id IN $scene_ids REMOVE s.stale }
CALL () { MATCH (i:Item {memory_id: $memory_id}) WHERE i.id IN $item_ids REMOVE i.stale }
RETURN size($scene_ids) + size($item_ids) AS cleared
