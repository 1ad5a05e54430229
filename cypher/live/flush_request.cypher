// Ask that every turn added so far be closed into scenes at the next build (a flush): the
// memory remembers up to which turn. $memory_id. Columns: flush_upto (null: no turn yet).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
SET m.flush_upto = coalesce(m.next_turn_seq, COUNT { MATCH (t:Turn {memory_id: $memory_id}) }) - 1
RETURN m.flush_upto AS flush_upto
