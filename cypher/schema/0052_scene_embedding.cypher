// Dense index of Scene.embedding, filterable by memory inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX scene_embedding IF NOT EXISTS FOR (n:Scene) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
