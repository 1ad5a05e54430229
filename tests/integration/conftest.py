"""Integration fixtures: the real Neo4j that scripts/test.sh starts, and the real encoder."""

import uuid

import pytest

from tmem_graph.config import Settings
from tmem_graph.embeddings import get_encoder
from tmem_graph.store import Store


@pytest.fixture(scope="session")
def settings() -> Settings:
    return Settings.from_env()


@pytest.fixture(scope="session")
def encoder(settings):
    return get_encoder(settings.encoder)


@pytest.fixture(scope="session")
def store(settings, encoder):
    """A store on the test server with the schema applied (fails, never skips, if it is down)."""
    with Store(settings) as s:
        s.apply_schema(encoder.dim)
        yield s


@pytest.fixture
def new_id(store):
    """Factory of fresh memory ids; every memory made with one is dropped after the test."""
    made = []

    def make(prefix: str = "test") -> str:
        made.append(f"{prefix}-{uuid.uuid4().hex[:10]}")
        return made[-1]

    yield make
    for memory_id in made:
        if store.exists(memory_id):
            store.drop(memory_id)


def node_count(store: Store, memory_id: str) -> int:
    """Every node of any label carrying this memory id, plus the Memory node itself."""
    with store.session() as s:
        return s.run("MATCH (n) WHERE n.memory_id = $m OR (n:Memory AND n.id = $m) RETURN count(n) AS c",
                     m=memory_id).single()["c"]
