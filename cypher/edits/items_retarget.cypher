// Items that lost one of the turns they were distilled from: their remaining turn_ids, and
// `stale` (their text and triggers were written from the lost turn too). $memory_id;
// $rows: [{id, turn_ids}].
UNWIND $rows AS r
MATCH (i:Item {memory_id: $memory_id, id: r.id})
SET i.turn_ids = r.turn_ids, i.stale = true
RETURN count(i) AS updated
