// A page of memories in id order with their object counts: those whose id sorts after $after
// (null: from the first), at most $limit (an ordered seek of the Memory id index, counts taken
// for the page alone, so a page costs the same whatever the number of memories). Columns: id,
// encoder, dim, created_at, turns, pending_turns, scenes, topics, items, triggers, personas.
MATCH (m:Memory)
WHERE m.id > coalesce($after, '') AND m.importing IS NULL   // hidden: an import or drop under way
WITH m ORDER BY m.id LIMIT $limit
RETURN m.id AS id, m.encoder AS encoder, m.dim AS dim, m.created_at AS created_at,
       COUNT { MATCH (n:Turn {memory_id: m.id}) } AS turns,
       COUNT { MATCH (n:Pending {memory_id: m.id}) } AS pending_turns,
       COUNT { MATCH (n:Scene {memory_id: m.id}) } AS scenes,
       COUNT { MATCH (n:Topic {memory_id: m.id}) } AS topics,
       COUNT { MATCH (n:Item {memory_id: m.id}) } AS items,
       COUNT { MATCH (n:Trigger {memory_id: m.id}) } AS triggers,
       COUNT { MATCH (n:Persona {memory_id: m.id}) } AS personas
ORDER BY id
