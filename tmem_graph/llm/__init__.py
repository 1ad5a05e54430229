"""LLM access: one client on the `openai` package, prompts as pure functions."""
