// Finds all Item nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX item_memory IF NOT EXISTS FOR (n:Item) ON (n.memory_id)
