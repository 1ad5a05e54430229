// What a build of one memory starts from. $memory_id.
// Columns: pending ([{id, seq, examined, starts}] in conversation order: the turns no scene
// holds yet, with what the boundary model already said of them), flush_upto (the seq up to
// which a flush was asked, or null), persona_upto (the seq of the last turn the personas have
// read: for memories built before the live path, their last turn in a scene), built_after
// ([{id, seq}]: turns in scenes after persona_upto, in order).
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL   // hidden: an import or drop under way
CALL (m) {
  MATCH (t:Pending {memory_id: m.id})
  WITH t ORDER BY t.seq
  RETURN collect({id: t.id, seq: t.seq, examined: coalesce(t.examined, false),
                  starts: coalesce(t.starts_scene, false)}) AS pending
}
CALL (m) {
  OPTIONAL MATCH (t:Turn {memory_id: m.id})
  WHERE NOT t:Pending
  RETURN max(t.seq) AS last_built
}
WITH m, pending, coalesce(m.persona_upto, last_built, -1) AS persona_upto
CALL (m, persona_upto) {
  MATCH (t:Turn {memory_id: m.id})
  WHERE NOT t:Pending AND t.seq > persona_upto
  WITH t ORDER BY t.seq
  RETURN collect({id: t.id, seq: t.seq}) AS built_after
}
RETURN pending, m.flush_upto AS flush_upto, persona_upto, built_after
