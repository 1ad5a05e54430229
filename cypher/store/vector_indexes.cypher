// The database's vector indexes and their dimensions. Columns: name, dimensions.
SHOW VECTOR INDEXES YIELD name, options
RETURN name, options.indexConfig.`vector.dimensions` AS dimensions
