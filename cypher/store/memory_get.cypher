// One memory's header, by its name or by the id its objects carry (`pid`): a memory replaced
// by a staged import lives under "<name>#<token>" (docs/reliability.md, "Large imports"); '#'
// sorts below every character a name may hold and '$' just above '#', so the range holds the
// name's own node and its staged versions alone, and one of them at most is visible.
// $memory_id. Columns: id (the name), pid, encoder, dim, speakers, created_at, ledger,
// version (new with every write transaction).
// A hidden memory (an import or a drop under way, or its debris: `importing` set) is absent.
MATCH (m:Memory)
WHERE m.id >= $memory_id AND m.id < $memory_id + '$' AND m.importing IS NULL
RETURN split(m.id, '#')[0] AS id, m.id AS pid, m.encoder AS encoder, m.dim AS dim, m.speakers AS speakers,
       m.created_at AS created_at, m.ledger AS ledger, m.version AS version
