"""The HTTP face of the service: a FastAPI app (OpenAPI page at /docs) over `Service`, and
the MCP server mounted at /mcp (streamable HTTP). Errors are JSON `{"error": message}` with a
status code (a 400 also lists its `problems`, one line each), never a traceback; every status a
route answers is declared in its OpenAPI document, served as a self-contained page at /docs;
request bodies are size-limited; beyond /health every request needs a bearer token when the
server has any, and each route answers as that token's scope allows (`access.py`)."""

from __future__ import annotations

import contextlib
import json
import logging
from typing import Annotated, Any, Literal

import anyio
from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.exceptions import HTTPException
from starlette.routing import Route

import tmem_graph.errors as errors
from . import docs_page
from ..objects import MAX_LIMIT
from .bodies import (Added, Answer, Body, Built, Deleted, Error, Flushed, Health, History, Imported, MemoryDocument,
                     MemoryList, ObjectDeleted, ObjectDetail, ObjectPage, ObjectUpdated, Problems, Recalled, Stats,
                     Text, TurnRecord, body_of, problem)
from .access import CALLER, LOOPBACK, Access, Scope
from .mcp import build_mcp
from .service import LIST_DEFAULT, LIST_MAX, MAX_K, MAX_TOKENS, OBJECTS_DEFAULT, Budgets, Service

log = logging.getLogger(__name__)

STATUS = [  # the most specific first; a 5xx answer says what to do, the server's log has the rest
    (errors.MemoryNotFound, 404, None), (errors.MemoryExists, 409, None), (errors.LeaseHeld, 409, None),
    (errors.LeaseLost, 409, None), (errors.EncoderMismatch, 409, None), (errors.ValidationError, 400, None),
    (errors.UsageError, 400, None), (errors.Forbidden, 403, None),
    (errors.TransactionTooLarge, 413, "the write is too large for the database's transaction memory; send it in parts"),
    (errors.MemoryBusy, 503, "the memory is being rewritten; try again shortly"),
    (errors.ServiceBusy, 503, None),
    (errors.LLMError, 502, "the LLM failed; try again later"),
    (errors.LLMNotConfigured, 503, None),   # the message says so, as MCP's does
    (errors.SchemaError, 503, "the database's schema is not ready (the operator runs `tmem schema apply`)"),
    (errors.DatabaseUnavailable, 503, "the database is unavailable; try again later"),
    (errors.TmemError, 500, "internal error (the server's log has the details)"),
]


class TurnsIn(Body):
    turns: list[TurnRecord] = Field(min_length=1, max_length=10_000)


class BuildIn(Body):
    flush: bool = Field(False, description="Close every turn added so far into scenes.")


class Recalling(Body):
    speaker: Text | None = Field(None, description="Only this speaker's persona.")
    without: list[Text] = Field(default_factory=list, description="Components to switch off (tmem recall --without).")
    speakers: list[Text] | None = Field(None, min_length=1, max_length=50, description=(
        "Only evidence from these speakers' turns (docs/api.md, 'Recall filters')."))
    since: Text | None = Field(None, max_length=64, description="Only turns from this ISO 8601 date or date-time on.")
    until: Text | None = Field(None, max_length=64, description="Only turns up to this ISO 8601 date (the whole day) or date-time.")

    def only(self) -> dict:
        return {"speakers": self.speakers, "since": self.since, "until": self.until}


class RecallIn(Recalling):
    query: Text = Field(min_length=1, max_length=32768)
    k_scenes: int | None = Field(None, ge=0, le=MAX_K)
    k_items: int | None = Field(None, ge=0, le=MAX_K)
    k_recent: int | None = Field(None, ge=0, le=MAX_K)
    budget_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS, description=(
        "Pack the evidence to this many tokens (docs/design-and-evidence.md); "
        "default: k_scenes whole scenes and k_items items."))


class AskIn(Recalling):
    question: Text = Field(min_length=1, max_length=32768)


class UpdateIn(Body):
    text: Text = Field(min_length=1, max_length=32768, description="The item's corrected text.")


MemoryId = Annotated[str, Path(description="The memory's id: 1-128 letters, digits, '-', '_', '.', ':'.")]


def _caller(request: Request) -> Scope:
    """The caller's Scope, as the gate found it for the request's token."""
    return request.scope[CALLER]


Caller = Annotated[Scope, Depends(_caller)]

# what each error status means, as OpenAPI declares it (the gate's own: 401, 403, 413, 421)
MEANING = {
    400: "A bad body, parameter or memory id: every problem on one line, naming its field.",
    401: "A missing or wrong bearer token.",
    403: "A cross-site Origin (a loopback server).",
    404: "No such memory, or one this server does not serve: the same answer.",
    409: "The memory exists, its writer holds it, or it was built with another encoder.",
    413: "The body is larger than the server takes, or the write than the database's transaction memory.",
    421: "A Host that is not a loopback name (a loopback server).",
    500: "Internal error (the server's log has the details).",
    502: "The LLM failed; try again later.",
    503: "The database is unavailable or its schema not ready, or the memory is being rewritten; try again later.",
}
READ_ONLY = "A change asked with a read-only token (of a memory in its scope)."
LLM_BUSY = (MEANING[503] + " Also: no LLM is configured (`no LLM configured: …`, as MCP says), or the "
            "server runs as many asks and builds as it takes.")


def _error(status: int, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


class Gate:
    """In front of the whole app, before any route reads a byte of the body:

    - on a loopback bind, the `Host` must be a loopback name and an `Origin`, if sent, a
      loopback origin (a web page that rebinds a name to 127.0.0.1, or posts across sites,
      reaches nothing: 421 / 403);
    - with tokens, every request but /health carries `Authorization: Bearer <token>` of one of
      them (401; on /mcp as a JSON-RPC error, which the MCP client shows); the token's Scope is
      left in the ASGI scope under `CALLER` for the routes and the MCP tools;
    - a body is read whole, up to `limit` bytes (413 above it, chunked or not), then handed on.
    """

    def __init__(self, app, access: Access, limit: int, loopback: bool):
        self.app, self.access, self.limit, self.loopback = app, access, limit, loopback

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = dict(scope["headers"])
        path = scope["path"]
        if self.loopback:
            host = headers.get(b"host", b"").decode("latin-1").lower()
            origin = headers.get(b"origin", b"").decode("latin-1").lower()
            if _name_of(host) not in LOOPBACK_NAMES:
                return await _send_json(send, 421, {"error": "this server answers only to loopback names"})
            if origin and _name_of(origin.split("://", 1)[-1]) not in LOOPBACK_NAMES:
                return await _send_json(send, 403, {"error": "cross-site requests are refused"})
        caller = self.access.caller(_bearer(headers))
        if caller is None and path != "/health":
            body = ({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": UNAUTHORISED}}
                    if path.startswith("/mcp") else {"error": UNAUTHORISED})
            return await _send_json(send, 401, body, [(b"www-authenticate", b'Bearer realm="tmem"')])
        scope[CALLER] = caller
        length = headers.get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await _send_json(send, 413, {"error": f"the request body is larger than {self.limit} bytes"})
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > self.limit:
                return await _send_json(send, 413, {"error": f"the request body is larger than {self.limit} bytes"})
            if not message.get("more_body"):
                break
        replayed = False

        async def replay():
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def _bearer(headers: dict) -> bytes | None:
    """The token of an `Authorization: Bearer <token>` header (the scheme in any case)."""
    scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
    return value.strip() if scheme.lower() == b"bearer" else None


UNAUTHORISED = "unauthorized: a missing or wrong bearer token"
LOOPBACK_NAMES = {"127.0.0.1", "localhost", "[::1]", "::1"}


def _name_of(authority: str) -> str:
    """The host name of `host[:port]` (IPv6 in brackets kept whole)."""
    if authority.startswith("["):
        return authority.split("]", 1)[0] + "]"
    return authority.rsplit(":", 1)[0] if authority.count(":") == 1 else authority


async def _send_json(send, status: int, body: dict, headers: list | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def create_app(service: Service, host: str = "127.0.0.1", max_body_bytes: int = 16 * 2**20) -> Gate:
    """The service's ASGI app: FastAPI behind the `Gate` (one per process: the MCP session
    manager runs once)."""
    mcp = build_mcp(service)
    security = (TransportSecuritySettings(allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
                                          allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"])
                if host in LOOPBACK else
                # beyond loopback a token is required, which DNS rebinding cannot supply
                TransportSecuritySettings(enable_dns_rebinding_protection=False))
    mcp.streamable_http_app(stateless_http=True, json_response=True, transport_security=security)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI):
        service.start()
        async with mcp.session_manager.run():
            yield

    loopback, token = host in LOOPBACK, bool(service.access.tokens)
    read_only = not all(scope.write for scope in service.access.scopes)
    app = FastAPI(title="tmem-graph", version="0.1.0", lifespan=lifespan, docs_url=None, redoc_url=None,
                  generate_unique_id_function=lambda route: route.name,
                  description="T-Mem long-term conversational memory on Neo4j (docs/service.md).")

    @app.exception_handler(errors.TmemError)
    async def tmem_error(request: Request, exc: errors.TmemError):
        status, generic = next((code, text) for cls, code, text in STATUS if isinstance(exc, cls))
        first = (errors.public(exc).splitlines() or [""])[0]
        message = generic or first or type(exc).__name__
        if status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, first)
        if status == 400:
            return _error(400, message, problems=getattr(exc, "problems", None) or [message])
        return _error(status, message)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        problems = [problem(e) for e in exc.errors()]
        return _error(400, "; ".join(problems) or "invalid request", problems=problems)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        if exc.status_code == 400:   # FastAPI's one 400: a body that is not text (invalid UTF-8)
            message = f"body: {str(exc.detail).lower()} (JSON in UTF-8 expected)"
            return _error(400, message, problems=[message])
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, "internal error (the server's log has the details)")

    def answers(method: str, ok: type, *codes: int, llm: bool = False, write: bool = False) -> dict:
        """The statuses a route answers, each with its body: its own `codes`, and the gate's and
        every route's (401 with a token, 403/421 on loopback, 403 for a change with a read-only
        token, 413 with a body, 500, 503)."""
        refused = write and read_only
        codes = {*codes, 500, 503, *([401] if token else []), *([403, 421] if loopback else []),
                 *([403] if refused else []), *([413] if method in ("POST", "PUT") else []), *([502] if llm else [])}
        forbidden = " ".join(text for text, applies in ((MEANING[403], loopback), (READ_ONLY, refused)) if applies)
        meaning = {**MEANING, 403: forbidden, 503: LLM_BUSY if llm else MEANING[503]}
        out = {200: {"model": ok, "description": "Done."}}
        for code in sorted(codes):
            out[code] = {"model": Problems if code == 400 else Error, "description": meaning[code]}
        return out

    def route(method: str, path: str, ok: type, *codes: int, llm: bool = False, write: bool = False, **options):
        """A JSON route declared with every status it answers (its answer is built by the
        library, not re-validated: the integration tests check it against `ok`); `write`: it
        changes the memory, which a read-only token may not."""
        return app.api_route(path, methods=[method], response_model=None,
                             responses=answers(method, ok, *codes, llm=llm, write=write), **options)

    base_openapi = app.openapi

    def openapi() -> dict:
        """FastAPI's document without the 422 this server never answers (a bad request is a
        400 `Problems`), with the bearer scheme when the server has a token."""
        if app.openapi_schema is None:
            doc = base_openapi()
            for item in doc["paths"].values():
                for operation in item.values():
                    operation["responses"].pop("422", None)
            for unused in ("HTTPValidationError", "ValidationError"):
                doc["components"]["schemas"].pop(unused, None)
            if token:
                doc["components"]["securitySchemes"] = {"bearer": {
                    "type": "http", "scheme": "bearer",
                    "description": "The server's token (TMEM_SERVE_TOKEN), or one of its tokens file (--tokens)."}}
                doc["security"] = [{"bearer": []}]
                doc["paths"]["/health"]["get"]["security"] = []
        return app.openapi_schema

    app.openapi = openapi

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        return HTMLResponse(docs_page.render(app.openapi()))

    health_threads = anyio.CapacityLimiter(2)   # /health never waits behind the request threads

    health_answers = {200: {"model": Health, "description": "The database answered."},
                      **{code: {"model": Error, "description": MEANING[code]} for code in (403, 421) if loopback},
                      500: {"model": Error, "description": MEANING[500]},
                      503: {"model": Health, "description": "The database did not answer."}}

    @app.get("/health", response_model=None, responses=health_answers, summary="Whether the database answers now")
    async def health():
        state = await anyio.to_thread.run_sync(service.health, limiter=health_threads)
        return JSONResponse(state, status_code=200 if state["ok"] else 503)

    @route("GET", "/memories", MemoryList, 400, summary="A page of the memories the caller may use, with their counts")
    def list_memories(caller: Caller,
                      limit: Annotated[int, Query(ge=1, le=LIST_MAX, description="Memories per page.")] = LIST_DEFAULT,
                      after: Annotated[str | None, Query(max_length=128, description=(
                          "The `next` of the page before: memories whose ids sort after it."))] = None) -> dict:
        return service.list_memories(caller, after, limit)

    @route("GET", "/memories/{memory_id}", Stats, 400, 404, summary="A memory's counts, encoder and build cost")
    def stats(memory_id: MemoryId, caller: Caller) -> dict:
        return service.stats(caller, memory_id)

    @route("POST", "/memories/{memory_id}/turns", Added, 400, 404, 409, write=True,
           summary="Add turns (the memory is created when absent); recallable at once")
    def add_turns(memory_id: MemoryId, body: TurnsIn, caller: Caller) -> dict:
        return service.add(caller, memory_id, [t.model_dump(exclude_none=True) for t in body.turns])

    @route("POST", "/memories/{memory_id}/build", Built, 400, 404, 409, llm=True, write=True,
           summary="Build the memory's waiting turns now, with the server's LLM (waits for it)")
    def build(memory_id: MemoryId, caller: Caller, body: BuildIn = BuildIn()) -> dict:
        return service.build(caller, memory_id, flush=body.flush)

    @route("POST", "/memories/{memory_id}/flush", Flushed, 400, 404, write=True,
           summary="Ask the background builder to close the open scene")
    def flush(memory_id: MemoryId, caller: Caller) -> dict:
        return service.flush(caller, memory_id)

    @route("POST", "/memories/{memory_id}/recall", Recalled, 400, 404, 409,
           summary="Recall what the memory holds that matters for a query")
    def recall(memory_id: MemoryId, body: RecallIn, caller: Caller) -> JSONResponse:
        # the library's dict is JSON already: answered as is, without FastAPI's encoder walk (1 ms)
        return JSONResponse(service.recall(caller, memory_id, body.query, speaker=body.speaker, without=body.without,
                                           budgets=Budgets(body.k_scenes, body.k_items, body.k_recent,
                                                           body.budget_tokens), only=body.only()))

    @route("POST", "/memories/{memory_id}/ask", Answer, 400, 404, 409, llm=True,
           summary="Answer a question from the memory with the server's LLM")
    def ask(memory_id: MemoryId, body: AskIn, caller: Caller) -> dict:
        return service.ask(caller, memory_id, body.question, speaker=body.speaker, without=body.without,
                           only=body.only())

    @route("GET", "/memories/{memory_id}/export", MemoryDocument, 400, 404,
           summary="The whole memory as a tmem-memory/1 document")
    def export(memory_id: MemoryId, caller: Caller) -> dict:
        return service.export(caller, memory_id)

    # the document is checked by the library (its messages name the object: items[12].scene_ids[0]),
    # so the body is read as it is and only declared as a MemoryDocument
    @route("GET", "/memories/{memory_id}/{kind}", ObjectPage, 400, 404,
           summary="A page of a memory's turns, scenes or items, in their order")
    def list_objects(memory_id: MemoryId, kind: Literal["turns", "scenes", "items"], caller: Caller,
                     limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Objects per page.")] = OBJECTS_DEFAULT,
                     after: Annotated[str | None, Query(max_length=512, description=(
                         "The `next` of the page before."))] = None) -> dict:
        return service.list_objects(caller, memory_id, kind, after, limit)

    @route("GET", "/memories/{memory_id}/{kind}/{object_id}", ObjectDetail, 400, 404,
           summary="One turn, scene or item with its trigger views, sources and neighbours")
    def get_object(memory_id: MemoryId, kind: Literal["turns", "scenes", "items"],
                   object_id: Annotated[str, Path(max_length=256)], caller: Caller) -> dict:
        return service.get_object(caller, memory_id, kind, object_id)

    @route("DELETE", "/memories/{memory_id}/{kind}/{object_id}", ObjectDeleted, 400, 404, 409, write=True,
           summary="Delete one turn (and what rests on it alone) or one item, for good")
    def delete_object(memory_id: MemoryId, kind: Literal["turns", "items"],
                      object_id: Annotated[str, Path(max_length=256)], caller: Caller) -> dict:
        return service.delete_object(caller, memory_id, kind, object_id)

    @route("PATCH", "/memories/{memory_id}/{kind}/{object_id}", ObjectUpdated, 400, 404, 409, write=True,
           summary="Correct one item's text (its triggers rewritten by the LLM, or marked stale)")
    def update_object(memory_id: MemoryId, kind: Literal["items"], object_id: Annotated[str, Path(max_length=256)],
                      body: UpdateIn, caller: Caller) -> dict:
        return service.update_object(caller, memory_id, kind, object_id, body.text)

    @route("GET", "/memories/{memory_id}/{kind}/{object_id}/history", History, 400, 404,
           summary="How one turn, scene or item was written, and every edit of it since")
    def history(memory_id: MemoryId, kind: Literal["turns", "scenes", "items"],
                object_id: Annotated[str, Path(max_length=256)], caller: Caller) -> dict:
        return service.history(caller, memory_id, kind, object_id)

    @route("PUT", "/memories/{memory_id}", Imported, 400, 404, 409, write=True, openapi_extra=body_of(MemoryDocument),
           summary="Import a tmem-memory/1 document as this memory (409 if it exists, unless replace)")
    def import_memory(memory_id: MemoryId, document: dict[str, Any], caller: Caller,
                      replace: Annotated[bool, Query(description="Overwrite an existing memory.")] = False) -> dict:
        return service.import_(caller, memory_id, document, replace_existing=replace)

    @route("DELETE", "/memories/{memory_id}", Deleted, 400, 404, 409, write=True,
           summary="Delete the memory, for good (only when confirm repeats its id)")
    def delete_memory(memory_id: MemoryId, caller: Caller,
                      confirm: Annotated[str | None, Query(description="The memory id again.")] = None) -> dict:
        if confirm != memory_id:
            raise errors.UsageError(f"not deleted: pass confirm={memory_id} to delete memory {memory_id!r}")
        return service.delete(caller, memory_id)

    endpoint = StreamableHTTPASGIApp(mcp.session_manager)
    app.router.routes.append(Route("/mcp", endpoint=endpoint))
    app.router.routes.append(Route("/mcp/", endpoint=endpoint))
    return Gate(app, service.access, max_body_bytes, loopback=loopback)
