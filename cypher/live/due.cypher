// The memories whose build has work to do: a flush asked for (or due: no turn added for
// $idle_ms, null = never), or at least $window turns the boundary model has not read.
// $window, $idle_ms. Columns: memory_id, pending, unexamined, flush (bool).
MATCH (t:Pending)
WITH t.memory_id AS memory_id, count(t) AS pending, sum(CASE WHEN t.examined THEN 0 ELSE 1 END) AS unexamined
MATCH (m:Memory {id: memory_id})
WITH memory_id, pending, unexamined,
     m.flush_upto IS NOT NULL OR ($idle_ms IS NOT NULL AND m.last_add_at < timestamp() - $idle_ms) AS flush
WHERE flush OR unexamined >= $window
RETURN memory_id, pending, unexamined, flush
ORDER BY memory_id
