// Dense index of the items' trigger views (label ItemView), filterable by memory inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX item_view_embedding IF NOT EXISTS FOR (n:ItemView) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
