// Creates the Memory node. $memory_id, $encoder, $dim, $speakers, $created_at, $version (a new
// one for every write: readers compare it before and after a recall, see retrieve/rankings).
CREATE (m:Memory {id: $memory_id, encoder: $encoder, dim: $dim, speakers: $speakers,
                  created_at: $created_at, version: $version})
RETURN m.id AS id
