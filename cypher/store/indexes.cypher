// Every index of the database with its state. Columns: name, type, state, population (percent).
SHOW INDEXES YIELD name, type, state, populationPercent
RETURN name, type, state, populationPercent AS population
