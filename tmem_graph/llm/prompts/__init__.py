"""One module per LLM task: a pure function that builds the messages (and its response schema)."""
