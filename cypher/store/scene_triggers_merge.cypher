// Writes trigger views of Scene hosts and links each to its host; each view is labelled by its
// family, SceneView (family scene: index scene_trigger_view_embedding) or HorizonView (family horizon:
// index horizon_view_embedding). $memory_id;
// $rows: [{id, host_id, family, channel, text, position, rationale, embedding}].
UNWIND $rows AS r
MATCH (h:Scene {memory_id: $memory_id, id: r.host_id})
MERGE (v:Trigger {memory_id: $memory_id, id: r.id})
FOREACH (_ IN CASE WHEN r.family = 'horizon' THEN [1] ELSE [] END | SET v:HorizonView REMOVE v:SceneView)
FOREACH (_ IN CASE WHEN r.family = 'horizon' THEN [] ELSE [1] END | SET v:SceneView REMOVE v:HorizonView)
SET v.host_id = r.host_id, v.family = r.family, v.channel = r.channel, v.text = r.text,
    v.position = r.position, v.rationale = r.rationale, v.embedding = r.embedding
MERGE (v)-[:TRIGGERS]->(h)
