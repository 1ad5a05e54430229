// The memories whose build has work to do: at least $window pending turns the boundary model
// has not read, or a flush asked, or (with $idle_ms) pending turns and no add for $idle_ms
// (an imported memory, never added to, counts as idle), or scenes and items an edit left stale
// (`stale_objects`: docs/api.md). $window, $idle_ms (null: never idle).
// Columns: memory_id (the memory's name), pending, unexamined, flush (a flush was asked), idle (bool), stale (bool).
CALL () {
  MATCH (t:Pending)
  RETURN t.memory_id AS memory_id, count(t) AS pending, sum(CASE WHEN t.examined THEN 0 ELSE 1 END) AS unexamined
  UNION
  MATCH (m:Memory) WHERE (m.flush_upto IS NOT NULL OR m.stale_objects = true)
    AND NOT EXISTS { MATCH (:Pending {memory_id: m.id}) }
  RETURN m.id AS memory_id, 0 AS pending, 0 AS unexamined
}
MATCH (m:Memory {id: memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
WITH memory_id, pending, unexamined, m.flush_upto IS NOT NULL AS flush,
     $idle_ms IS NOT NULL AND pending > 0 AND coalesce(m.last_add_at, 0) < timestamp() - $idle_ms AS idle,
     coalesce(m.stale_objects, false) AS stale
WHERE flush OR idle OR stale OR unexamined >= $window
RETURN split(memory_id, '#')[0] AS memory_id, pending, unexamined, flush, idle, stale   // the name (store/memory_get)
ORDER BY memory_id
