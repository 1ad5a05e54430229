// Sets each of one memory's field :Term nodes' `total` to the sum of its links' tf again, after
// objects linked to it were deleted (DETACH DELETE drops their links, not what they added to
// `total`). $memory_id, $keys (the field keys, lexical.term_key(kind, field)). Column: fixed.
UNWIND $keys AS key
MATCH (t:Term {memory_id: $memory_id, key: key})
SET t.total = COLLECT { MATCH (t)<-[r:HAS_TERM]-() RETURN sum(r.tf) }[0]
RETURN count(t) AS fixed
