// Deletes one scene that holds no turn any more: its trigger views; the items that rest on no
// other scene (with their trigger views); the topics that hold no other scene; the scene chain
// relinked around it. Items that keep one scene become `atomic`. $memory_id, $id.
// Columns: items ([ids deleted]), triggers, topics ([ids deleted]).
MATCH (s:Scene {memory_id: $memory_id, id: $id})
OPTIONAL MATCH (before:Scene)-[:NEXT]->(s)
OPTIONAL MATCH (s)-[:NEXT]->(after:Scene)
CALL (before, after) {
  WITH before, after WHERE before IS NOT NULL AND after IS NOT NULL
  MERGE (before)-[:NEXT]->(after)
}
WITH s, COLLECT { MATCH (s)-[:HAS_ITEM]->(i:Item) WHERE NOT EXISTS { MATCH (o:Scene)-[:HAS_ITEM]->(i) WHERE o <> s }
                  RETURN i } AS orphans,
        COLLECT { MATCH (s)-[:HAS_ITEM]->(i:Item) WHERE COUNT { MATCH (o:Scene)-[:HAS_ITEM]->(i) WHERE o <> s } = 1
                  RETURN i } AS single,
        COLLECT { MATCH (t:Topic)-[:HAS_SCENE]->(s) WHERE NOT EXISTS { MATCH (t)-[:HAS_SCENE]->(o:Scene) WHERE o <> s }
                  RETURN t } AS empty_topics
CALL (single) { UNWIND single AS i SET i.kind = 'atomic' }
CALL (s, orphans) {
  UNWIND [s] + orphans AS host
  MATCH (v:Trigger)-[:TRIGGERS]->(host)
  DETACH DELETE v
  RETURN count(v) AS triggers
}
WITH s, orphans, empty_topics, triggers, [i IN orphans | i.id] AS item_ids, [t IN empty_topics | t.id] AS topic_ids
CALL (orphans, empty_topics) { UNWIND orphans + empty_topics AS n DETACH DELETE n }
DETACH DELETE s
RETURN item_ids AS items, triggers, topic_ids AS topics
