// Start of an add: the memory's node, created when absent, and write-locked (the SET) so that
// adds to one memory are served one after the other: each sees the turns the one before it
// committed. $memory_id (the memory's name: its visible staged version "<name>#<token>" when a
// replacement made one, store/memory_get, else the node of that id), $encoder, $dim,
// $created_at, $version (used only when creating; a new memory is marked `turn_passages` and
// `terms`, see store/memory_create).
// Columns: pid (the id the memory's objects carry), encoder, dim, next_seq (the seq the next turn
// gets), created (bool), hidden (an import or a drop of the memory is under way, or left debris,
// or a replacement switched versions while this add waited: the add must not write).
OPTIONAL MATCH (r:Memory)
WHERE r.id > $memory_id + '#' AND r.id < $memory_id + '$' AND r.importing IS NULL
WITH r ORDER BY r.id LIMIT 1
MERGE (m:Memory {id: coalesce(r.id, $memory_id)})
  ON CREATE SET m.encoder = $encoder, m.dim = $dim, m.speakers = [], m.created_at = $created_at,
                m.version = $version, m.created_by_add = true, m.turn_passages = true, m.terms = 2
SET m.add_lock = timestamp()
WITH m, coalesce(m.created_by_add, false) AS created   // absent on a memory that existed: false, not null
REMOVE m.created_by_add
RETURN m.id AS pid, m.encoder AS encoder, m.dim AS dim, created, m.importing IS NOT NULL AS hidden,
       coalesce(m.next_turn_seq, COUNT { MATCH (t:Turn {memory_id: m.id}) }) AS next_seq
