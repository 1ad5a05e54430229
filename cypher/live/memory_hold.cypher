// Inside a transaction that deletes a memory: write-lock its node first, as an add does
// (live/memory_lock), so an add runs wholly before or after the delete. $memory_id.
OPTIONAL MATCH (m:Memory {id: $memory_id})
SET m.add_lock = timestamp()
