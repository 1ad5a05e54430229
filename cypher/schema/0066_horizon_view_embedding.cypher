// Dense index of the scenes' Horizon views (label HorizonView), filterable by memory inside the
// index. $dimensions: the encoder's dimension.
CREATE VECTOR INDEX horizon_view_embedding IF NOT EXISTS FOR (n:HorizonView) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
