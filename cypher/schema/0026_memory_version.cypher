// Memories written before versions existed get one, so that recalls can tell when they change
// (retrieve/rankings, retrieve/finish). Idempotent: a memory with a version keeps it.
MATCH (m:Memory) WHERE m.version IS NULL
SET m.version = randomUUID()
