// A Trigger's id is unique within its memory.
CREATE CONSTRAINT trigger_key IF NOT EXISTS FOR (n:Trigger) REQUIRE (n.memory_id, n.id) IS UNIQUE
