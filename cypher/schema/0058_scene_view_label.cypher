// Every trigger view of a scene (families scene and horizon) also carries the label SceneView,
// which index scene_view_embedding covers: a search of a scene family then reads an index of
// scene views alone (filtered inside the trigger index, where item views far outnumber them, it
// walks several times longer: docs/design-and-evidence.md). store/scene_triggers_merge sets it; this
// labels views written before. No parameters.
MATCH (v:Trigger)
WHERE v.family IN ['scene', 'horizon'] AND NOT v:SceneView
CALL (v) { SET v:SceneView } IN TRANSACTIONS OF 10000 ROWS
