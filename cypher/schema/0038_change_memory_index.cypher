// Finds the recorded edits of one memory's object (history, drop) without a label scan.
CREATE INDEX change_memory IF NOT EXISTS FOR (n:Change) ON (n.memory_id, n.kind, n.object_id)
