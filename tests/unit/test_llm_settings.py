"""LLM settings from the environment, and per-stage models through the real openai client."""

import pytest

from tmem_graph.errors import ConfigError
from tmem_graph.llm.cache import ResponseCache
from tmem_graph.llm.client import LLMClient, LLMSettings


def test_stage_models_from_the_environment():
    settings = LLMSettings.from_env({"TMEM_LLM_MODEL": "small", "TMEM_LLM_MODEL_ANSWER": "big",
                                     "TMEM_LLM_MODEL_ITEM_TRIGGERS": "mid"})
    assert settings.model_for("answer") == "big"
    assert settings.model_for("item_triggers") == "mid"
    assert settings.model_for("segment") == "small"


def test_an_unknown_stage_is_named():
    with pytest.raises(ConfigError, match="TMEM_LLM_MODEL_ANSWERS: no such stage"):
        LLMSettings.from_env({"TMEM_LLM_MODEL": "small", "TMEM_LLM_MODEL_ANSWERS": "big"})


def test_each_stage_is_asked_with_its_model_and_cached_under_it(scripted_llm, tmp_path):
    scripted_llm.expect("hello", "hi", reusable=True)
    settings = LLMSettings(base_url=scripted_llm.url, model="small", stage_models=(("answer", "big"),))
    cache = ResponseCache(tmp_path / "cache.sqlite")
    llm = LLMClient(settings, cache=cache)
    messages = [{"role": "user", "content": "hello"}]
    assert llm.chat(messages, stage="answer") == "hi"
    assert llm.chat(messages, stage="persona") == "hi"  # same prompt, other model: not a cache hit
    assert [r["model"] for r in scripted_llm.requests] == ["big", "small"]
    assert llm.chat(messages, stage="answer") == "hi"  # now cached
    assert len(scripted_llm.requests) == 2
    cache.close()
