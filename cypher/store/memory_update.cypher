// Updates a memory's speakers and construction cost ledger. $memory_id, $speakers, $ledger (JSON).
MATCH (m:Memory {id: $memory_id})
SET m.speakers = $speakers, m.ledger = $ledger
