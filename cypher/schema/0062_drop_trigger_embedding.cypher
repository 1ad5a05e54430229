// The index of every trigger view, filtered by memory and family, which the family indexes
// (0061, 0065, 0066) replace: a database written before loses it. No parameters.
DROP INDEX trigger_embedding IF EXISTS
