// A Turn's id is unique within its memory.
CREATE CONSTRAINT turn_key IF NOT EXISTS FOR (n:Turn) REQUIRE (n.memory_id, n.id) IS UNIQUE
