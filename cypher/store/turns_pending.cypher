// Marks written turns that no scene holds as Pending (the live path's work, the recall's
// `recent` channel), with the full-text scope of pending turns. $memory_id, $ft_scope;
// $rows: [{id}].
UNWIND $rows AS r
MATCH (t:Turn {memory_id: $memory_id, id: r.id})
SET t:Pending, t.ft_scope = $ft_scope
