// A scene that lost one of its turns: its dialogue text and dialogue embedding from the turns
// it keeps, and `stale` (its title, summary, narrative, embedding and trigger views were
// written from the lost turn too). $memory_id, $id, $text, $dialogue_embedding.
MATCH (s:Scene {memory_id: $memory_id, id: $id})
SET s.text = $text, s.dialogue_embedding = $dialogue_embedding, s.stale = true
RETURN count(s) AS updated
