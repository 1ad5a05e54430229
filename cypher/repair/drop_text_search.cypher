// Drop the index text_search so that `tmem db check --repair` can build it again from the stored data
// (schema apply re-creates it). No parameters.
DROP INDEX text_search IF EXISTS
