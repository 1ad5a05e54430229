"""What `tmem serve --tokens` refuses, and what it tells no caller (issue 55), through real
clients: httpx and the `mcp` SDK's client over streamable HTTP, two tokens on the same memories
(`rw` may write them, `ro` may only read). Every refusal is one line naming the field, and
leaves the database as it was; no caller sees another caller's token name, or the process id,
host or login of another writer."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest

from tests.integration.test_service import env_for, llm_url, serving  # noqa: F401
from tmem_graph import api
from tmem_graph.store.lease import WriteLease

RW, RO = "refusals-token-rw-of-enough-length", "refusals-token-ro-of-enough-length"
PREFIX = "tm55"


@pytest.fixture(scope="module")
def server(llm_url, store, tmp_path_factory):  # noqa: F811
    path = tmp_path_factory.mktemp("tokens") / "tokens.toml"
    path.write_text(f"""
[tokens.team-rw]
token = "{RW}"
memories = ["{PREFIX}-*"]
access = "read-write"

[tokens.team-ro]
token = "{RO}"
memories = ["{PREFIX}-*"]
access = "read"
""", encoding="utf-8")
    env = {k: v for k, v in env_for(llm_url).items() if k != "TMEM_SERVE_TOKEN"}
    with serving(["--tokens", str(path)], env, tmp_path_factory.mktemp("serve") / "serve.log") as base:
        yield base


def client(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}, timeout=120)


@pytest.fixture
def memory(server, store, encoder, new_id, team_doc) -> str:
    """A built memory (nothing due for the server's worker, so that nothing but a request
    changes it)."""
    memory_id = new_id(PREFIX)
    api.import_memory({**team_doc, "memory_id": memory_id}, store=store, encoder=encoder)
    return memory_id


def snapshot(store, memory_id: str) -> tuple:
    """What a refused request must leave as it was: the memory's header and counts, and every
    memory of the prefix."""
    header = store.memory(memory_id)
    listed = [row for row in api.list_memories(store=store, limit=1000) if row["id"].startswith(PREFIX)]
    return header["version"], store.counts(header["pid"]), listed


def post(http: httpx.Client, path: str, body: dict, method: str = "POST") -> httpx.Response:
    """`body` as JSON with \\u escapes, as any client may send a lone surrogate."""
    return http.request(method, path, content=json.dumps(body).encode(), headers={"content-type": "application/json"})


def one_line_400(response: httpx.Response, field: str) -> str:
    assert response.status_code == 400, (response.request.content[:200], response.text)
    error = response.json()["error"]
    assert "\n" not in error and field in error and "Traceback" not in error, error
    return error


def mcp_calls(base: str, token: str, calls: list[tuple[str, dict]]) -> list:
    """Each (tool, arguments) called in one session of the SDK's client; their results."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def run():
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(base + "/mcp", http_client=http)) as mcp:
                return [await mcp.call_tool(name, arguments) for name, arguments in calls]

    return asyncio.run(run())


def tool_error(result, *needles: str) -> str:
    assert result.is_error, result
    text = result.content[0].text
    assert "\n" not in text and all(n in text for n in needles), text
    return text


# -- measured 1: a date at the end of the calendar --------------------------------------------

def test_a_date_at_the_end_of_the_calendar_is_refused_with_one_line(server, memory):
    with client(server, RO) as http:
        for until in ("9999-12-31", "9999-12-31T23:59:59.999999"):
            error = one_line_400(post(http, f"/memories/{memory}/recall", {"query": "a", "until": until}), "until")
            assert "out of range" in error, error
        assert http.post(f"/memories/{memory}/recall", json={"query": "a", "until": "9999-12-30"}).status_code == 200
        assert http.post(f"/memories/{memory}/recall", json={"query": "a", "since": "0001-01-01"}).status_code == 200
    found = mcp_calls(server, RO, [("search_memory", {"memory_id": memory, "query": "a", "until": "9999-12-31"}),
                                   ("ask_memory", {"memory_id": memory, "question": "a",
                                                   "until": "9999-12-31T23:59:59.999999"})])
    for result in found:
        tool_error(result, "until", "out of range")


# -- measured 2 and 5: text that is not text, and a NUL in an id ----------------------------

@pytest.mark.parametrize("body, field", [
    ({"query": "a", "speakers": ["\udc80"]}, "body.speakers[0]"),
    ({"query": "a", "without": ["\ud800"]}, "body.without[0]"),
    ({"query": "\ud800a"}, "body.query"),
    ({"query": "a", "speaker": "\udfff"}, "body.speaker"),
    ({"query": "a", "until": "2023-01-01\udc80"}, "body.until"),
])
def test_a_lone_surrogate_is_refused_naming_its_field(server, memory, store, body, field):
    before = snapshot(store, memory)
    with client(server, RW) as http:
        error = one_line_400(post(http, f"/memories/{memory}/recall", body), field)
        assert "lone surrogate" in error, error
        again = http.post(f"/memories/{memory}/recall", json={"query": "a"})   # the same connection answers
        assert again.status_code == 200, again.text
    assert snapshot(store, memory) == before


def test_a_nul_in_an_id_or_a_surrogate_in_a_turn_is_refused_and_nothing_is_written(server, memory, store, new_id):
    before = snapshot(store, memory)
    fresh = new_id(PREFIX)
    with client(server, RW) as http:
        for memory_id in (memory, fresh):
            nul = post(http, f"/memories/{memory_id}/turns", {"turns": [{"speaker": "Ana", "text": "x", "id": "a\x00b"}]})
            assert "NUL" in one_line_400(nul, "body.turns[0].id")
            odd = post(http, f"/memories/{memory_id}/turns", {"turns": [{"speaker": "A\udc80", "text": "x"}]})
            assert "lone surrogate" in one_line_400(odd, "body.turns[0].speaker")
            fixed = post(http, f"/memories/{memory_id}/items/i1", {"text": "\ud800"}, "PATCH")
            assert "lone surrogate" in one_line_400(fixed, "body.text")
        assert http.get(f"/memories/{fresh}").status_code == 404
    assert snapshot(store, memory) == before
    result, = mcp_calls(server, RW, [("get_object", {"memory_id": memory, "kind": "turn", "id": "D1:1\x00"})])
    tool_error(result, "get_object: id: holds a NUL character")
    # the SDK's client cannot send a lone surrogate (it encodes UTF-8): a JSON-RPC call as another client sends it
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "add_memory", "arguments": {
        "memory_id": fresh, "turns": [{"speaker": "Ana\udc80", "text": "x"}]}}}
    with client(server, RW) as http:
        refused = http.post("/mcp", content=json.dumps(call).encode(), headers={
            "content-type": "application/json", "accept": "application/json, text/event-stream"})
    assert refused.status_code == 400 and refused.json()["error"]["code"] == -32700, refused.text
    assert "lone leading surrogate" in refused.json()["error"]["message"], refused.text
    assert snapshot(store, memory) == before


# -- measured 3: wrong types are refused, not coerced ----------------------------------------

@pytest.mark.parametrize("field, value", [("k_scenes", "2"), ("k_scenes", True), ("k_scenes", 2.0),
                                          ("k_items", 1.5), ("budget_tokens", 1e3), ("k_recent", [3])])
def test_a_budget_of_the_wrong_type_is_refused_over_http_and_mcp(server, memory, field, value):
    with client(server, RO) as http:
        one_line_400(http.post(f"/memories/{memory}/recall", json={"query": "a", field: value}), f"body.{field}")
    result, = mcp_calls(server, RO, [("search_memory", {"memory_id": memory, "query": "a", field: value})])
    tool_error(result, f"search_memory: {field}")


def test_a_build_asked_with_flush_yes_is_refused_and_builds_nothing(server, store, new_id):
    memory_id = new_id(PREFIX)
    with client(server, RW) as http:
        added = http.post(f"/memories/{memory_id}/turns", json={"turns": [
            {"speaker": "Ana", "text": "I moved to Lisbon last spring.", "time": "2024-05-01T12:00:00"},
            {"speaker": "Ben", "text": "How do you like it?", "time": "2024-05-01T12:01:00"}]})
        assert added.status_code == 200, added.text
        before = snapshot(store, memory_id)
        for body in ({"flush": "yes"}, {"flush": 1}, {"flush": "true"}):
            one_line_400(http.post(f"/memories/{memory_id}/build", json=body), "body.flush")
    assert snapshot(store, memory_id) == before
    for arguments, field in [({"memory_id": memory_id, "kind": "turns", "limit": "5"}, "limit"),
                             ({"memory_id": memory_id, "kind": "turns", "limit": 5.0}, "limit"),
                             ({"memory_id": memory_id, "kind": "turns", "after": 3}, "after")]:
        result, = mcp_calls(server, RO, [("list_objects", arguments)])
        tool_error(result, f"list_objects: {field}")
    result, = mcp_calls(server, RW, [("search_memory", {"memory_id": memory_id, "query": "a", "speakers": '["Ana"]'})])
    tool_error(result, "search_memory: speakers")   # a list, not a string of one


# -- measured 4 and 5: another caller's name, process id, host or login ---------------------

def test_history_names_another_token_by_its_role_and_the_readers_own_by_name(server, memory):
    with client(server, RW) as rw, client(server, RO) as ro:
        fixed = rw.patch(f"/memories/{memory}/items/i4", json={"text": "Bob adopted a greyhound, Pixel."})
        assert fixed.status_code == 200, fixed.text
        own = rw.get(f"/memories/{memory}/items/i4/history").json()
        theirs = ro.get(f"/memories/{memory}/items/i4/history")
    assert [c["by"] for c in own["changes"]] == ["token:team-rw"]
    assert theirs.status_code == 200 and [c["by"] for c in theirs.json()["changes"]] == ["another token"]
    assert "team-rw" not in theirs.text
    result, = mcp_calls(server, RO, [("get_history", {"memory_id": memory, "kind": "item", "id": "i4"})])
    assert not result.is_error and "team-rw" not in result.content[0].text
    assert [c["by"] for c in result.structured_content["changes"]] == ["another token"]


def test_a_busy_memory_names_no_process_id_or_host_of_its_writer(server, memory, store):
    host = socket.gethostname()
    with WriteLease(store, memory, "ingest"):
        with client(server, RW) as rw, client(server, RO) as ro:
            busy = rw.post(f"/memories/{memory}/build", json={"flush": True})
            stats = ro.get(f"/memories/{memory}")
        result, = mcp_calls(server, RW, [("add_memory", {"memory_id": memory, "turns": [
            {"speaker": "Ana", "text": "One more thing.", "time": "2024-05-01T12:00:00"}]})])
    assert busy.status_code == 409 and "being written" in busy.json()["error"], busy.text
    assert stats.status_code == 200 and stats.json()["writer"] == "ingest", stats.text
    for text in (busy.text, stats.text, result.content[0].text):
        assert host not in text and "pid" not in text, text
