"""`tmem serve` and `tmem mcp` as processes, called by real clients: an HTTP client on every
endpoint (good and bad requests, a wrong token, a memory outside the server's patterns) and
the `mcp` SDK's own client over stdio and streamable HTTP, checked against the Python API on
the same memories; every HTTP answer is checked against the server's OpenAPI document. The LLM
is the auto-replying endpoint of tests/fixtures/auto_llm.py."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from jsonschema import Draft202012Validator
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from tests.fixtures.auto_llm import serve as auto_llm
from tests.fixtures.processes import free_port, wait_for_http
from tmem_graph import api
from tmem_graph.construct.worker import due_memories
from tmem_graph.construct.inputs import read_conversation

ROOT = Path(__file__).parents[2]
DIALOGUE = ROOT / "examples" / "short-dialogue.jsonl"
TOKEN = "a-test-token-of-enough-length"


@pytest.fixture(scope="module")
def llm_url(encoder):
    server = auto_llm(0.0, encoder.count_tokens)
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def env_for(llm_url: str, **extra: str) -> dict:
    return {**os.environ, "TMEM_LLM_BASE_URL": llm_url, "TMEM_LLM_MODEL": "auto", "TMEM_LLM_CACHE": "off", **extra}


@pytest.fixture(scope="module")
def server(llm_url, store, tmp_path_factory):
    """`tmem serve` with a token, limited to memories `svc-*`."""
    with serving(["--memories", "svc-*", "--max-body-mb", "1"], env_for(llm_url, TMEM_SERVE_TOKEN=TOKEN),
                 tmp_path_factory.mktemp("serve") / "serve.log") as base:
        yield base


@contextlib.contextmanager
def serving(args: list[str], env: dict, log: Path):
    """`tmem serve ARGS` on a free port, its output in `log`: its base URL once it answers; at
    the end, stopped, and its output checked for a traceback."""
    port = free_port()
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "serve", "--port", str(port), *args],
                                cwd=ROOT, stdout=out, stderr=out, env=env)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(base + "/health", proc)
    except RuntimeError as exc:
        raise AssertionError(f"tmem serve did not start ({exc}): {log.read_text()[-2000:]}") from None
    try:
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]


def settled(store, memory_id: str, timeout_s: float = 120.0) -> None:
    """Wait until no build is due for `memory_id`: the server's worker has written again what
    an edit left stale (the flag goes in the same transaction as the objects)."""
    deadline = time.monotonic() + timeout_s
    while any(row["memory_id"] == memory_id for row in due_memories(store)):
        assert time.monotonic() < deadline, f"{memory_id}: the server's worker did not build it"
        time.sleep(0.2)


SEEN: list[httpx.Response] = []   # every answer of the token server the tests saw: OpenAPI must declare each


def recording(into: list[httpx.Response]) -> dict:
    """httpx event hooks that keep every answer, read, in `into`."""
    return {"response": [lambda response: into.append(response) or response.read()]}


@pytest.fixture
def http(server):
    with httpx.Client(base_url=server, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=120,
                      event_hooks=recording(SEEN)) as client:
        yield client


@pytest.fixture
def raw(server):
    """A client without the token (or with the headers a test gives it)."""
    with httpx.Client(base_url=server, timeout=120, event_hooks=recording(SEEN)) as client:
        yield client


def turns_json() -> list[dict]:
    return [json.loads(line) for line in DIALOGUE.read_text().splitlines()]


# -- HTTP ------------------------------------------------------------------------------------

def test_every_endpoint_with_an_http_client(http, store, encoder, new_id):
    memory_id = new_id("svc-http")
    added = http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:4]})
    assert added.status_code == 200 and added.json()["added"] == ["a1", "a2", "a3", "a4"]
    assert added.json()["created"] is True
    again = http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:4]}).json()
    assert again["skipped"] == 4 and again["created"] is False   # a boolean, as docs/service.md says
    query = {"query": "What does Ana avoid eating?", "k_scenes": 3}
    recalled = http.post(f"/memories/{memory_id}/recall", json=query).json()
    local = api.Memory(memory_id, store=store, encoder=encoder).recall(query["query"]).to_json()
    assert [t["id"] for t in recalled["recent"]] == [t["id"] for t in local["recent"]] and recalled["recent"]
    assert set(recalled) == set(local)
    assert memory_id in {m["id"] for m in http.get("/memories").json()["memories"]}
    prefix = memory_id[:-1]   # sorts just before the id: a page of one after it is this memory
    page = http.get("/memories", params={"limit": 1, "after": prefix}).json()
    assert [m["id"] for m in page["memories"]] == [memory_id] and page["memories"][0]["turns"] == 4
    rest = http.get("/memories", params={"limit": 1000, "after": page["next"] or memory_id}).json()
    assert memory_id not in {m["id"] for m in rest["memories"]} and rest["next"] is None
    assert http.get("/memories", params={"limit": 0}).status_code == 400
    assert http.get(f"/memories/{memory_id}").json()["pending_turns"] == 4
    built = http.post(f"/memories/{memory_id}/build", json={"flush": True})
    assert built.status_code == 200, built.text
    assert built.json()["new_scenes"] == 1 and built.json()["pending_turns"] == 0
    local = api.Memory(memory_id, store=store, encoder=encoder)
    first = http.get(f"/memories/{memory_id}/turns", params={"limit": 3}).json()
    assert first == local.list("turns", limit=3) and [t["id"] for t in first["objects"]] == ["a1", "a2", "a3"]
    rest = http.get(f"/memories/{memory_id}/turns", params={"after": first["next"]}).json()
    assert [t["id"] for t in rest["objects"]] == ["a4"] and rest["next"] is None
    scene = http.get(f"/memories/{memory_id}/scenes").json()["objects"][0]
    detail = http.get(f"/memories/{memory_id}/scenes/{scene['id']}")
    assert detail.status_code == 200 and detail.json() == local.get("scene", scene["id"])
    assert http.get(f"/memories/{memory_id}/scenes/nope").status_code == 404
    assert http.get(f"/memories/{memory_id}/topics").status_code == 400   # not a kind one can list
    assert http.get(f"/memories/{memory_id}/turns", params={"after": "garbage"}).status_code == 400
    after = http.post(f"/memories/{memory_id}/recall", json=query).json()
    assert after["scenes"][0]["turns"][0]["id"] == "a1" and after["scenes"][0]["via"]
    assert after == {**api.Memory(memory_id, store=store, encoder=encoder).recall(query["query"],
                     settings=store.settings.retrieval.__class__(k_scenes=3)).to_json(),
                     "timings_ms": after["timings_ms"]}
    packed = http.post(f"/memories/{memory_id}/recall", json={**query, "budget_tokens": 120})
    assert packed.status_code == 200, packed.text   # the packer's excerpts, as the Python API packs them
    assert packed.json() == {**api.Memory(memory_id, store=store, encoder=encoder).recall(query["query"],
                             settings=store.settings.retrieval.__class__(k_scenes=3, budget_tokens=120)).to_json(),
                             "timings_ms": packed.json()["timings_ms"]}
    assert all(s["excerpt"] for s in packed.json()["scenes"]) and packed.json()["scenes"]
    refused = http.post(f"/memories/{memory_id}/recall", json={**query, "budget_tokens": 0})
    assert refused.status_code == 400 and "budget_tokens" in refused.text
    answer = http.post(f"/memories/{memory_id}/ask", json={"question": "What does Ana avoid?"})
    assert answer.status_code == 200 and "auto answer" in answer.json()["answer"]
    http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[4:]})
    assert http.post(f"/memories/{memory_id}/flush").status_code == 200
    exported = http.get(f"/memories/{memory_id}/export").json()
    assert exported["format"] == "tmem-memory/1" and len(exported["turns"]) == 8
    copy = new_id("svc-copy")
    put = http.put(f"/memories/{copy}", json={**exported, "memory_id": copy})
    assert put.status_code == 200 and put.json()["turns"] == 8
    assert http.put(f"/memories/{copy}", json={**exported, "memory_id": copy}).status_code == 409
    assert http.put(f"/memories/{copy}?replace=true", json={**exported, "memory_id": copy}).status_code == 200
    assert http.delete(f"/memories/{copy}").status_code == 400 and store.exists(copy)
    deleted = http.delete(f"/memories/{copy}", params={"confirm": copy})
    assert deleted.status_code == 200 and not store.exists(copy)


def test_edits_over_http_answer_as_the_python_api(http, store, encoder, new_id, team_doc):
    memory_id = new_id("svc-edits")
    api.import_memory({**team_doc, "memory_id": memory_id}, store=store, encoder=encoder)
    local = api.Memory(memory_id, store=store, encoder=encoder)
    item = local.get("item", "i2")
    deleted = http.delete(f"/memories/{memory_id}/items/i2")
    assert deleted.status_code == 200, deleted.text
    assert deleted.json() == {"memory_id": memory_id, "kind": "item", "id": "i2", "change": 1,
                              "deleted": {"items": ["i2"], "triggers": len(item["triggers"])}}
    assert http.delete(f"/memories/{memory_id}/items/i2").status_code == 404
    turn = http.delete(f"/memories/{memory_id}/turns/D4:3").json()
    assert turn["deleted"]["turns"] == ["D4:3"] and turn["stale"]["scenes"] == ["s4"]
    fixed = http.patch(f"/memories/{memory_id}/items/i4", json={"text": "Bob adopted a greyhound, Pixel."})
    assert fixed.status_code == 200, fixed.text   # the server's LLM rewrites its triggers
    assert fixed.json()["triggers"] == "rewritten" and fixed.json()["object"] == local.get("item", "i4")["object"]
    assert {v["text"] for v in local.get("item", "i4")["triggers"]} >= {"concept 0", "a later situation 0"}
    history = http.get(f"/memories/{memory_id}/items/i4/history")
    assert history.status_code == 200 and history.json() == local.history("item", "i4")
    assert [(c["op"], c["by"]) for c in history.json()["changes"]] == [("updated", "service")]
    assert http.get(f"/memories/{memory_id}/items/i2/history").json()["changes"][0]["before"] == item["object"]
    assert http.get(f"/memories/{memory_id}/items/i99/history").status_code == 404
    for method, path, body, problem in [
            ("DELETE", "scenes/s1", None, "path.kind"), ("PATCH", "turns/D1:1", {"text": "x"}, "path.kind"),
            ("PATCH", "items/i4", {"text": ""}, "body.text"), ("PATCH", "items/i4", {"txt": "x"}, "body.txt")]:
        refused = http.request(method, f"/memories/{memory_id}/{path}", json=body)
        assert refused.status_code == 400 and problem in refused.json()["error"], (path, refused.text)
    assert local.get("item", "i4")["object"]["text"] == "Bob adopted a greyhound, Pixel."   # nothing changed
    settled(store, memory_id)   # the server's worker writes s4 again: both recalls read that version
    query = {"query": "Where should the team go for dinner?", "speakers": ["Bob"], "since": "2023-06-01"}
    only = http.post(f"/memories/{memory_id}/recall", json=query)
    assert only.status_code == 200 and only.json()["filter"] == {"speakers": ["Bob"], "since": "2023-06-01"}
    assert only.json() == {**local.recall(query["query"], speakers=["Bob"], since="2023-06-01").to_json(),
                           "timings_ms": only.json()["timings_ms"]}
    assert {t["speaker"] for sc in only.json()["scenes"] for t in sc["turns"]} == {"Bob"}
    bad = http.post(f"/memories/{memory_id}/recall", json={**query, "since": "soon"})
    assert bad.status_code == 400 and bad.json()["error"].startswith("since 'soon': not an ISO 8601 date")
    assert http.post(f"/memories/{memory_id}/recall", json={**query, "speakers": []}).status_code == 400


def test_bad_requests_get_json_errors_that_name_the_problem(http, new_id):
    memory_id = new_id("svc-bad")
    cases = [
        (http.post(f"/memories/{memory_id}/recall", json={"quer": "x"}), 400, "body.query: Field required"),
        (http.post(f"/memories/{memory_id}/recall", json={"query": "x", "top_k": 3}), 400,
         "body.top_k: Extra inputs are not permitted"),
        (http.post(f"/memories/{memory_id}/recall", content=b"{not json", headers={"content-type": "application/json"}),
         400, "body: invalid JSON at character 1"),
        (http.post(f"/memories/{memory_id}/recall", content=b'{"query": "\xff"}',
                   headers={"content-type": "application/json"}), 400, "body: there was an error parsing the body"),
        (http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": " "}]}), 400,
         'turns[0]: "text" is missing or empty'),
        (http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": 5}]}), 400,
         "body.turns[0].text: Input should be a valid string"),   # the wrong type, not "missing"
        (http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": "x", "sesion": 2}]}),
         400, "body.turns[0].sesion: Extra inputs are not permitted"),   # refused, not ignored
        (http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": "x", "session": "2"}]}),
         400, "body.turns[0].session: Input should be a valid integer"),   # not coerced
        (http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": "x" * 2_000_000}]}),
         413, "larger than"),
        (http.post(f"/memories/{memory_id}/recall", json={"query": "x", "k_scenes": 500}), 400,
         "body.k_scenes: Input should be less than or equal to 50"),
        (http.post(f"/memories/{memory_id}/recall", json={"query": "x", "without": ["bogus"]}), 404, "no memory"),
        (http.get("/memories/not a valid id!"), 400, "not a valid memory id"),
        (http.get(f"/memories/{memory_id}"), 404, f"no memory '{memory_id}'"),
        (http.post(f"/memories/{memory_id}/build", json={}), 404, "no memory"),
        (http.post(f"/memories/{memory_id}/build", json={"flush": True, "wait": 1}), 400,
         "body.wait: Extra inputs are not permitted"),
    ]
    for response, status, needle in cases:
        assert response.status_code == status, (response.request.url, response.text)
        body = response.json()
        assert needle in body["error"], body
        assert "Traceback" not in response.text and "\n" not in body["error"] and "https://" not in body["error"]
        if status == 400:   # {"error", "problems"}: each problem one line naming its field
            assert set(body) == {"error", "problems"} and body["problems"], body
            assert all("\n" not in p and re.match(r"^[\w.\[\]]+: ", p) for p in body["problems"]), body
    both = http.post(f"/memories/{memory_id}/turns", json={"turns": [{"speaker": "Ana", "text": " "},
                                                                      {"speaker": "Ben", "text": "y", "time": "soon"}]})
    assert both.status_code == 400 and both.json()["problems"] == [
        'turns[0]: "text" is missing or empty', "turns[1]: \"time\" 'soon' is not an ISO 8601 date-time"]
    http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:1]})
    unknown = http.post(f"/memories/{memory_id}/recall", json={"query": "x", "without": ["bogus"]})
    assert unknown.status_code == 400 and "unknown component(s) bogus" in unknown.json()["error"]
    assert unknown.json()["problems"] == [unknown.json()["error"]]


def test_a_wrong_token_and_a_memory_outside_the_patterns_are_refused_alike(raw, http, store, encoder, new_id):
    hidden = new_id("other")   # outside svc-*: exists, but this server never shows it
    api.Memory(hidden, store=store, encoder=encoder).add(turns_json()[:2])
    absent = new_id("other-absent")
    for path in ("/memories", f"/memories/{hidden}"):
        assert raw.get(path).status_code == 401
        assert raw.get(path, headers={"Authorization": "Bearer wrong-token-xxxxxxxxxx"}).status_code == 401
    assert raw.get("/health").status_code == 200   # no token needed, nothing revealed
    for memory_id in (hidden, absent):
        responses = [http.get(f"/memories/{memory_id}"), http.get(f"/memories/{memory_id}/export"),
                     http.post(f"/memories/{memory_id}/recall", json={"query": "Porto"}),
                     http.delete(f"/memories/{memory_id}", params={"confirm": memory_id}),
                     http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:1]})]
        assert [r.status_code for r in responses] == [404] * 5
        assert {r.json()["error"] for r in responses} == {f"no memory {memory_id!r}"}
    assert hidden not in {m["id"] for m in http.get("/memories").json()["memories"]}
    assert store.exists(hidden) and not store.exists(absent)
    assert api.Memory(hidden, store=store).stats()["turns"] == 2   # nothing was added or deleted


def test_a_recall_after_the_memory_was_dropped_or_made_anew_with_another_encoder(http, store, encoder, new_id):
    """The server keeps the header of a memory it recalled (not read again while recalls read
    the same version): a memory dropped since is 404 as before, one made anew with another
    encoder of the same dimension 409, and a recall after an add answers as the Python API."""
    from tmem_graph.encode.fake import FakeEncoder

    memory_id = new_id("svc-anew")
    query = {"query": "What does Ana avoid eating?"}
    local = api.Memory(memory_id, store=store, encoder=encoder)
    local.add(turns_json()[:4])
    for _ in range(2):   # the second from the header the first one kept
        recalled = http.post(f"/memories/{memory_id}/recall", json=query)
        assert recalled.status_code == 200 and recalled.json()["recent"]
    local.add(turns_json()[4:6])
    again = http.post(f"/memories/{memory_id}/recall", json=query).json()
    assert again == {**local.recall(query["query"]).to_json(), "timings_ms": again["timings_ms"]}
    store.drop(memory_id)
    gone = http.post(f"/memories/{memory_id}/recall", json=query)
    assert gone.status_code == 404 and gone.json()["error"] == f"no memory {memory_id!r}"
    local.add(turns_json()[:2])
    assert http.post(f"/memories/{memory_id}/recall", json=query).status_code == 200
    store.drop(memory_id)   # made anew by another process, with another encoder: no recall between
    api.Memory(memory_id, store=store, encoder=FakeEncoder(encoder.dim)).add(turns_json()[:2])
    other = http.post(f"/memories/{memory_id}/recall", json=query)
    assert other.status_code == 409 and "was built with encoder 'fake:" in other.json()["error"], other.text
    store.drop(memory_id)


def test_ask_and_build_without_an_llm_answer_503_with_the_message_mcp_gives(store, tmp_path, new_id):
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    port = free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMEM_LLM_")}
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "serve", "--port", str(port)], cwd=ROOT,
                                stdout=out, stderr=out, env=env)
    base = f"http://127.0.0.1:{port}"
    seen: list[httpx.Response] = []
    try:
        wait_for_http(base + "/health", proc)
        memory_id = new_id("svc-nollm")
        with httpx.Client(base_url=base, timeout=60, event_hooks=recording(seen)) as client:
            assert client.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:2]}).status_code == 200
            messages = set()
            for path, body in (("ask", {"question": "What does Ana avoid?"}), ("build", {"flush": True})):
                answer = client.post(f"/memories/{memory_id}/{path}", json=body)
                assert answer.status_code == 503, (path, answer.text)
                assert answer.json()["error"].startswith("no LLM configured: set TMEM_LLM_MODEL"), answer.json()
                messages.add(answer.json()["error"])
            document = client.get("/openapi.json").json()

        async def ask_over_mcp():
            async with Client(streamable_http_client(base + "/mcp")) as mcp:
                return await mcp.call_tool("ask_memory", {"memory_id": memory_id, "question": "What does Ana avoid?"})

        answered = asyncio.run(ask_over_mcp())
        (message,) = messages   # the same line for both routes, and the one MCP gives after the tool's name
        assert answered.is_error and answered.content[0].text == f"Error executing tool ask_memory: {message}"
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    assert openapi_problems(document) == []
    assert "securitySchemes" not in document["components"] and "security" not in document   # no token here
    assert all("401" not in op["responses"] for item in document["paths"].values() for op in item.values())
    assert undeclared(document, seen) == []


def test_serve_refuses_to_start_beyond_loopback_without_a_token(llm_url):
    done = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "serve", "--host", "0.0.0.0", "--port",
                           str(free_port())], cwd=ROOT, env={k: v for k, v in env_for(llm_url).items()
                                                            if k != "TMEM_SERVE_TOKEN"},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "refusing to serve on 0.0.0.0 without a token" in done.stderr
    assert "Traceback" not in done.stderr


# -- MCP -------------------------------------------------------------------------------------

TOOLS = {"add_memory", "search_memory", "ask_memory", "list_memories", "list_objects", "get_object",
         "get_history", "delete_object", "update_object", "get_memory_stats", "delete_memory"}


async def _exercise(client, memory_id: str, hidden: str) -> dict:
    """Call every tool once through an MCP client; return what came back."""
    out: dict = {"tools": {t.name: t for t in (await client.list_tools()).tools}}
    out["add"] = await client.call_tool("add_memory", {"memory_id": memory_id, "turns": [
        {"speaker": "Ana", "text": "My colleague Tom is allergic to shellfish.", "time": "2024-05-01T12:00:00"},
        {"speaker": "Ben", "text": "Noted for the team dinner.", "time": "2024-05-01T12:01:00"}]})
    out["search"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "seafood allergy",
                                                             "k_recent": 2})
    out["packed"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "seafood allergy",
                                                             "budget_tokens": 300})
    out["too_big"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "x", "k_scenes": 50})
    out["too_many_tokens"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "x",
                                                                      "budget_tokens": 9000})
    out["unknown"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "x", "top_k": 3})
    out["again"] = await client.call_tool("add_memory", {"memory_id": memory_id, "turns": [
        {"speaker": "Ben", "text": "Noted for the team dinner.", "time": "2024-05-01T12:01:00"}]})
    out["bad_turn"] = await client.call_tool("add_memory", {"memory_id": memory_id, "turns": [
        {"speaker": "Ana", "text": 5}]})
    out["turn_field"] = await client.call_tool("add_memory", {"memory_id": memory_id, "turns": [
        {"speaker": "Ana", "text": "x", "mood": "happy"}]})
    out["stats"] = await client.call_tool("get_memory_stats", {"memory_id": memory_id})
    out["list"] = await client.call_tool("list_memories", {})
    out["page"] = await client.call_tool("list_memories", {"limit": 1, "after": memory_id[:-1]})
    out["objects"] = await client.call_tool("list_objects", {"memory_id": memory_id, "kind": "turns", "limit": 1})
    out["object"] = await client.call_tool("get_object", {"memory_id": memory_id, "kind": "turn", "id": "T1"})
    out["no_object"] = await client.call_tool("get_object", {"memory_id": memory_id, "kind": "turn", "id": "zz"})
    out["ask"] = await client.call_tool("ask_memory", {"memory_id": memory_id, "question": "Who is allergic?"})
    out["only_ben"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "seafood allergy",
                                                               "speakers": ["Ben"]})
    out["bad_since"] = await client.call_tool("search_memory", {"memory_id": memory_id, "query": "x", "since": "soon"})
    out["forget"] = await client.call_tool("delete_object", {"memory_id": memory_id, "kind": "turn", "id": "T2"})
    out["history"] = await client.call_tool("get_history", {"memory_id": memory_id, "kind": "turn", "id": "T2"})
    out["no_item"] = await client.call_tool("update_object", {"memory_id": memory_id, "kind": "item", "id": "i1",
                                                              "text": "Tom is allergic to shellfish."})
    out["scene_delete"] = await client.call_tool("delete_object", {"memory_id": memory_id, "kind": "scene", "id": "s1"})
    out["hidden"] = await client.call_tool("get_memory_stats", {"memory_id": hidden})
    out["hidden_delete"] = await client.call_tool("delete_memory", {"memory_id": hidden, "confirm": hidden})
    out["unconfirmed"] = await client.call_tool("delete_memory", {"memory_id": memory_id, "confirm": "yes"})
    out["delete"] = await client.call_tool("delete_memory", {"memory_id": memory_id, "confirm": memory_id})
    return out


def _check(out: dict, memory_id: str, hidden: str, store, encoder, expected_recent: list[str]) -> None:
    assert set(out["tools"]) == TOOLS
    assert all(t.description and len(t.description) > 40 for t in out["tools"].values())
    assert out["tools"]["search_memory"].input_schema["properties"]["k_scenes"]["maximum"] == 20
    assert not out["add"].is_error and out["add"].structured_content["added"] == ["T1", "T2"]
    assert out["add"].structured_content["created"] is True
    assert out["again"].structured_content == {"memory_id": memory_id, "added": [], "skipped": 1, "created": False}
    found = out["search"].structured_content
    assert not out["search"].is_error and [t["id"] for t in found["recent"]] == expected_recent
    assert found["recent"][0]["via"][0] == "recent"
    assert out["too_big"].is_error
    assert out["too_big"].content[0].text == "search_memory: k_scenes: Input should be less than or equal to 20"
    assert not out["packed"].is_error and out["packed"].structured_content["recent"]   # unbuilt turns, packed
    assert out["too_many_tokens"].is_error and out["too_many_tokens"].content[0].text == \
        "search_memory: budget_tokens: Input should be less than or equal to 8000"
    assert out["unknown"].is_error and out["unknown"].content[0].text.startswith(
        "search_memory: unknown argument 'top_k'; it takes budget_tokens, k_items, k_recent, k_scenes, memory_id, query")
    assert out["bad_turn"].is_error
    assert out["bad_turn"].content[0].text == "add_memory: turns[0].text: Input should be a valid string"
    assert out["turn_field"].is_error   # a field a turn does not take is refused, not dropped
    assert out["turn_field"].content[0].text == "add_memory: turns[0].mood: Extra inputs are not permitted"
    assert out["stats"].structured_content["turns"] == 2
    assert memory_id in {m["id"] for m in out["list"].structured_content["memories"]}
    assert [m["id"] for m in out["page"].structured_content["memories"]] == [memory_id]
    assert [t["id"] for t in out["objects"].structured_content["objects"]] == ["T1"]
    assert out["objects"].structured_content["next"] is not None
    assert out["object"].structured_content["object"]["id"] == "T1"
    assert out["no_object"].is_error and "zz" in out["no_object"].content[0].text
    assert hidden not in {m["id"] for m in out["list"].structured_content["memories"]}
    assert "auto answer" in out["ask"].structured_content["answer"]
    assert [t["id"] for t in out["only_ben"].structured_content["recent"]] == ["T2"]
    assert out["only_ben"].structured_content["filter"] == {"speakers": ["Ben"]}
    assert out["bad_since"].is_error and "since 'soon': not an ISO 8601 date" in out["bad_since"].content[0].text
    assert not out["forget"].is_error and out["forget"].structured_content["deleted"]["turns"] == ["T2"]
    assert [c["op"] for c in out["history"].structured_content["changes"]] == ["deleted"]
    assert out["history"].structured_content["changes"][0]["before"]["text"] == "Noted for the team dinner."
    assert out["no_item"].is_error and out["no_item"].content[0].text.endswith(f"memory {memory_id!r} has no item 'i1'")
    assert out["scene_delete"].is_error and "kind" in out["scene_delete"].content[0].text
    for key in ("hidden", "hidden_delete"):
        assert out[key].is_error and f"no memory {hidden!r}" in out[key].content[0].text
    assert out["unconfirmed"].is_error and "must repeat the memory id" in out["unconfirmed"].content[0].text
    assert not out["delete"].is_error and not store.exists(memory_id)
    assert store.exists(hidden)


def _expected_recent(store, encoder, new_id) -> list[str]:
    """What the Python API recalls for the same turns and query, on a memory of its own."""
    reference = new_id("svc-ref")
    memory = api.Memory(reference, store=store, encoder=encoder)
    memory.add([{"speaker": "Ana", "text": "My colleague Tom is allergic to shellfish.", "time": "2024-05-01T12:00:00"},
                {"speaker": "Ben", "text": "Noted for the team dinner.", "time": "2024-05-01T12:01:00"}])
    got = [t.id for t in memory.recall("seafood allergy", settings=store.settings.retrieval.__class__(k_recent=2)).recent]
    memory.drop()
    return got


def test_mcp_over_stdio_with_the_sdk_client(llm_url, store, encoder, new_id):
    from mcp import Client, StdioServerParameters

    memory_id, hidden = new_id("svc-mcp"), new_id("other-mcp")
    api.Memory(hidden, store=store, encoder=encoder).add(turns_json()[:1])
    env = env_for(llm_url)
    params = StdioServerParameters(command=sys.executable, args=["-m", "tmem_graph.cli", "mcp", "--memories", "svc-*"],
                                   cwd=str(ROOT), env={k: env[k] for k in env if k.startswith(("TMEM_", "NEO4J_"))
                                                       or k in ("PATH", "HOME", "PYTHONPATH")})

    async def run():
        async with Client(params) as client:
            return await _exercise(client, memory_id, hidden)

    out = asyncio.run(run())
    _check(out, memory_id, hidden, store, encoder, _expected_recent(store, encoder, new_id))


def test_mcp_over_streamable_http_with_a_bearer_token(server, store, encoder, new_id):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    memory_id, hidden = new_id("svc-mcp-http"), new_id("other-mcp-http")
    api.Memory(hidden, store=store, encoder=encoder).add(turns_json()[:1])

    async def run(token: str):
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(server + "/mcp", http_client=http)) as client:
                return await _exercise(client, memory_id, hidden)

    out = asyncio.run(run(TOKEN))
    _check(out, memory_id, hidden, store, encoder, _expected_recent(store, encoder, new_id))

    assert any("unauthorized" in m for m in asyncio.run(refusals(run("wrong-token-of-some-length"))))


async def refusals(session) -> list[str]:
    """The messages of the MCPError an MCP client's `session` (a coroutine) ends with."""
    from mcp import MCPError

    messages = []
    try:
        await session
    except* MCPError as group:  # the transport's task groups wrap the client's error
        error = group.exceptions[0]
        while isinstance(error, BaseExceptionGroup):
            error = error.exceptions[0]
        messages.append(error.error.message)
    return messages


def test_the_gate_checks_host_origin_token_and_size_before_any_route(raw, new_id):
    memory_id = new_id("svc-gate")
    good = {"Authorization": f"Bearer {TOKEN}"}
    rebound = raw.get("/memories", headers={**good, "Host": "attacker.example:8765"})
    assert rebound.status_code == 421   # a page that rebinds a name to 127.0.0.1 gets nothing
    cross = raw.post(f"/memories/{memory_id}/flush", headers={**good, "Origin": "http://attacker.example"})
    assert cross.status_code == 403
    assert raw.get("/memories", headers={**good, "Origin": "http://localhost:3000"}).status_code == 200
    lower = raw.get("/memories", headers={"Authorization": f"bearer {TOKEN}"})
    assert lower.status_code == 200     # the scheme is case-insensitive
    unauthorised = raw.post(f"/memories/{memory_id}/recall", content=b"{not json",
                            headers={"content-type": "application/json"})
    assert unauthorised.status_code == 401   # the token before the body is even read
    assert raw.get("/openapi.json").status_code == 401
    assert raw.get("/openapi.json", headers=good).status_code == 200

    def chunks():
        for _ in range(40):
            yield b"x" * 50_000   # 2 MB in chunks, no Content-Length: the limit is 1 MiB

    for path in (f"/memories/{memory_id}/recall", "/mcp"):
        big = raw.post(path, content=chunks(), headers={**good, "content-type": "application/json"})
        assert big.status_code == 413 and "larger than" in big.json()["error"], (path, big.text)
    health = raw.get("/health").json()
    assert health["ok"] is True and health["worker"] in ("running", "starting")


# -- OpenAPI ---------------------------------------------------------------------------------

def _refs(node) -> list[str]:
    """Every `$ref` anywhere in a JSON value."""
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    if not isinstance(node, dict):
        return []
    own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
    return own + [r for v in node.values() for r in _refs(v)]


def openapi_problems(doc: dict) -> list[str]:
    """What breaks the OpenAPI 3.1 rules this document uses (no validator package is installed:
    the structure is checked here, every schema against JSON Schema 2020-12's meta-schema)."""
    problems = []
    if not re.fullmatch(r"3\.1\.\d+", doc.get("openapi", "")) or not {"title", "version"} <= set(doc.get("info", {})):
        problems.append("openapi 3.1.x with info.title and info.version")
    schemas = doc.get("components", {}).get("schemas", {})
    problems += [f"unresolved {ref}" for ref in _refs(doc)
                 if not ref.startswith("#/components/schemas/") or ref.rsplit("/", 1)[1] not in schemas]
    for name, schema in schemas.items():
        if not Draft202012Validator(Draft202012Validator.META_SCHEMA).is_valid(schema):
            problems.append(f"schema {name} is not JSON Schema 2020-12")
    schemes = doc.get("components", {}).get("securitySchemes", {})
    problems += [f"scheme {k}: {v}" for k, v in schemes.items() if v != {**v, "type": "http", "scheme": "bearer"}]
    ids = []
    for path, item in doc["paths"].items():
        for method, op in item.items():
            where = f"{method.upper()} {path}"
            ids.append(op.get("operationId"))
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path" and p.get("required")}
            if declared != set(re.findall(r"\{(\w+)\}", path)):
                problems.append(f"{where}: path parameters {sorted(declared)}")
            if method not in ("get", "put", "post", "delete", "patch", "options", "head", "trace"):
                problems.append(f"{where}: not an HTTP method")
            for code, answer in op["responses"].items():
                if not re.fullmatch(r"[1-5]\d\d", code) or not answer.get("description"):
                    problems.append(f"{where} {code}: a status with a description")
                schema = answer.get("content", {}).get("application/json", {}).get("schema")
                body = "Problems" if code == "400" else "Health" if (path, code) == ("/health", "503") else "Error"
                if code != "200" and schema != {"$ref": f"#/components/schemas/{body}"}:
                    problems.append(f"{where} {code}: the error body {schema}")
                if code == "200" and not schema.get("$ref"):
                    problems.append(f"{where}: an untyped answer")
            if op.get("requestBody") and "$ref" not in op["requestBody"]["content"]["application/json"]["schema"]:
                problems.append(f"{where}: an untyped body")
            for requirement in op.get("security", doc.get("security", [])):
                problems += [f"{where}: no scheme {name}" for name in requirement if name not in schemes]
    problems += [f"operationId {i} is not unique" for i in set(ids) if ids.count(i) > 1 or i is None]
    return problems


def undeclared(doc: dict, answers: list[httpx.Response]) -> list[str]:
    """Every answer whose route does not declare its status, or whose body its schema refuses."""
    registry = Registry().with_resource("urn:openapi", Resource.from_contents(doc, default_specification=DRAFT202012))
    routes = [(re.compile(re.sub(r"\{\w+\}", "[^/]+", path) + "$"), path) for path in doc["paths"]]
    out = []
    for response in answers:
        method, path = response.request.method.lower(), response.request.url.path
        if path in ("/openapi.json", "/docs") or path.startswith("/mcp"):
            continue
        template = next((t for pattern, t in routes if pattern.match(path) and method in doc["paths"][t]), None)
        operation = doc["paths"].get(template, {}).get(method)
        declared = (operation or {}).get("responses", {}).get(str(response.status_code))
        if declared is None:
            out.append(f"{method.upper()} {path}: {response.status_code} is not declared")
            continue
        pointer = "/".join(p.replace("~", "~0").replace("/", "~1") for p in
                           ("paths", template, method, "responses", str(response.status_code), "content",
                            "application/json", "schema"))
        validator = Draft202012Validator({"$ref": f"urn:openapi#/{pointer}"}, registry=registry)
        out += [f"{method.upper()} {path} {response.status_code}: {e.json_path}: {e.message[:200]}"
                for e in validator.iter_errors(response.json())]
    return out


def test_the_openapi_document_validates_and_declares_every_answer_the_tests_saw(http, raw, new_id):
    """Every route, typed, with each status it answers and its body; the bearer scheme; the
    page at /docs whole on its own (offline: it loads nothing). The answers checked are this
    test's and those of every test of the module that ran before it."""
    doc = http.get("/openapi.json").json()
    assert openapi_problems(doc) == []
    assert doc["components"]["securitySchemes"] == {"bearer": {
        "type": "http", "scheme": "bearer",
        "description": "The server's token (TMEM_SERVE_TOKEN), or one of its tokens file (--tokens)."}}
    assert doc["security"] == [{"bearer": []}] and doc["paths"]["/health"]["get"]["security"] == []
    ask = doc["paths"]["/memories/{memory_id}/ask"]["post"]["responses"]
    assert {"400", "401", "403", "404", "409", "413", "421", "500", "502", "503"} <= set(ask)
    assert "no LLM configured" in ask["503"]["description"]
    turn = doc["components"]["schemas"]["TurnRecord"]
    assert turn["required"] == ["speaker", "text"] and turn["additionalProperties"] is False
    assert doc["components"]["schemas"]["Added"]["properties"]["created"] == {
        "type": "boolean", "title": "Created", "description": "Whether this add created the memory."}
    memory_id, copy = new_id("svc-openapi"), new_id("svc-openapi-copy")
    http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()})
    http.post(f"/memories/{memory_id}/turns", json={"turns": turns_json()[:1]})
    http.post(f"/memories/{memory_id}/build", json={"flush": True})
    for body in ({"query": "Ana"}, {"query": "Ana", "budget_tokens": 200}, {"quer": "Ana"}):
        http.post(f"/memories/{memory_id}/recall", json=body)
    assert http.post(f"/memories/{memory_id}/ask", json={"question": "What does Ana avoid?"}).status_code == 200
    document = http.get(f"/memories/{memory_id}/export").json()
    assert [http.put(f"/memories/{copy}", json={**document, "memory_id": copy}).status_code for _ in range(2)] == \
        [200, 409]
    http.put(f"/memories/{copy}", json={**document, "memory_id": copy, "turns": [{"text": 1}]}, params={"replace": True})
    http.get(f"/memories/{memory_id}")
    http.post(f"/memories/{memory_id}/flush")
    http.get("/memories")
    http.delete(f"/memories/{copy}")
    http.delete(f"/memories/{copy}", params={"confirm": copy})
    http.get(f"/memories/{copy}")
    raw.get("/memories")
    raw.get("/health")
    raw.get("/memories", headers={"Authorization": f"Bearer {TOKEN}", "Host": "attacker.example"})
    raw.post(f"/memories/{memory_id}/flush", headers={"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"})
    http.post(f"/memories/{memory_id}/recall", content=b"x" * (2**20 + 1))
    statuses = {r.status_code for r in SEEN}
    assert {200, 400, 401, 403, 404, 409, 413, 421} <= statuses, statuses
    assert undeclared(doc, SEEN) == []

    page = http.get("/docs")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert not re.search(r"<script|<link|@import|url\(|(src|href)=\"?(https?:)?//", page.text)   # nothing from elsewhere
    assert all(path in page.text for path in doc["paths"]) and "Authorization: Bearer" in page.text
    assert 'id="TurnRecord"' in page.text and "Problems" in page.text
    assert http.get("/redoc").status_code == 404   # FastAPI's other page, from a CDN too: not served
