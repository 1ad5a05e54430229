// Inside a build's write transaction: the turns that new scenes now hold leave Pending (their
// full-text scope becomes the built turns' one); the still pending ones keep what the boundary
// model said of them. $memory_id, $built (ids), $ft_scope (of built turns);
// $marks: [{id, starts}] (pending turns examined, starts: whether the turn opens a scene).
CALL () {
  UNWIND $built AS id
  MATCH (t:Pending {memory_id: $memory_id, id: id})
  REMOVE t:Pending, t.examined, t.starts_scene
  SET t.ft_scope = $ft_scope
  RETURN count(t) AS built
}
CALL () {
  UNWIND $marks AS r
  MATCH (t:Pending {memory_id: $memory_id, id: r.id})
  SET t.examined = true, t.starts_scene = r.starts
  RETURN count(t) AS marked
}
RETURN built, marked
