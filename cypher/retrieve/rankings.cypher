// The first round trip of a recall: the memory's state, then every ranking the recall uses and
// what of them needs the graph, in one query (docs/design-and-evidence.md).
// - BM25: the full-text index's candidates of one kind in the memory (its `ft_scope` token in
//   $bm25.<kind>.lucene), at most `fetch`, each scored exactly on the memory's own statistics:
//   each query term's document frequency per field is the degree of the memory's :Term node of
//   that field and term, each field's object count and mean length come with the parameters, a
//   candidate's term counts and lengths are read off its `lex` and `lex_len` (retrieve/lexical.py);
//   best `k` kept. A word common in the memory (see below) is left out of the search when the
//   ranking's last place then outscores every object holding only common words; otherwise the
//   ranking searches again with every word.
// - Vectors: a SEARCH of each vector index filtered inside the index by memory (each family of
//   trigger views has its own index: ItemView, SceneView, HorizonView), asked for `fetch` entries
//   (never more than the memory holds: a deeper filtered search fails on some servers), scored by the index's full-precision cosine, best `k` kept
//   (the Horizon ranking searches the scenes' Horizon vectors, whose cosine with the query is
//   the mean of the scene's Horizon views' cosines: store/scene_horizon); when the window comes
//   back shorter than asked, or the memory holds so few entries that scoring them all costs
//   less than a search (`scan`), the memory's entries are scored one by one instead
//   (`vector.similarity.cosine`): a memory is never ranked on fewer than it holds. When this
//   query fails (an index missing or broken, an embedding set by hand that has
//   no cosine), the caller runs retrieve/rankings_exact.
// $memory_id, $lease_id (the memory's name: its lease), $vector, $limit (the depth of the exact
// recent ranking), $commit_ms; $bm25: one map per kind (topic, scene, item, turn: the turns a
// scene holds) {k, fetch (0: not asked), index, lucene (every word), scope, clauses, words
// (lexical.lucene_parts: what the search without the common words is built of), common (the
// postings a common word has at least), fields: [{boost, docs, avg}] in the order of lexical.KINDS,
// terms: [{key, probe (lexical.lex_probe), field (its place in fields), word (its query term's place)}]}; $vec: one {k, fetch, scan} map per
// vector ranking (k 0: not asked): topic, scene, dialogue, lane (turns a scene holds), item,
// item_views, scene_views, horizon (scenes by their Horizon vector: the setting horizon_views
// "mean"), horizon_views (the Horizon views, each scene by its best: "best"); $cosine {k0, topics, cue,
// lane, scene_lists} (which scenes' cosines: see the columns); switches $persona, $recent,
// $recent_lexical (booleans); $past_commit (read even though a writer's `committing` mark is set:
// the caller knows it is stale; otherwise a recall that finds a commit under way gets the state
// alone); $speaker (null: every persona).
// Every list leaves out what reads as null: a node a concurrent replacement or drop deleted
// (the version the second query reads tells the caller the memory changed).
// Columns: exists, version, committing, host, pid (the memory's state); bm25_searches (per kind
// searched: {kind, left_out (common words left out), again (searched again with every word)});
// each ranking as
// parallel <name>_ids and <name>_scores lists, best first, equal scores by id: topic_bm25,
// scene_bm25, item_bm25, lane_bm25 (turns), topic_dense, scene_dense, dialogue, lane_dense (with
// lane_dense_scenes: each turn's scene), scene_trigger (each scene's best Scene-trigger view),
// horizon, item_dense; turn_words (the largest share of the query terms' IDF weight one turn
// holds, null without terms); item_views ([host, position, channel, score], best first, equal
// scores by host, position, channel); topic_ids with topic_scenes (the scenes of each topic of
// topic_bm25 and topic_dense); scene_cosine (the cosine of every scene the pool may hold: those
// of the topics first in the RRF of the topic rankings, $cosine.topics of them, the first
// $cosine.cue of each SceneCue list, the scenes of the first $cosine.lane turns, and with
// $cosine.scene_lists the scene rankings'; the caller asks retrieve/cosines for any other);
// recent_dense (the turns no scene holds yet, by exact cosine) and recent_texts ([id, text] of
// each of them, for the caller's BM25); personas ([{speaker, summary}]).
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
    CALL db.index.fulltext.queryNodes(b.index, lucene, {limit: b.fetch}) YIELD node AS n
    WHERE n.memory_id = $memory_id
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
       bound > 0 AND NOT coalesce(scores[CASE WHEN b.k > 0 THEN b.k ELSE 1 END - 1] > bound, false) AS again
  CALL (b, probes, fields, avgs, weights, again) {   // the same, with every word
    WITH b, probes, fields, avgs, weights WHERE again
    CALL db.index.fulltext.queryNodes(b.index, b.lucene, {limit: b.fetch}) YIELD node AS n
    WHERE n.memory_id = $memory_id
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
    UNWIND CASE WHEN $vec.topic.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (n:Topic)
      SEARCH n IN (VECTOR INDEX topic_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $vec.topic.fetch)
      SCORE AS score
    RETURN collect([n.id, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.topic.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (n:Topic {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector)
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.topic.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.topic.k
  RETURN collect(hit[0]) AS topic_dense_ids, collect(hit[1]) AS topic_dense_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.scene.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.scene.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (n:Scene)
      SEARCH n IN (VECTOR INDEX scene_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $vec.scene.fetch)
      SCORE AS score
    RETURN collect([n.id, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.scene.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector)
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.scene.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.scene.k
  RETURN collect(hit[0]) AS scene_dense_ids, collect(hit[1]) AS scene_dense_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.dialogue.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.dialogue.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (n:Scene)
      SEARCH n IN (VECTOR INDEX scene_dialogue_embedding FOR $vector WHERE n.memory_id = $memory_id
                   LIMIT $vec.dialogue.fetch)
      SCORE AS score
    RETURN collect([n.id, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.dialogue.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.dialogue_embedding) = size($vector)
    WITH n, vector.similarity.cosine(n.dialogue_embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.dialogue.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.dialogue.k
  RETURN collect(hit[0]) AS dialogue_ids, collect(hit[1]) AS dialogue_scores
}
CALL (go) {   // the turn lane: turns a scene holds, by their passage embedding, each with its scene
  WITH go WHERE go AND $vec.lane.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.lane.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (n:Turn)
      SEARCH n IN (VECTOR INDEX turn_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $vec.lane.fetch)
      SCORE AS score
    RETURN collect([n, score]) AS window
  }
  CALL (window) {
    UNWIND CASE WHEN size(window) = $vec.lane.fetch THEN window ELSE [] END AS hit
    WITH hit[0] AS n, hit[1] AS score
    MATCH (s:Scene)-[:HAS_TURN]->(n) WHERE NOT n:Pending
    RETURN collect([n.id, s.id, score]) AS hits
  }
  CALL (window) {
    UNWIND CASE WHEN size(window) < $vec.lane.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (s:Scene)-[:HAS_TURN]->(n:Turn {memory_id: $memory_id})
    WHERE size(n.passage_embedding) = size($vector) AND NOT n:Pending
    WITH n, s, vector.similarity.cosine(n.passage_embedding, $vector) AS score
    RETURN collect([n.id, s.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(window) < $vec.lane.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL AND hit[2] IS NOT NULL
  ORDER BY hit[2] DESC, hit[0], hit[1] LIMIT $vec.lane.k
  RETURN collect(hit[0]) AS lane_dense_ids, collect(hit[2]) AS lane_dense_scores, collect(hit[1]) AS lane_dense_scenes
}
CALL (go) {   // item trigger views
  WITH go WHERE go AND $vec.item_views.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.item_views.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (v:ItemView)
      SEARCH v IN (VECTOR INDEX item_view_embedding FOR $vector WHERE v.memory_id = $memory_id
                   LIMIT $vec.item_views.fetch)
      SCORE AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.item_views.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'item' AND size(v.embedding) = size($vector)
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.item_views.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.item_views.k
  WITH hit WHERE hit[1] IS NOT NULL
  RETURN collect(hit) AS item_views
}
CALL (go) {   // Scene-trigger views: each scene reached by its best view
  WITH go WHERE go AND $vec.scene_views.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.scene_views.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (v:SceneView)
      SEARCH v IN (VECTOR INDEX scene_trigger_view_embedding FOR $vector WHERE v.memory_id = $memory_id
                   LIMIT $vec.scene_views.fetch)
      SCORE AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.scene_views.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'scene' AND size(v.embedding) = size($vector)
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.scene_views.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.scene_views.k
  WITH hit[0] AS host, max(hit[3]) AS score
  ORDER BY score DESC, host
  RETURN collect(host) AS scene_trigger_ids, collect(score) AS scene_trigger_scores
}
CALL (go) {   // Horizon: each scene by the mean cosine of its Horizon views, which is the cosine of its
  WITH go WHERE go AND $vec.horizon.k > 0   // Horizon vector with the query's, a 0 appended (store/scene_horizon)
  CALL () {
    UNWIND CASE WHEN $vec.horizon.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    WITH $vector + [0.0] AS query
    MATCH (n:Scene)
      SEARCH n IN (VECTOR INDEX scene_horizon_embedding FOR query WHERE n.memory_id = $memory_id
                   LIMIT $vec.horizon.fetch)
      SCORE AS score
    RETURN collect([n.id, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.horizon.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (n:Scene {memory_id: $memory_id}) WHERE size(n.horizon_embedding) = size($vector) + 1
    WITH n, vector.similarity.cosine(n.horizon_embedding, $vector + [0.0]) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.horizon.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[1] IS NOT NULL
  ORDER BY hit[1] DESC, hit[0] LIMIT $vec.horizon.k
  RETURN collect(hit[0]) AS horizon_mean_ids, collect(hit[1]) AS horizon_mean_scores
}
CALL (go) {   // Horizon views, with the setting horizon_views "best": each scene reached by its best view
  WITH go WHERE go AND $vec.horizon_views.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.horizon_views.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (v:HorizonView)
      SEARCH v IN (VECTOR INDEX horizon_view_embedding FOR $vector WHERE v.memory_id = $memory_id
                   LIMIT $vec.horizon_views.fetch)
      SCORE AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.horizon_views.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (v:Trigger {memory_id: $memory_id}) WHERE v.family = 'horizon' AND size(v.embedding) = size($vector)
    WITH v, vector.similarity.cosine(v.embedding, $vector) AS score
    RETURN collect([v.host_id, v.position, v.channel, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.horizon_views.fetch THEN scanned ELSE hits END AS hit
  WITH hit WHERE hit[0] IS NOT NULL AND hit[3] IS NOT NULL
  ORDER BY hit[3] DESC, hit[0], hit[1] IS NOT NULL, hit[1], hit[2] IS NOT NULL, hit[2] LIMIT $vec.horizon_views.k
  WITH hit[0] AS host, max(hit[3]) AS score
  ORDER BY score DESC, host
  RETURN collect(host) AS horizon_best_ids, collect(score) AS horizon_best_scores
}
CALL (go) {
  WITH go WHERE go AND $vec.item.k > 0
  CALL () {
    UNWIND CASE WHEN $vec.item.scan THEN [] ELSE [1] END AS search   // few entries: scanned below
    MATCH (n:Item)
      SEARCH n IN (VECTOR INDEX item_embedding FOR $vector WHERE n.memory_id = $memory_id LIMIT $vec.item.fetch)
      SCORE AS score
    RETURN collect([n.id, score]) AS hits
  }
  CALL (hits) {
    UNWIND CASE WHEN size(hits) < $vec.item.fetch THEN [1] ELSE [] END AS short   // the window came back short
    MATCH (n:Item {memory_id: $memory_id}) WHERE size(n.embedding) = size($vector)
    WITH n, vector.similarity.cosine(n.embedding, $vector) AS score
    RETURN collect([n.id, score]) AS scanned
  }
  UNWIND CASE WHEN size(hits) < $vec.item.fetch THEN scanned ELSE hits END AS hit
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
  MATCH (s:Scene {memory_id: $memory_id, id: id}) WHERE size(s.embedding) = size($vector)
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
  WHERE size(t.embedding) = size($vector)
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
