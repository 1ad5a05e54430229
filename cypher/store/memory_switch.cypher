// The switch of a replacement written in batches (a staged version, docs/reliability.md "Large
// imports"): in one small transaction the staged version becomes visible with a new version and
// the old one is hidden (`importing`: then deleted in batches, as a drop is). Run after
// live/memory_hold of the old one, so an add runs wholly before or after. $old, $staged,
// $token (the staged version's), $hide (the old one's mark), $version.
// Column: id (none: the staged version is not this import's, or the old one is gone).
MATCH (old:Memory {id: $old}) WHERE old.importing IS NULL
MATCH (m:Memory {id: $staged}) WHERE m.importing = $token
SET old.importing = $hide
REMOVE m.importing
SET m.version = $version
RETURN m.id AS id
