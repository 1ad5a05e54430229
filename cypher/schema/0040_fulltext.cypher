// The shared BM25 corpus: topic, scene and item texts, analysed as English (stop words
// removed, stemmed). `ft_scope` is one token "<kind><sha1 of memory id>" so a query is
// restricted to one kind of object in one memory inside Lucene.
CREATE FULLTEXT INDEX text_search IF NOT EXISTS
FOR (n:Topic|Scene|Item) ON EACH [n.ft_scope, n.title, n.summary, n.narrative, n.keywords_text, n.text]
OPTIONS {indexConfig: {`fulltext.analyzer`: 'english'}}
