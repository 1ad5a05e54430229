// Dense index of Turn.passage_embedding (of `speaker: text`), filterable by memory inside the index: the recall's `turn`
// channel ranks scenes by their best turn (docs/design-and-evidence.md).
// $dimensions: the encoder's dimension.
CREATE VECTOR INDEX turn_embedding IF NOT EXISTS FOR (n:Turn) ON n.passage_embedding WITH [n.memory_id]
OPTIONS {indexConfig: {`vector.dimensions`: toInteger($dimensions), `vector.similarity_function`: 'cosine'}}
