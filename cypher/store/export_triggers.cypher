// A memory's trigger views. $memory_id.
// Columns: host_id, family, channel, text, position, rationale.
MATCH (v:Trigger {memory_id: $memory_id})
RETURN v.host_id AS host_id, v.family AS family, v.channel AS channel, v.text AS text,
       v.position AS position, v.rationale AS rationale
ORDER BY v.host_id, v.position, v.channel
