"""A property-based fuzz of `tmem serve --tokens` (issue 55): hypothesis generates request bodies
and MCP tool arguments, well and badly typed, with unknown fields, lone surrogates, NUL
characters, huge numbers and dates at the ends of the calendar, and sends each to the real
server (httpx; the `mcp` SDK's client over streamable HTTP) with a read-write or a read-only
token, on a built memory, a live one, one outside the token's scope, a missing one and an
invalid id. Every answer is a 200, or a 4xx (a tool error) of one line that says why; never a
500; and a refused request leaves the database as it was. The server runs without its build
worker, so that nothing but the requests writes.

The budget is fixed (`max_examples`, no deadline) and the examples derandomized, so a CI run
is bounded and a failure is reproduced by running the test again; hypothesis prints the
failing example and the blob to replay it (`@reproduce_failure`)."""

from __future__ import annotations

import asyncio
import json
import uuid

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.integration.test_service import env_for, llm_url, serving  # noqa: F401
from tmem_graph import api

RW, RO = "fuzz-token-rw-of-enough-length", "fuzz-token-ro-of-enough-length"
PREFIX = "fz"
BUDGET = settings(max_examples=300, deadline=None, derandomize=True, database=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def server(llm_url, tmp_path_factory):  # noqa: F811
    path = tmp_path_factory.mktemp("tokens") / "tokens.toml"
    path.write_text(f'[tokens.rw]\ntoken = "{RW}"\nmemories = ["{PREFIX}-*"]\naccess = "read-write"\n\n'
                    f'[tokens.ro]\ntoken = "{RO}"\nmemories = ["{PREFIX}-*"]\naccess = "read"\n', encoding="utf-8")
    env = {k: v for k, v in env_for(llm_url).items() if k != "TMEM_SERVE_TOKEN"}
    with serving(["--tokens", str(path), "--no-worker"], env, tmp_path_factory.mktemp("serve") / "serve.log") as base:
        yield base


@pytest.fixture(scope="module")
def memories(server, store, encoder):
    """A built memory and a live one (of turns only), both in the tokens' scope, and ids that
    name no memory: one in the scope, one outside, one invalid."""
    from tests.conftest import load_fixture

    built, live = f"{PREFIX}-built-{uuid.uuid4().hex[:8]}", f"{PREFIX}-live-{uuid.uuid4().hex[:8]}"
    api.import_memory({**load_fixture(), "memory_id": built}, store=store, encoder=encoder)
    api.Memory(live, store=store, encoder=encoder).add([
        {"speaker": "Ana", "text": "I moved to Lisbon last spring.", "time": "2024-05-01T12:00:00"},
        {"speaker": "Ben", "text": "How do you like it?", "time": "2024-05-01T12:01:00"}])
    yield [built, live, f"{PREFIX}-absent-{uuid.uuid4().hex[:8]}", "other-memory", "not a valid id!"]
    for memory_id in (built, live):
        store.drop(memory_id)


def snapshot(store) -> list:
    """Every memory of the prefix with its version and counts: what a refusal must not change."""
    rows = api.list_memories(store=store, limit=1000, keep=lambda memory_id: memory_id.startswith(PREFIX))
    return [(row, store.memory(row["id"])["version"]) for row in rows]


# -- values -------------------------------------------------------------------------------------

ODD = ["", " ", "yes", "2", "a\x00b", "9999-12-31", "9999-12-31T23:59:59.999999", "0001-01-01", "2023-06-01",
       True, False, 0, -1, 2.0, 1e3, 10**20, None, [], {}, ["Ana"], [""], ["a\x00b"], {"x": 1}]
SURROGATES = ["\udc80", "\ud800", "a\udfffb", ["\udc80"], ["\ud800"]]
DROP = object()   # a field taken out of a valid body


def values(surrogates: bool) -> st.SearchStrategy:
    """A value for any field: an odd one (the wrong type, a lone surrogate where the client can
    send one, a NUL, the calendar's ends), or any JSON."""
    anything = st.characters(exclude_categories=[] if surrogates else ["Cs"])
    scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False, allow_infinity=False),
                        st.text(anything, max_size=12))
    return st.one_of(st.sampled_from(ODD + (SURROGATES if surrogates else [])),
                     st.recursive(scalars, lambda inner: st.lists(inner, max_size=3)
                                  | st.dictionaries(st.text(max_size=5), inner, max_size=3), max_leaves=6))


@st.composite
def bodies(draw, valid: dict, fields: list[str], surrogates: bool) -> dict:
    """`valid` with one or two changes: a field (or one nothing takes) set to an odd value (most
    often) or any JSON value, or taken out; or a turn with a field so changed. The choices are
    drawn from a hypothesis-seeded `Random`, evenly: hypothesis's own draws favour the first and
    simplest values, and the odd values are many."""
    rnd = draw(st.randoms(use_true_random=False))
    odd = ODD + (SURROGATES if surrogates else [])
    body = dict(valid)
    for _ in range(rnd.randint(1, 2)):
        key, roll = rnd.choice([*fields, *fields, "top_k"]), rnd.random()
        if roll < 0.1:
            body.pop(key, None)
        elif key == "turns" and roll < 0.5:
            body["turns"] = [{"speaker": "Ana", "text": "Hello there.",
                              rnd.choice(["speaker", "text", "time", "id", "session", "mood"]): rnd.choice(odd)}]
        else:
            body[key] = rnd.choice(odd) if roll < 0.8 else draw(values(surrogates))
    return body


TYPES = {"query": str, "question": str, "speaker": (str, type(None)), "since": (str, type(None)),
         "until": (str, type(None)), "text": str, "after": (str, type(None)), "kind": str, "id": str,
         "k_scenes": int, "k_items": int, "k_recent": int, "budget_tokens": int, "limit": int, "flush": bool,
         "speakers": (list, type(None)), "without": list, "turns": list}
TURN = {"speaker": str, "text": str, "time": (str, type(None)), "id": (str, type(None)), "session": (int, type(None))}


def declared(body: dict, fields: list[str], nullable: bool) -> bool:
    """Whether every field of `body` is one the route takes, of its declared JSON type (an
    integer is not a boolean or a float; a list holds strings, or turns of their types): what a
    200 proves was sent, as nothing is coerced. `nullable`: HTTP's optional budgets may be null."""
    def typed(value, kinds) -> bool:
        kinds = kinds if isinstance(kinds, tuple) else (kinds,)
        if isinstance(value, bool):
            return bool in kinds
        return isinstance(value, kinds)

    for key, value in body.items():
        if key not in fields or not typed(value, TYPES[key] if not (nullable and key.startswith(("k_", "budget")))
                                          else (int, type(None))):
            return False
        if key in ("speakers", "without") and value is not None and not all(isinstance(v, str) for v in value):
            return False
        if key == "turns" and not all(isinstance(t, dict) and set(t) <= set(TURN)
                                      and all(typed(t[k], TURN[k]) for k in t) for t in value):
            return False
    return True


# -- HTTP ---------------------------------------------------------------------------------------

ROUTES = {  # name: (method, path after /memories/{id}, a valid body, the body's fields)
    "recall": ("POST", "/recall", {"query": "What does Ana avoid?"}, ["query", "speaker", "speakers", "without", "since", "until", "k_scenes",
                                   "k_items", "k_recent", "budget_tokens"]),
    "ask": ("POST", "/ask", {"question": "What does Ana avoid?"}, ["question", "speaker", "speakers", "without", "since", "until"]),
    "add": ("POST", "/turns", {"turns": [{"speaker": "Ana", "text": "Hello there."}]}, ["turns"]),
    "build": ("POST", "/build", {}, ["flush"]),
    "correct": ("PATCH", "/items/i4", {"text": "Bob adopted a greyhound, Pixel."}, ["text"]),
}


@st.composite
def requests(draw) -> tuple:
    rnd = draw(st.randoms(use_true_random=False))
    name = rnd.choice(sorted(ROUTES))
    method, tail, valid, fields = ROUTES[name]
    # mostly a valid body with a change or two, else any JSON
    body = draw(bodies(valid, fields, surrogates=True)) if rnd.random() < 0.85 else draw(values(True))
    return name, method, tail, rnd.choice([RW, RW, RO]), rnd.choice(WHICH), body


def test_every_generated_request_gets_a_200_or_a_one_line_4xx_and_a_refusal_writes_nothing(server, memories, store):
    with httpx.Client(base_url=server, timeout=120) as http:

        @BUDGET
        @given(requests())
        def one(request):
            name, method, tail, token, which, body = request
            before = snapshot(store)
            response = http.request(method, f"/memories/{memories[which]}{tail}",
                                    content=json.dumps(body).encode(),   # \u escapes: a lone surrogate goes too
                                    headers={"Authorization": f"Bearer {token}", "content-type": "application/json"})
            case = (name, memories[which], body, response.status_code, response.text[:300])
            assert response.status_code == 200 or 400 <= response.status_code < 500, case
            answer = response.json()
            assert response.status_code != 200 or declared(body, ROUTES[name][3], nullable=True), case
            if response.status_code != 200:
                error = answer["error"]
                assert error and "\n" not in error and "internal error" not in error, case
                assert snapshot(store) == before, case

        one()


# -- MCP ----------------------------------------------------------------------------------------

WHICH = [0, 0, 0, 1, 1, 2, 3, 4]   # which memory (of the fixture's five), the two in use most often
TOOLS = {  # tool: (a valid call's arguments but the memory id, the other arguments)
    "search_memory": ({"query": "What does Ana avoid?"}, ["query", "speaker", "speakers", "since", "until", "k_scenes", "k_items", "k_recent",
                      "budget_tokens"]),
    "ask_memory": ({"question": "What does Ana avoid?"}, ["question", "speakers", "since", "until"]),
    "add_memory": ({"turns": [{"speaker": "Ana", "text": "Hello there."}]}, ["turns"]),
    "list_memories": ({}, ["limit", "after"]),
    "list_objects": ({"kind": "items"}, ["kind", "limit", "after"]),
    "get_object": ({"kind": "item", "id": "i4"}, ["kind", "id"]),
    "get_history": ({"kind": "item", "id": "i4"}, ["kind", "id"]),
    "update_object": ({"kind": "item", "id": "i4", "text": "Bob adopted a greyhound."}, ["kind", "id", "text"]),
    "get_memory_stats": ({}, []),
}


@st.composite
def tool_calls(draw) -> tuple:
    """A session's calls: (tool, arguments) each, the memory id among them but for list_memories."""
    rnd, calls = draw(st.randoms(use_true_random=False)), []
    for _ in range(rnd.randint(1, 5)):
        tool = rnd.choice([*sorted(TOOLS), "search_memory", "search_memory", "search_memory"])   # the most arguments
        arguments = draw(bodies(*TOOLS[tool], surrogates=False))   # the SDK's client encodes UTF-8
        if tool != "list_memories" and rnd.random() < 0.9:
            arguments["memory_id"] = rnd.choice(WHICH)
        calls.append((tool, arguments))
    return rnd.choice([RW, RW, RO]), calls


def test_every_generated_tool_call_answers_or_says_why_in_one_line_and_a_refusal_writes_nothing(
        server, memories, store):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def session(token: str, calls: list[tuple[str, dict]]) -> None:
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=120) as http:
            async with Client(streamable_http_client(server + "/mcp", http_client=http)) as mcp:
                for tool, arguments in calls:
                    if isinstance(arguments.get("memory_id"), int):
                        arguments = {**arguments, "memory_id": memories[arguments["memory_id"]]}
                    before = snapshot(store)
                    result = await mcp.call_tool(tool, arguments)
                    case = (tool, arguments, result.content[0].text[:300] if result.content else None)
                    if result.is_error:
                        reason = result.content[0].text
                        assert "\n" not in reason and reason.strip() != f"Error executing tool {tool}", case
                        assert snapshot(store) == before, case
                    else:
                        sent = {k: v for k, v in arguments.items() if k != "memory_id"}
                        assert declared(sent, TOOLS[tool][1], nullable=False), case

    @settings(BUDGET, max_examples=100)
    @given(tool_calls())
    def one(calls):
        asyncio.run(session(*calls))

    one()
