// A Item's id is unique within its memory.
CREATE CONSTRAINT item_key IF NOT EXISTS FOR (n:Item) REQUIRE (n.memory_id, n.id) IS UNIQUE
