// The turns of one memory said within a time window: a question that names a day opens that
// day's scenes (retrieve/finish), found by this index, not by reading every turn of the memory.
CREATE INDEX turn_memory_time IF NOT EXISTS FOR (n:Turn) ON (n.memory_id, n.time)
