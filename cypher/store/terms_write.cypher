// Links objects of one memory to its :Term nodes (retrieve/lexical.py): what each was linked to
// before is unlinked first (each node's `total` lowered by the link's tf), then one HAS_TERM {tf}
// per key of the row (a field's term and its count; a field with its length), and one per vector
// index the object has an embedding in ("vec|<index>|", a trigger view's "vec|trigger_embedding|<family>";
// a scene's Horizon vector is linked by store/scene_horizon too, which writes it after its views);
// a field's :Term node ("scene|title|") keeps `total`, the sum of its links' tf (the objects'
// lengths there). A turn is linked only once a scene holds it.
// $memory_id, $label (Topic, Scene, Item, Turn or Trigger); $rows: [{id, keys, tfs, lens, lex}]
// (lens: the object's field lengths, kept as `lex_len`, and lex: its terms with their counts,
// " title|oyster:2 text|ana:1 ", kept as `lex`, both for the recall's scoring).
// Column: linked (objects found).
UNWIND $rows AS r
MATCH (n:$($label) {memory_id: $memory_id, id: r.id})
CALL (n) {
  MATCH (n)-[old:HAS_TERM]->(t:Term)
  SET t.total = CASE WHEN t.total IS NULL THEN null ELSE t.total - old.tf END
  DELETE old
}
SET n.lex_len = r.lens, n.lex = r.lex
WITH n, r, [x IN [['vec|topic_embedding|', n:Topic AND n.embedding IS NOT NULL],
                  ['vec|scene_embedding|', n:Scene AND n.embedding IS NOT NULL],
                  ['vec|scene_dialogue_embedding|', n:Scene AND n.dialogue_embedding IS NOT NULL],
                  ['vec|scene_horizon_embedding|', n:Scene AND n.horizon_embedding IS NOT NULL],
                  ['vec|item_embedding|', n:Item AND n.embedding IS NOT NULL],
                  ['vec|turn_embedding|', n:Turn AND n.passage_embedding IS NOT NULL],
                  ['vec|trigger_embedding|' + coalesce(n.family, ''), n:Trigger AND n.embedding IS NOT NULL]]
            WHERE x[1] | x[0]] AS vectors
CALL (n, r, vectors) {
  UNWIND range(0, size(r.keys) + size(vectors) - 1) AS i
  WITH i, CASE WHEN i < size(r.keys) THEN r.keys[i] ELSE vectors[i - size(r.keys)] END AS key,
       CASE WHEN i < size(r.keys) THEN r.tfs[i] ELSE 1 END AS tf
  MERGE (t:Term {memory_id: $memory_id, key: key})
  WITH n, t, tf, key ENDS WITH '|' AND NOT key STARTS WITH 'vec|' AS field   // a field's node sums lengths
  SET t.total = CASE WHEN field THEN coalesce(t.total, 0) + tf ELSE null END
  CREATE (n)-[:HAS_TERM {tf: tf}]->(t)
}
RETURN count(n) AS linked
