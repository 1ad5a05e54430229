// Finds all Topic nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX topic_memory IF NOT EXISTS FOR (n:Topic) ON (n.memory_id)
