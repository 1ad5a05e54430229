// Object counts of one memory. $memory_id. Columns: turns, pending_turns (no scene holds them
// yet), scenes, topics, items, triggers, trigger_families (map family -> count), personas.
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
CALL (m) {
  MATCH (v:Trigger {memory_id: m.id})
  WITH v.family AS family, count(*) AS n
  RETURN collect([family, n]) AS families
}
RETURN COUNT { MATCH (n:Turn {memory_id: m.id}) } AS turns,
       COUNT { MATCH (n:Pending {memory_id: m.id}) } AS pending_turns,
       COUNT { MATCH (n:Scene {memory_id: m.id}) } AS scenes,
       COUNT { MATCH (n:Topic {memory_id: m.id}) } AS topics,
       COUNT { MATCH (n:Item {memory_id: m.id}) } AS items,
       COUNT { MATCH (n:Trigger {memory_id: m.id}) } AS triggers,
       families AS trigger_families,
       COUNT { MATCH (n:Persona {memory_id: m.id}) } AS personas
