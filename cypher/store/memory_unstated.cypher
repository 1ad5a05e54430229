// The memories whose BM25 statistics and index counts are not kept yet (written before they
// were: retrieve/lexical.py); hidden ones (an import or a drop under way) left out.
// Column: pid (the id its objects carry).
MATCH (m:Memory)
WHERE m.terms IS NULL AND m.importing IS NULL
RETURN m.id AS pid
ORDER BY pid
