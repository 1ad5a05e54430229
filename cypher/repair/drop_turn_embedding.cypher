// Drop the index turn_embedding so that `tmem db check --repair` can build it again from the stored data
// (schema apply re-creates it). No parameters.
DROP INDEX turn_embedding IF EXISTS
