// The memories whose BM25 statistics and index counts, or whose scenes' Horizon vectors, are
// not kept yet (written before they were: retrieve/lexical.py, store/scene_horizon); hidden ones
// (an import or a drop under way) left out.
// Columns: pid (the id its objects carry), terms (its statistics are kept: only the Horizon vectors are missing).
MATCH (m:Memory)
WHERE coalesce(m.terms, 0) < 2 AND m.importing IS NULL
RETURN m.id AS pid, m.terms IS NOT NULL AS terms
ORDER BY pid
