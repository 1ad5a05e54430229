// Dense index of trigger views, filterable by memory and trigger family inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX trigger_embedding IF NOT EXISTS FOR (n:Trigger) ON n.embedding WITH [n.memory_id, n.family]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
