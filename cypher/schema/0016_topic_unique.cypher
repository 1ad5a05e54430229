// A Topic's id is unique within its memory.
CREATE CONSTRAINT topic_key IF NOT EXISTS FOR (n:Topic) REQUIRE (n.memory_id, n.id) IS UNIQUE
