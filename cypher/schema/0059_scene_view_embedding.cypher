// Dense index of the trigger views of scenes (label SceneView: families scene and horizon),
// filterable by memory and family inside the index. $dimensions: the encoder's dimension.
CREATE VECTOR INDEX scene_view_embedding IF NOT EXISTS FOR (n:SceneView) ON n.embedding WITH [n.memory_id, n.family]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
