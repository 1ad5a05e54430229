// Writes trigger views of Item hosts (labelled ItemView too: index item_view_embedding) and links
// each to its host. $memory_id; $rows: [{id, host_id, family, channel, text, position, rationale, embedding}].
UNWIND $rows AS r
MATCH (h:Item {memory_id: $memory_id, id: r.host_id})
MERGE (v:Trigger {memory_id: $memory_id, id: r.id})
SET v:ItemView
SET v.host_id = r.host_id, v.family = r.family, v.channel = r.channel, v.text = r.text,
    v.position = r.position, v.rationale = r.rationale, v.embedding = r.embedding
MERGE (v)-[:TRIGGERS]->(h)
