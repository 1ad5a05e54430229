// Each family of trigger views has a label of its own and a vector index of its own, so that a
// search of one family is filtered inside its index by memory alone: a second filter (the family)
// costs a large memory's search about twice its time (docs/design-and-evidence.md "Recall at
// scale"). A scene's Scene-trigger views carry SceneView (index scene_trigger_view_embedding);
// 0060 and 0064 label the item and Horizon views. store/scene_triggers_merge sets it; this labels
// views written before. No parameters.
MATCH (v:Trigger)
WHERE v.family = 'scene' AND NOT v:SceneView
CALL (v) { SET v:SceneView } IN TRANSACTIONS OF 10000 ROWS
