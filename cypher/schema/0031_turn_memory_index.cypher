// Finds all Turn nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX turn_memory IF NOT EXISTS FOR (n:Turn) ON (n.memory_id)
