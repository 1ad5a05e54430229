// A memory's BM25 statistics and index counts (retrieve/lexical.py): one :Term node per key
// ("scene|title|allergi", "scene|title|", "vec|item_embedding|") and memory, found by both.
CREATE CONSTRAINT term_key IF NOT EXISTS FOR (n:Term) REQUIRE (n.memory_id, n.key) IS UNIQUE
