// One memory's header. $memory_id. Columns: id, encoder, dim, speakers, created_at, ledger.
MATCH (m:Memory {id: $memory_id})
RETURN m.id AS id, m.encoder AS encoder, m.dim AS dim, m.speakers AS speakers,
       m.created_at AS created_at, m.ledger AS ledger
