// Creates the Memory node. $memory_id, $encoder, $dim, $speakers, $created_at.
CREATE (m:Memory {id: $memory_id, encoder: $encoder, dim: $dim, speakers: $speakers,
                  created_at: $created_at})
RETURN m.id AS id
