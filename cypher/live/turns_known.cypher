// Which of the incoming turns the memory holds already: by id ($ids), and, for turns without
// an id, by speaker, time and text ($keys: [{n, speaker, time, text}]); $candidates are ids the
// add would give to turns without one. $memory_id.
// Columns: ids (of $ids and $candidates taken), keys (the n of every $keys entry held).
CALL () {
  UNWIND $ids + $candidates AS id
  MATCH (t:Turn {memory_id: $memory_id, id: id})
  RETURN collect(t.id) AS ids
}
CALL () {
  UNWIND $keys AS k
  OPTIONAL MATCH (t:Turn {memory_id: $memory_id})
  WHERE t.speaker = k.speaker AND t.text = k.text AND
        (t.time = k.time OR (t.time IS NULL AND k.time IS NULL))
  WITH k, count(t) AS held WHERE held > 0
  RETURN collect(k.n) AS keys
}
RETURN ids, keys
