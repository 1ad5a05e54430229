// What one version of a memory is ranked by, read once per version by a recalling process
// (retrieve/lexical.py, Statistics): the memory's version; `terms`: whether its statistics (and
// its scenes' Horizon vectors) are kept (a memory written before they were has none until `tmem schema apply`); for each of $keys
// (lexical.statistics_keys: each kind's fields, each vector index, each trigger family) the degree
// and `total` of its :Term node ([key, degree, total]; 0 and null when it has none); `turn_passages`:
// whether the memory's every turn has a passage embedding (the turn lane ranks by them); `pending`:
// how many turns wait for a scene (the turn index holds them too: the lane searches that much deeper).
// $memory_id, $keys. One row; none when the memory does not exist.
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
RETURN m.version AS version, m.turn_passages = true AS turn_passages, coalesce(m.terms, 0) >= 2 AS terms,
       COUNT { MATCH (:Pending {memory_id: $memory_id}) } AS pending,
       COLLECT { UNWIND $keys AS key
                 OPTIONAL MATCH (t:Term {memory_id: $memory_id, key: key})
                 RETURN [key, COUNT { (t)<-[:HAS_TERM]-() }, t.total] } AS terms_held
