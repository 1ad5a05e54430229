// One memory's header. $memory_id. Columns: id, encoder, dim, speakers, created_at, ledger,
// version (new with every write transaction).
// A hidden memory (an import or a drop under way, or its debris: `importing` set) is absent.
MATCH (m:Memory {id: $memory_id})
WHERE m.importing IS NULL
RETURN m.id AS id, m.encoder AS encoder, m.dim AS dim, m.speakers AS speakers,
       m.created_at AS created_at, m.ledger AS ledger, m.version AS version
