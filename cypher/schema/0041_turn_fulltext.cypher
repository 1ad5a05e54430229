// BM25 over turn texts, analysed as English like text_search. `ft_scope` is one token
// "recent<sha1 of memory id>" while a turn waits for its scene (the recall's `recent`
// channel searches those), "turn<sha1 of memory id>" once a scene holds it.
CREATE FULLTEXT INDEX turn_search IF NOT EXISTS
FOR (n:Turn) ON EACH [n.ft_scope, n.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
