// Whether the database answers (a service's /health). No parameters. Columns: ok.
RETURN 1 AS ok
