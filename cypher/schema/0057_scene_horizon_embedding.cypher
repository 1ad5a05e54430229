// Dense index of Scene.horizon_embedding (store/scene_horizon: the mean of the scene's Horizon
// views as one unit vector, one component longer than the encoder's), filterable by memory
// inside the index. $dimensions: the encoder's dimension.
CREATE VECTOR INDEX scene_horizon_embedding IF NOT EXISTS FOR (n:Scene) ON n.horizon_embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions) + 1, `vector.similarity_function`: 'cosine'}}
