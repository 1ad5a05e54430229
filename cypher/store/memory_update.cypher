// Updates a memory's speakers and construction cost ledger, and gives it a new version (every
// write of a memory does). $memory_id, $speakers, $ledger (JSON), $version.
MATCH (m:Memory {id: $memory_id})
SET m.speakers = $speakers, m.ledger = $ledger, m.version = $version
