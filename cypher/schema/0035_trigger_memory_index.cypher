// Finds all Trigger nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX trigger_memory IF NOT EXISTS FOR (n:Trigger) ON (n.memory_id)
