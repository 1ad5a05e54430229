// The first round trip of a recall: the memory's state, then what of the query's rankings needs
// the graph, in one query (docs/retrieval.md, "Two round trips"). The BM25 and vector rankings
// are the caller's, on the memory's own statistics and embeddings (retrieve/lexical.py,
// retrieve/vectors.py): exact, and independent of every other memory the database holds.
// $memory_id, $lease_id (the memory's name: its lease), $vector, $limit (the depth of the exact
// recent ranking), $commit_ms; $topic_ids (the topics the caller ranked, to gather their scenes);
// switches $persona, $recent, $recent_lexical (booleans); $past_commit (read even though a
// writer's `committing` mark is set: the caller knows it is stale; otherwise a recall that finds
// a commit under way gets the state alone); $speaker (null: every persona).
// Every list leaves out what reads as null: a node a concurrent replacement or drop deleted
// (the version the second query reads tells the caller the memory changed).
// Columns: exists, version, committing, host, pid (the memory's state); topic_ids with
// topic_scenes (the scenes of each of $topic_ids that exists); recent_dense (the turns no scene
// holds yet, by exact cosine) and recent_texts ([id, text] of each of them, for the caller's
// BM25); personas ([{speaker, summary}]).
CYPHER 25
CALL () {
  OPTIONAL MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL   // hidden: absent
  OPTIONAL MATCH (l:WriteLease {memory_id: $lease_id})   // the memory's name's (store/lease.py)
  WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
  RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
         l.host AS host, l.pid AS pid
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit)
  UNWIND $topic_ids AS id
  MATCH (t:Topic {memory_id: $memory_id, id: id})
  RETURN collect(id) AS topic_ids, collect(COLLECT { MATCH (t)-[:HAS_SCENE]->(s:Scene) RETURN s.id }) AS topic_scenes
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $recent_lexical
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE t.id IS NOT NULL AND t.text IS NOT NULL
  RETURN collect([t.id, t.text]) AS recent_texts
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $recent
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE t.embedding IS NOT NULL
  WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
  WHERE t.id IS NOT NULL AND score IS NOT NULL
  ORDER BY score DESC, t.id
  LIMIT $limit
  RETURN collect(t.id) AS recent_dense_ids, collect(score) AS recent_dense_scores
}
CALL (exists, committing) {
  WITH exists WHERE exists AND (NOT committing OR $past_commit) AND $persona
  MATCH (p:Persona {memory_id: $memory_id})
  WHERE $speaker IS NULL OR p.speaker = $speaker
  WITH p ORDER BY p.seq
  RETURN collect({speaker: p.speaker, summary: p.summary}) AS personas
}
RETURN exists, version, committing, host, pid, topic_ids, topic_scenes, recent_texts,
       recent_dense_ids, recent_dense_scores, personas
