// Memories written before versions existed get one, so that recalls can tell when they change
// (retrieve/memory_state). Idempotent: a memory with a version keeps it.
MATCH (m:Memory) WHERE m.version IS NULL
SET m.version = randomUUID()
