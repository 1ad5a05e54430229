// Start of an add: the memory's node, created when absent, and write-locked (the SET) so that
// adds to one memory are served one after the other: each sees the turns the one before it
// committed. $memory_id, $encoder, $dim, $created_at, $version (used only when creating; a new
// memory is marked `turn_passages`, see store/memory_create).
// Columns: encoder, dim, next_seq (the seq the next turn gets), created (bool), hidden (an import
// or a drop of the memory is under way, or left debris: the add must not write).
MERGE (m:Memory {id: $memory_id})
  ON CREATE SET m.encoder = $encoder, m.dim = $dim, m.speakers = [], m.created_at = $created_at,
                m.version = $version, m.created_by_add = true, m.turn_passages = true
SET m.add_lock = timestamp()
WITH m, coalesce(m.created_by_add, false) AS created   // absent on a memory that existed: false, not null
REMOVE m.created_by_add
RETURN m.encoder AS encoder, m.dim AS dim, created, m.importing IS NOT NULL AS hidden,
       coalesce(m.next_turn_seq, COUNT { MATCH (t:Turn {memory_id: $memory_id}) }) AS next_seq
