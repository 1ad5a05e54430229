// Drop the index scene_trigger_view_embedding so that `tmem db check --repair` can build it again from
// the stored data (schema apply re-creates it). No parameters.
DROP INDEX scene_trigger_view_embedding IF EXISTS
