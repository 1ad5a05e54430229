// Dense index of Topic.embedding, filterable by memory inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX topic_embedding IF NOT EXISTS FOR (n:Topic) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
