// The named memories with their object counts, in name order (a page of store/memory_ids: the
// counts are taken for the page alone, so a page costs the same whatever the number of
// memories; a hidden one, an import or drop under way, is left out). $ids (names; the range:
// store/memory_get). Columns: id, encoder, dim, created_at, turns, pending_turns, scenes,
// topics, items, triggers, personas.
UNWIND $ids AS id
MATCH (m:Memory)
WHERE m.id >= id AND m.id < id + '$' AND m.importing IS NULL
RETURN split(m.id, '#')[0] AS id, m.encoder AS encoder, m.dim AS dim, m.created_at AS created_at,
       COUNT { MATCH (n:Turn {memory_id: m.id}) } AS turns,
       COUNT { MATCH (n:Pending {memory_id: m.id}) } AS pending_turns,
       COUNT { MATCH (n:Scene {memory_id: m.id}) } AS scenes,
       COUNT { MATCH (n:Topic {memory_id: m.id}) } AS topics,
       COUNT { MATCH (n:Item {memory_id: m.id}) } AS items,
       COUNT { MATCH (n:Trigger {memory_id: m.id}) } AS triggers,
       COUNT { MATCH (n:Persona {memory_id: m.id}) } AS personas
ORDER BY id
