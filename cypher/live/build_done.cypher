// Inside a build's write transaction: the memory's build progress, ledger and a new version;
// speakers are only added to (an add may have named a new one meanwhile). $memory_id,
// $persona_upto, $flushed (the flush_upto this build completed, or null), $speakers,
// $ledger (JSON), $version.
MATCH (m:Memory {id: $memory_id})
SET m.persona_upto = $persona_upto, m.ledger = $ledger, m.version = $version,
    m.speakers = coalesce(m.speakers, []) + [s IN $speakers WHERE NOT s IN coalesce(m.speakers, [])],
    m.flush_upto = CASE WHEN $flushed IS NOT NULL AND m.flush_upto = $flushed THEN null ELSE m.flush_upto END
