// Dense index of Item.embedding, filterable by memory inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX item_embedding IF NOT EXISTS FOR (n:Item) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
