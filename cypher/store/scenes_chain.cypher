// Chains a memory's scenes in time order with NEXT. $memory_id; $rows: [{from, to}].
UNWIND $rows AS r
MATCH (a:Scene {memory_id: $memory_id, id: r.from})
MATCH (b:Scene {memory_id: $memory_id, id: r.to})
MERGE (a)-[:NEXT]->(b)
