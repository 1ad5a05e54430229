// Dense index of the Scene-trigger views (label SceneView), filterable by memory inside the index.
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX scene_trigger_view_embedding IF NOT EXISTS FOR (n:SceneView) ON n.embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
