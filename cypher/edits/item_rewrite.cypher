// One item's corrected text and its embedding; `stale` when its trigger views were not rewritten
// with it (no LLM: the next `tmem build` with one rewrites them). $memory_id, $id, $text,
// $embedding, $stale.
MATCH (i:Item {memory_id: $memory_id, id: $id})
SET i.text = $text, i.embedding = $embedding, i.stale = $stale
RETURN count(i) AS updated
