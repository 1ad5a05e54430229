"""Two callers of one `tmem serve --tokens FILE`, through real clients (httpx, and the `mcp`
SDK's client over streamable HTTP): A may read and write `team-*`, B may only read `demo-*`.
Each sees only its memories; a memory outside a caller's scope is answered exactly as one that
does not exist; B cannot change anything; an unknown token gets 401. Also a tokens file the
server cannot use."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
import sys

import httpx
import pytest

from tests.fixtures.processes import free_port
from tests.integration.test_service import (ROOT, env_for, llm_url, openapi_problems, recording,  # noqa: F401
                                            refusals, serving, turns_json, undeclared)
from tmem_graph import api

TOKEN_A, TOKEN_B = "team-token-a-of-enough-length", "demo-token-b-of-enough-length"
SEEN: list[httpx.Response] = []   # every HTTP answer of the server: its OpenAPI document must declare each


@pytest.fixture(scope="module")
def tokens_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("tokens") / "tokens.toml"
    path.write_text(f"""
[tokens.a]
sha256 = "{hashlib.sha256(TOKEN_A.encode()).hexdigest()}"
memories = ["team-*"]
access = "read-write"

[tokens.b]
token = "{TOKEN_B}"
memories = ["demo-*"]
access = "read"
""", encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def server(llm_url, tokens_file, store, tmp_path_factory):  # noqa: F811
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    env = {k: v for k, v in env_for(llm_url).items() if k != "TMEM_SERVE_TOKEN"}
    with serving(["--tokens", str(tokens_file)], env, log) as base:
        yield base
    text = log.read_text()   # the scopes are in the log, no secret is
    assert f"tokens of {tokens_file}: a (read-write: team-*); b (read: demo-*)" in text and TOKEN_B not in text, text


def client(base: str, token: str | None) -> httpx.Client:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.Client(base_url=base, headers=headers, timeout=120, event_hooks=recording(SEEN))


@pytest.fixture
def memories(server, store, encoder, new_id):
    """A's memory (added by A over HTTP), B's memory (made with the Python API: B cannot add),
    and an id of each pattern that no memory has."""
    team, demo = new_id("team"), new_id("demo")
    with client(server, TOKEN_A) as a:
        assert a.post(f"/memories/{team}/turns", json={"turns": turns_json()[:4]}).status_code == 200
    api.Memory(demo, store=store, encoder=encoder).add(turns_json()[:3])
    return team, demo, new_id("team-absent"), new_id("demo-absent")


def calls(memory_id: str) -> dict[str, tuple]:
    """Every route on one memory: (method, path, keyword arguments)."""
    return {"stats": ("GET", f"/memories/{memory_id}", {}),
            "export": ("GET", f"/memories/{memory_id}/export", {}),
            "recall": ("POST", f"/memories/{memory_id}/recall", {"json": {"query": "What does Ana avoid?"}}),
            "ask": ("POST", f"/memories/{memory_id}/ask", {"json": {"question": "What does Ana avoid?"}}),
            "add": ("POST", f"/memories/{memory_id}/turns", {"json": {"turns": turns_json()[4:5]}}),
            "build": ("POST", f"/memories/{memory_id}/build", {"json": {"flush": True}}),
            "flush": ("POST", f"/memories/{memory_id}/flush", {}),
            "import": ("PUT", f"/memories/{memory_id}", {"params": {"replace": True}, "json": {
                "format": "tmem-memory/1", "memory_id": memory_id, "speakers": ["Ana"],
                "turns": [{"id": "t1", "speaker": "Ana", "text": "Hello."}]}}),
            "delete": ("DELETE", f"/memories/{memory_id}", {"params": {"confirm": memory_id}}),
            "list": ("GET", f"/memories/{memory_id}/turns", {}),
            "get": ("GET", f"/memories/{memory_id}/turns/a1", {}),
            "history": ("GET", f"/memories/{memory_id}/turns/a1/history", {}),
            "delete_turn": ("DELETE", f"/memories/{memory_id}/turns/a1", {}),
            "update_item": ("PATCH", f"/memories/{memory_id}/items/i1", {"json": {"text": "Corrected."}})}


def answer(http: httpx.Client, memory_id: str, name: str, as_id: str | None = None) -> tuple:
    """What a caller sees of one route on `memory_id`: status, headers but the date, and body,
    with the id written as `as_id` (so that two ids' answers compare)."""
    method, path, options = calls(memory_id)[name]
    response = http.request(method, path, **options)
    headers = {k: v for k, v in response.headers.items() if k not in ("date", "content-length")}
    return response.status_code, headers, response.text.replace(memory_id, as_id or memory_id)


def test_each_token_lists_reads_and_recalls_only_its_own_memories(server, memories, store):
    team, demo, _, _ = memories
    with client(server, TOKEN_A) as a, client(server, TOKEN_B) as b:
        listed_a = {m["id"] for m in a.get("/memories").json()["memories"]}
        listed_b = {m["id"] for m in b.get("/memories").json()["memories"]}
        assert team in listed_a and all(m.startswith("team-") for m in listed_a)
        assert demo in listed_b and all(m.startswith("demo-") for m in listed_b)
        for http, own, turns in ((a, team, 4), (b, demo, 3)):
            assert http.get(f"/memories/{own}").json()["turns"] == turns
            assert len(http.get(f"/memories/{own}/export").json()["turns"]) == turns
            recalled = http.post(f"/memories/{own}/recall", json={"query": "What does Ana avoid?"})
            assert recalled.status_code == 200 and recalled.json()["memory_id"] == own and recalled.json()["recent"]
            asked = http.post(f"/memories/{own}/ask", json={"question": "What does Ana avoid?"})
            assert asked.status_code == 200 and "auto answer" in asked.json()["answer"]
    assert store.exists(team) and store.exists(demo)


def test_a_memory_outside_the_scope_is_answered_exactly_as_a_missing_one(server, memories, store):
    team, demo, team_absent, demo_absent = memories
    with client(server, TOKEN_A) as a, client(server, TOKEN_B) as b:
        for http, theirs, absent in ((a, demo, demo_absent), (b, team, team_absent)):
            for name in calls(theirs):
                seen = answer(http, theirs, name, as_id="X")
                assert seen == answer(http, absent, name, as_id="X"), name
                assert seen[0] == 404 and seen[2] == '{"error":"no memory \'X\'"}', (name, seen)
    assert api.Memory(demo, store=store).stats()["turns"] == 3 and store.exists(team)   # nothing changed
    assert not store.exists(team_absent) and not store.exists(demo_absent)


def test_a_read_only_token_cannot_change_its_memories(server, memories, store):
    _, demo, _, demo_absent = memories
    before = store.counts(demo)
    with client(server, TOKEN_B) as b:
        for memory_id in (demo, demo_absent):
            for name in ("add", "build", "flush", "import", "delete", "delete_turn", "update_item"):
                status, _, text = answer(b, memory_id, name)
                assert status == 403, (memory_id, name, text)
                assert text == f'{{"error":"read-only: this token may read memory \'{memory_id}\' but not change it"}}'
    assert store.counts(demo) == before and not store.exists(demo_absent)


def test_an_unknown_token_or_none_gets_401(server, memories):
    team, demo, _, _ = memories
    for token in ("not-a-token-of-this-server", None, hashlib.sha256(TOKEN_A.encode()).hexdigest()):
        with client(server, token) as stranger:
            for path in ("/memories", f"/memories/{team}", f"/memories/{demo}/export", "/openapi.json"):
                refused = stranger.get(path)
                assert refused.status_code == 401 and "unauthorized" in refused.json()["error"], (token, path)
            assert stranger.post(f"/memories/{team}/turns", json={"turns": turns_json()[:1]}).status_code == 401
            assert stranger.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).status_code == 401
            assert stranger.get("/health").status_code == 200


def test_each_token_over_mcp_with_the_sdk_client(server, memories, store):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    team, demo, team_absent, demo_absent = memories

    async def session(token: str, calls: list[tuple[str, dict]]) -> list:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(server + "/mcp", http_client=http)) as mcp:
                return [await mcp.call_tool(name, arguments) for name, arguments in calls]

    def text(result) -> str:
        return result.content[0].text

    # A: its memory, B's and a missing one
    listed, own, theirs, missing, stats_theirs, stats_missing, deleted = asyncio.run(session(TOKEN_A, [
        ("list_memories", {}),
        ("search_memory", {"memory_id": team, "query": "What does Ana avoid?"}),
        ("search_memory", {"memory_id": demo, "query": "What does Ana avoid?"}),
        ("search_memory", {"memory_id": demo_absent, "query": "What does Ana avoid?"}),
        ("get_memory_stats", {"memory_id": demo}), ("get_memory_stats", {"memory_id": demo_absent}),
        ("delete_memory", {"memory_id": demo, "confirm": demo})]))
    ids = {m["id"] for m in listed.structured_content["memories"]}
    assert team in ids and all(m.startswith("team-") for m in ids)
    assert not own.is_error and own.structured_content["recent"]
    for found, absent in ((theirs, missing), (stats_theirs, stats_missing)):
        assert found.is_error and absent.is_error
        assert text(found).replace(demo, "X") == text(absent).replace(demo_absent, "X")
        assert text(found).endswith(f"no memory {demo!r}")
    assert deleted.is_error and text(deleted).endswith(f"no memory {demo!r}") and store.exists(demo)

    # B: reads its memory, changes nothing
    listed, own, stats, added, removed, theirs = asyncio.run(session(TOKEN_B, [
        ("list_memories", {}),
        ("search_memory", {"memory_id": demo, "query": "What does Ana avoid?"}),
        ("get_memory_stats", {"memory_id": demo}),
        ("add_memory", {"memory_id": demo, "turns": [{"speaker": "Ana", "text": "One more."}]}),
        ("delete_memory", {"memory_id": demo, "confirm": demo}),
        ("add_memory", {"memory_id": team, "turns": [{"speaker": "Ana", "text": "One more."}]})]))
    ids = {m["id"] for m in listed.structured_content["memories"]}
    assert demo in ids and all(m.startswith("demo-") for m in ids)
    assert not own.is_error and own.structured_content["recent"] and stats.structured_content["turns"] == 3
    read_only = f"read-only: this token may read memory {demo!r} but not change it"
    assert added.is_error and text(added) == f"Error executing tool add_memory: {read_only}"
    assert removed.is_error and text(removed) == f"Error executing tool delete_memory: {read_only}"
    assert theirs.is_error and text(theirs) == f"Error executing tool add_memory: no memory {team!r}"
    assert store.counts(demo)["turns"] == 3 and store.counts(team)["turns"] == 4

    stranger = session("not-a-token-of-this-server", [("list_memories", {})])
    assert any("unauthorized" in m for m in asyncio.run(refusals(stranger)))


def test_the_openapi_document_declares_what_the_two_tokens_saw(server, memories):
    """Run last in the module: the answers of every test before it are checked too."""
    with client(server, TOKEN_A) as a:
        doc = a.get("/openapi.json").json()
    assert openapi_problems(doc) == []
    for path, method in (("/memories/{memory_id}/turns", "post"), ("/memories/{memory_id}", "delete"),
                         ("/memories/{memory_id}", "put"), ("/memories/{memory_id}/build", "post")):
        assert "read-only token" in doc["paths"][path][method]["responses"]["403"]["description"]
    assert "read-only" not in doc["paths"]["/memories/{memory_id}/recall"]["post"]["responses"]["403"]["description"]
    assert {200, 401, 403, 404} <= {r.status_code for r in SEEN}
    assert undeclared(doc, SEEN) == []


@pytest.mark.parametrize("text, args, problem", [
    ("[tokens.a]\nmemories = ['team-*']\naccess = 'read'\n", [], "tokens.a: give the token's sha256"),
    ("[tokens.a]\ntoken = 'a-token-of-enough-length'\nmemories = ['team-*']\naccess = 'write'\n", [],
     "tokens.a: access must be \"read\" or \"read-write\", not 'write'"),
    ("[tokens.a\n", [], "not a TOML file (Expected ']'"),
    ("[tokens.a]\ntoken = ' a-token-of-enough-length '\nmemories = ['team-*']\naccess = 'read'\n", [],
     "tokens.a: token has spaces around it, which no request can send"),
    ("[tokens.a]\ntoken = \"a-token-of\\tenough-length\"\nmemories = ['team-*']\naccess = 'read'\n", [],
     "tokens.a: token holds a control character, which no request can send"),
    (None, [], "cannot read the tokens file (No such file or directory)"),
    ("[tokens.a]\ntoken = 'a-token-of-enough-length'\nmemories = ['team-*']\naccess = 'read'\n",
     ["--memories", "demo-*"], "--tokens replaces --token-file, $TMEM_SERVE_TOKEN and --memories"),
])
def test_a_bad_tokens_file_stops_the_server_with_one_line(tmp_path, text, args, problem):
    path = tmp_path / "tokens.toml"
    if text is not None:
        path.write_text(text, encoding="utf-8")
    env = {k: v for k, v in env_for("http://127.0.0.1:9/v1").items() if k != "TMEM_SERVE_TOKEN"}
    done = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "serve", "--port", str(free_port()),
                           "--tokens", str(path), *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == (2 if args else 1), done.stderr
    assert "Traceback" not in done.stderr and problem in done.stderr, done.stderr
    if not args:   # one line, naming the file
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"Error: {path}: "), lines
