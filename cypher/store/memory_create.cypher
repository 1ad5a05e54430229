// Creates the Memory node. $memory_id, $encoder, $dim, $speakers, $created_at, $version (a new
// one for every write: readers compare it before and after a recall, see retrieve/rankings);
// $importing (null, or the token of an import written in batches: hidden until
// store/memory_publish).
// `turn_passages`: every turn of this memory is written with its passage embedding (the turn
// channel searches only memories so marked: one made by an older version has turns without);
// `terms`: its BM25 statistics, index counts and scenes' Horizon vectors are kept as it is written
// (store/terms_write, store/scene_horizon; 2: both, 1: the first alone, written before the second was kept).
CREATE (m:Memory {id: $memory_id, encoder: $encoder, dim: $dim, speakers: $speakers,
                  created_at: $created_at, version: $version, turn_passages: true, terms: 2, importing: $importing})
RETURN m.id AS id
