import copy
import json
import os
import uuid
from pathlib import Path

import pytest

from tmem_graph.config import Settings
from tmem_graph.encode import get_encoder
from tmem_graph.store import Store

DATA = Path(__file__).parents[1] / "examples"

# Tests never share LLM answers through the user's persistent cache; those that test the
# cache give it a path of their own.
os.environ["TMEM_LLM_CACHE"] = "off"


def load_fixture(name: str = "team-dinner.json") -> dict:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@pytest.fixture
def team_doc() -> dict:
    """A fresh copy of the hand-built test memory document."""
    return copy.deepcopy(load_fixture())


@pytest.fixture
def scripted_llm():
    """A scripted OpenAI-compatible endpoint; the test fails on any unexpected request."""
    from tests.fixtures.scripted_llm import ScriptedLLM

    llm = ScriptedLLM()
    yield llm
    llm.close()
    assert llm.unexpected == [], f"unexpected LLM requests: {llm.unexpected}"


# -- integration fixtures: the real Neo4j that scripts/test.sh starts, and the real encoder --

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
