// The index of the scenes' views of both families (label SceneView, filtered by memory and
// family), dropped before 0064 takes the Horizon views out of it (an index that lost entries
// keeps walking them: its searches took three times as long) and replaced by
// scene_trigger_view_embedding (0065). No parameters.
DROP INDEX scene_view_embedding IF EXISTS
