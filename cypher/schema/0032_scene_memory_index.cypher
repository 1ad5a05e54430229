// Finds all Scene nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX scene_memory IF NOT EXISTS FOR (n:Scene) ON (n.memory_id)
