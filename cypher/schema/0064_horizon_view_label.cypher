// Every Horizon view of a scene carries the label HorizonView (index horizon_view_embedding), not
// SceneView, which they carried when one index held both scene families (see 0058 and 0063).
// store/scene_triggers_merge sets it; this moves views written before. No parameters.
MATCH (v:Trigger)
WHERE v.family = 'horizon' AND (v:SceneView OR NOT v:HorizonView)
CALL (v) { REMOVE v:SceneView SET v:HorizonView } IN TRANSACTIONS OF 10000 ROWS
