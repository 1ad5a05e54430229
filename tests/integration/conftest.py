"""Helpers of the integration tests (their fixtures live in tests/conftest.py)."""

from tmem_graph.store import Store


def node_count(store: Store, memory_id: str) -> int:
    """Every node of any label carrying this memory's name or the id of a version of it
    ("<name>#<token>": a replacement's), plus its Memory nodes."""
    with store.session("READ") as s:
        return s.run("MATCH (n) WHERE (n.memory_id >= $m AND n.memory_id < $m + '$') "
                     "OR (n:Memory AND n.id >= $m AND n.id < $m + '$') RETURN count(n) AS c",
                     m=memory_id).single()["c"]
