// The texts of some objects of one memory, for store/terms_write (lexical.term_rows), in id
// order: $memory_id, $label (Topic, Scene, Item, Turn or Trigger); $ids (null: every one, paged:
// $after, the last id of the page before or null, and $limit). A turn no scene holds is left out.
// Columns: id, fields ({field: text} of lexical.KINDS).
MATCH (n:$($label) {memory_id: $memory_id})
WHERE ($ids IS NULL OR n.id IN $ids) AND ($after IS NULL OR n.id > $after)
  AND (NOT n:Turn OR EXISTS { MATCH (:Scene)-[:HAS_TURN]->(n) })
RETURN n.id AS id, {title: n.title, keywords_text: n.keywords_text, summary: n.summary, narrative: n.narrative,
                    text: n.text} AS fields
ORDER BY id
LIMIT $limit
