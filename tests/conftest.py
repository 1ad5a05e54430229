import copy
import json
import os
from pathlib import Path

import pytest

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
    from tests.scripted_llm import ScriptedLLM

    llm = ScriptedLLM()
    yield llm
    llm.close()
    assert llm.unexpected == [], f"unexpected LLM requests: {llm.unexpected}"
