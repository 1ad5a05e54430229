// Finds all Persona nodes of one memory (counts, export, drop) without a label scan.
CREATE INDEX persona_memory IF NOT EXISTS FOR (n:Persona) ON (n.memory_id)
