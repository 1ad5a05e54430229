// A Scene's id is unique within its memory.
CREATE CONSTRAINT scene_key IF NOT EXISTS FOR (n:Scene) REQUIRE (n.memory_id, n.id) IS UNIQUE
