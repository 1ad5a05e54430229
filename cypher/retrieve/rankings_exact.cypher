// The first round trip of a recall when retrieve/rankings failed (an index missing or broken,
// as after a killed server, or an embedding set by hand that has no cosine): the same
// rankings and columns, every vector ranking exact from the memory's own entries one by one
// (`vector.similarity.cosine`, no vector index read), an embedding that is not numbers of the
// query's dimension, all zeros, a NaN or an infinity left out (as a vector index leaves it out).
// BM25 scores every object of the memory that has a query term (its :Term links), no full-text
// index read either. Generated from retrieve/rankings by fixed rules: keep the two in step.
// Parameters and columns: retrieve/rankings ($vec's `fetch` unused).
CYPHER 25
CALL () {
  OPTIONAL MATCH (m:Memory {id: $memory_id}) WHERE m.importing IS NULL   // hidden: absent
  OPTIONAL MATCH (l:WriteLease {memory_id: $lease_id})   // the memory's name's (store/lease.py)
  WHERE l.committing = true AND (l.expires_at >= timestamp() OR l.committing_since >= timestamp() - $commit_ms)
  RETURN m IS NOT NULL AS exists, m.version AS version, l IS NOT NULL AS committing,
         l.host AS host, l.pid AS pid
}
WITH exists, version, committing, host, pid, exists AND (NOT committing OR $past_commit) AS go
CALL (go) {   // every BM25 ranking, one kind a row
  WITH go WHERE go
  UNWIND ['topic', 'scene', 'item', 'turn'] AS kind
  WITH kind, $bm25[kind] AS b
  WHERE b.fetch > 0
  CALL (b) {   // each query term's weight in each field: boost × IDF on the memory's own statistics
    UNWIND b.terms AS term
    OPTIONAL MATCH (t:Term {memory_id: $memory_id, key: term.key})
    WITH term, b.fields[term.field] AS f, COUNT { (t)<-[:HAS_TERM]-() } AS df
    RETURN collect(term.probe) AS probes, collect(term.field) AS fields, collect(term.word) AS words,
           collect(f.avg) AS avgs, collect(df) AS dfs, collect(f.docs) AS docs,
           collect(f.boost * log(1 + (f.docs - df + 0.5) / (df + 0.5))) AS weights
  }
  // the common words: in each field held by none or at least half of the objects with text there,
  // by at least b.common objects in all (long postings, small weights); left out of the search
  // unless every word is. `bound`, their summed weights, is more than an object holding no other
  // word scores.
  WITH kind, b, probes, fields, avgs, weights, words, dfs,
       [j IN range(0, size(b.words) - 1) WHERE b.words[j].term >= 0
          AND all(i IN range(0, size(words) - 1) WHERE words[i] <> b.words[j].term OR dfs[i] = 0 OR 2 * dfs[i] >= docs[i])
          AND reduce(n = 0, i IN range(0, size(words) - 1) | n + CASE WHEN words[i] = b.words[j].term THEN dfs[i] ELSE 0 END)
              >= b.common | b.words[j].term] AS common
  WITH kind, b, probes, fields, avgs, weights, words, dfs,
       CASE WHEN all(w IN b.words WHERE w.term < 0 OR w.term IN common) THEN [] ELSE common END AS common
  WITH kind, b, probes, fields, avgs, weights, common,
       reduce(s = 0.0, i IN range(0, size(words) - 1) | s + CASE WHEN words[i] IN common AND dfs[i] > 0 THEN weights[i] ELSE 0.0 END) AS bound,
       reduce(s = '', w IN [w IN b.words WHERE NOT w.term IN common] | s + CASE WHEN s = '' THEN '' ELSE ' ' END + w.text) AS body
  WITH kind, b, probes, fields, avgs, weights, bound, size(common) AS left_out,
       CASE WHEN size(common) = 0 THEN b.lucene
            ELSE b.scope + ' +(' + reduce(s = '', c IN b.clauses | s + CASE WHEN s = '' THEN '' ELSE ' ' END
                                                                   + c.open + body + c.close) + ')' END AS lucene
  CALL (b, probes, fields, avgs, weights, lucene) {   // the index's candidates in the memory, scored exactly
    UNWIND b.terms AS term   // every object that has a query term: exact, no full-text index
    MATCH (:Term {memory_id: $memory_id, key: term.key})<-[:HAS_TERM]-(n)
    WITH DISTINCT n
    WITH n.id AS id, n.lex AS lex, n.lex_len AS lens
    WITH id, lens, [i IN range(0, size(probes) - 1) WHERE lex CONTAINS probes[i]   // each term's count, off `lex`
                    | [i, toFloat(split(split(lex, probes[i])[1], ' ')[0])]] AS counts
    WITH id, reduce(s = 0.0, c IN counts |   // BM25 (k1 1.2, b 0.75), each field on its own statistics
                    s + coalesce(weights[c[0]] * c[1] / (c[1] + 1.2 * (1 - 0.75 + 0.75 * lens[fields[c[0]]] / avgs[c[0]])), 0.0)) AS score,
             reduce(s = 0.0, c IN counts | s + weights[c[0]]) AS holds
    WHERE id IS NOT NULL AND score > 0
    ORDER BY score DESC, id
    RETURN collect(id) AS ids, collect(score) AS scores, max(holds) AS most
  }
  // exact when the ranking's last place (its first, asked for none) outscores `bound`; else every word
  WITH kind, b, probes, fields, avgs, weights, left_out, ids, scores, most,
       false AS again
  CALL (b, probes, fields, avgs, weights, again) {   // the same, with every word
    WITH b, probes, fields, avgs, weights WHERE again
    UNWIND b.terms AS term   // every object that has a query term: exact, no full-text index
    MATCH (:Term {memory_id: $memory_id, key: term.key})<-[:HAS_TERM]-(n)
    WITH DISTINCT n
    WITH n.id AS id, n.lex AS lex, n.lex_len AS lens
    WITH id, lens, [i IN range(0, size(probes) - 1) WHERE lex CONTAINS probes[i]
                    | [i, toFloat(split(split(lex, probes[i])[1], ' ')[0])]] AS counts
    WITH id, reduce(s = 0.0, c IN counts |
                    s + coalesce(weights[c[0]] * c[1] / (c[1] + 1.2 * (1 - 0.75 + 0.75 * lens[fields[c[0]]] / avgs[c[0]])), 0.0)) AS score,
             reduce(s = 0.0, c IN counts | s + weights[c[0]]) AS holds
    WHERE id IS NOT NULL AND score > 0
    ORDER BY score DESC, id
    RETURN collect(id) AS all_ids, collect(score) AS all_scores, max(holds) AS all_most
  }
  WITH kind, b, weights, left_out, again,
       CASE WHEN again THEN [all_ids, all_scores, all_most] ELSE [ids, scores, most] END AS ranked
  RETURN collect(kind) AS kinds, collect({kind: kind, left_out: left_out, again: again}) AS bm25_searches,
         collect([ranked[0][..b.k], ranked[1][..b.k]]) AS rankings,
         head(collect(CASE WHEN kind = 'turn' THEN coalesce(ranked[2], 0.0) / reduce(s = 0.0, x IN weights | s + x) END)) AS turn_words
}
WITH *, [k IN ['topic', 'scene', 'item', 'turn'] | coalesce(rankings[head([i IN range(0, size(kinds) - 1) WHERE kinds[i] = k])], [[], []])] AS bm25
WITH *, bm25[0][0] AS topic_bm25_ids, bm25[0][1] AS topic_bm25_scores, bm25[1][0] AS scene_bm25_ids,
     bm25[1][1] AS scene_bm25_scores, bm25[2][0] AS item_bm25_ids, bm25[2][1] AS item_bm25_scores,
     bm25[3][0] AS lane_bm25_ids, bm25[3][1] AS lane_bm25_scores
CALL (go) {
  WITH go WHERE go AND $vec.topic.k > 0
  CALL () {
    MATCH (n:Topic {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector) AND CASE WHEN n.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.embedding | q + x * x) < 1e300 ELSE false END
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.topic.k
  RETURN collect(hit[0]) AS topic_dense_ids, collect(hit[1]) AS topic_dense_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.scene.k > 0
  CALL () {
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector) AND CASE WHEN n.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.embedding | q + x * x) < 1e300 ELSE false END
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.scene.k
  RETURN collect(hit[0]) AS scene_dense_ids, collect(hit[1]) AS scene_dense_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.dialogue.k > 0
  CALL () {
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.dialogue_embedding) = size($vector) AND CASE WHEN n.dialogue_embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.dialogue_embedding | q + x * x) < 1e300 ELSE false END
    WITH n, vector.similarity.cosine(n.dialogue_embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.dialogue.k
  RETURN collect(hit[0]) AS dialogue_ids, collect(hit[1]) AS dialogue_scores
}
CALL (go) {   // the turn lane: turns a scene holds, by their passage embedding, each with its scene
  WITH go WHERE go AND $vec.lane.k > 0
  CALL () {
    MATCH (s:Scene)-[:HAS_TURN]->(n:Turn {memory_id: $memory_id})
    WHERE size(n.passage_embedding) = size($vector) AND CASE WHEN n.passage_embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.passage_embedding | q + x * x) < 1e300 ELSE false END AND NOT n:Pending
    WITH n, s, vector.similarity.cosine(n.passage_embedding, $vector) AS score
    RETURN collect([n.id, s.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL AND hit[2] IS NOT NULL
  ORDER BY hit[2] DESC, hit[0], hit[1] LIMIT $vec.lane.k
  RETURN collect(hit[0]) AS lane_dense_ids, collect(hit[2]) AS lane_dense_scores, collect(hit[1]) AS lane_dense_scenes
}
CALL (go) {   // item trigger views
  WITH go WHERE go AND $vec.item_views.k > 0
  CALL () {
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'item' AND size(v.embedding) = size($vector) AND CASE WHEN v.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN v.embedding | q + x * x) < 1e300 ELSE false END
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.item_views.k
  WITH hit WHERE hit[1] IS NOT NULL
  RETURN collect(hit) AS item_views
}
CALL (go) {   // Scene-trigger views: each scene reached by its best view
  WITH go WHERE go AND $vec.scene_views.k > 0
  CALL () {
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'scene' AND size(v.embedding) = size($vector) AND CASE WHEN v.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN v.embedding | q + x * x) < 1e300 ELSE false END
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.scene_views.k
  WITH hit[0] AS host, max(hit[3]) AS score
  ORDER BY score DESC, host
  RETURN collect(host) AS scene_trigger_ids, collect(score) AS scene_trigger_scores
}
CALL (go) {   // Horizon: each scene by the mean cosine of its Horizon views, which is the cosine of its
  WITH go WHERE go AND $vec.horizon.k > 0   // Horizon vector with the query's, a 0 appended (store/scene_horizon)
  CALL () {
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.horizon_embedding) = size($vector) + 1 AND CASE WHEN n.horizon_embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.horizon_embedding | q + x * x) < 1e300 ELSE false END
    WITH n, vector.similarity.cosine(n.horizon_embedding, $vector + [0.0]) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.horizon.k
  RETURN collect(hit[0]) AS horizon_mean_ids, collect(hit[1]) AS horizon_mean_scores
}
CALL (go) {   // Horizon views, with the setting horizon_views "best": each scene reached by its best view
  WITH go WHERE go AND $vec.horizon_views.k > 0
  CALL () {
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'horizon' AND size(v.embedding) = size($vector) AND CASE WHEN v.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN v.embedding | q + x * x) < 1e300 ELSE false END
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.horizon_views.k
  WITH hit[0] AS host, max(hit[3]) AS score
  ORDER BY score DESC, host
  RETURN collect(host) AS horizon_best_ids, collect(score) AS horizon_best_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.item.k > 0
  CALL () {
    MATCH (n:Item {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector) AND CASE WHEN n.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN n.embedding | q + x * x) < 1e300 ELSE false END
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND scanned AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.item.k
  RETURN collect(hit[0]) AS item_dense_ids, collect(hit[1]) AS item_dense_scores
}
CALL (go, topic_bm25_ids, topic_dense_ids) {
  WITH go WHERE go
  UNWIND topic_bm25_ids + [id IN topic_dense_ids WHERE NOT id IN topic_bm25_ids] AS id
  MATCH (t:Topic {memory_id: $memory_id, id: id})
  RETURN collect(id) AS topic_ids, collect(COLLECT { MATCH (t)-[:HAS_SCENE]->(s:Scene) RETURN s.id }) AS topic_scenes
}
CALL (go, topic_bm25_ids, topic_dense_ids, topic_ids, topic_scenes, scene_bm25_ids, scene_dense_ids, dialogue_ids,
      lane_dense_scenes, scene_trigger_ids, horizon_mean_ids, horizon_best_ids) {   // the cosines of the scenes the pool may hold
  WITH go WHERE go
  CALL (topic_bm25_ids, topic_dense_ids) {   // the topics the prefilter may choose: RRF, the first $cosine.topics
    UNWIND [i IN range(0, size(topic_bm25_ids) - 1) | [topic_bm25_ids[i], 1.0 / ($cosine.k0 + i + 1)]]
           + [i IN range(0, size(topic_dense_ids) - 1) | [topic_dense_ids[i], 1.0 / ($cosine.k0 + i + 1)]] AS part
    WITH part[0] AS topic, sum(part[1]) AS score
    ORDER BY score DESC LIMIT $cosine.topics
    RETURN collect(topic) AS chosen
  }
  UNWIND reduce(all = [], i IN [i IN range(0, size(topic_ids) - 1) WHERE topic_ids[i] IN chosen] | all + topic_scenes[i])
         + CASE WHEN $cosine.scene_lists THEN scene_bm25_ids + scene_dense_ids ELSE [] END
         + dialogue_ids[..$cosine.cue] + scene_trigger_ids[..$cosine.cue] + horizon_mean_ids[..$cosine.cue]
         + horizon_best_ids[..$cosine.cue]
         + lane_dense_scenes[..$cosine.lane] AS id
  WITH DISTINCT id
  MATCH (s:Scene {memory_id: $memory_id, id: id}) WHERE size(s.embedding) = size($vector) AND CASE WHEN s.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN s.embedding | q + x * x) < 1e300 ELSE false END
  WITH s.id AS id, vector.similarity.cosine(s.embedding, $vector) AS score WHERE score IS NOT NULL
  RETURN collect(id) AS scene_cosine_ids, collect(score) AS scene_cosine_scores
}
CALL (go) {
  WITH go WHERE go AND $recent_lexical
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE t.id IS NOT NULL AND t.text IS NOT NULL
  RETURN collect([t.id, t.text]) AS recent_texts
}
CALL (go) {
  WITH go WHERE go AND $recent
  MATCH (t:Pending {memory_id: $memory_id})
  WHERE size(t.embedding) = size($vector) AND CASE WHEN t.embedding IS :: LIST<INTEGER NOT NULL | FLOAT NOT NULL> THEN 0 < reduce(q = 0.0, x IN t.embedding | q + x * x) < 1e300 ELSE false END
  WITH t, vector.similarity.cosine(t.embedding, $vector) AS score
  WHERE t.id IS NOT NULL AND score IS NOT NULL
  ORDER BY score DESC, t.id
  LIMIT $limit
  RETURN collect(t.id) AS recent_dense_ids, collect(score) AS recent_dense_scores
}
CALL (go) {
  WITH go WHERE go AND $persona
  MATCH (p:Persona {memory_id: $memory_id})
  WHERE $speaker IS NULL OR p.speaker = $speaker
  WITH p ORDER BY p.seq
  RETURN collect({speaker: p.speaker, summary: p.summary}) AS personas
}
RETURN exists, version, committing, host, pid, bm25_searches, topic_bm25_ids, topic_bm25_scores, scene_bm25_ids, scene_bm25_scores,
       item_bm25_ids, item_bm25_scores, lane_bm25_ids, lane_bm25_scores, turn_words, topic_dense_ids, topic_dense_scores, scene_dense_ids,
       scene_dense_scores, dialogue_ids, dialogue_scores, lane_dense_ids, lane_dense_scores, lane_dense_scenes,
       item_views, scene_trigger_ids, scene_trigger_scores,
       CASE WHEN $vec.horizon.k > 0 THEN horizon_mean_ids ELSE horizon_best_ids END AS horizon_ids,
       CASE WHEN $vec.horizon.k > 0 THEN horizon_mean_scores ELSE horizon_best_scores END AS horizon_scores, item_dense_ids,
       item_dense_scores, topic_ids, topic_scenes, scene_cosine_ids, scene_cosine_scores, recent_texts,
       recent_dense_ids, recent_dense_scores, personas
