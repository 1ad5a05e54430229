// Finds the turns of one memory that no scene holds yet (label Pending: the live path's work
// and the recall's `recent` channel) without scanning the memory's other turns.
CREATE INDEX pending_turn_memory IF NOT EXISTS FOR (n:Pending) ON (n.memory_id)
