"""The HTTP face of the service: a FastAPI app (OpenAPI page at /docs) over `Service`, and
the MCP server mounted at /mcp (streamable HTTP). Errors are JSON `{"error": message}` with a
status code (a 400 also lists its `problems`, one line each), never a traceback; request bodies
are size-limited; beyond /health every request needs the bearer token when the server has one."""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from typing import Annotated, Any

import anyio
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import Field
from starlette.exceptions import HTTPException
from starlette.routing import Route

import tmem_graph.errors as errors
from .bodies import Body, TurnRecord, problem
from .mcp import build_mcp
from .service import LOOPBACK, MAX_K, MAX_TOKENS, Budgets, Service

log = logging.getLogger(__name__)

STATUS = [  # the most specific first; a 5xx answer says what to do, the server's log has the rest
    (errors.MemoryNotFound, 404, None), (errors.MemoryExists, 409, None), (errors.LeaseHeld, 409, None),
    (errors.LeaseLost, 409, None), (errors.EncoderMismatch, 409, None), (errors.ValidationError, 400, None),
    (errors.UsageError, 400, None), (errors.TransactionTooLarge, 413, "the write is too large for the database's "
                                     "transaction memory; send it in parts"),
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


class RecallIn(Body):
    query: str = Field(min_length=1, max_length=32768)
    speaker: str | None = None
    without: list[str] = Field(default_factory=list, description="Components to switch off (tmem recall --without).")
    k_scenes: int | None = Field(None, ge=0, le=MAX_K)
    k_items: int | None = Field(None, ge=0, le=MAX_K)
    k_recent: int | None = Field(None, ge=0, le=MAX_K)
    budget_tokens: int | None = Field(None, ge=1, le=MAX_TOKENS, description=(
        "Pack the evidence to this many tokens (docs/retrieval.md, 'One evidence budget'); "
        "default: k_scenes whole scenes and k_items items."))


class AskIn(Body):
    question: str = Field(min_length=1, max_length=32768)
    speaker: str | None = None
    without: list[str] = Field(default_factory=list)


def _error(status: int, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


class Gate:
    """In front of the whole app, before any route reads a byte of the body:

    - on a loopback bind, the `Host` must be a loopback name and an `Origin`, if sent, a
      loopback origin (a web page that rebinds a name to 127.0.0.1, or posts across sites,
      reaches nothing: 421 / 403);
    - with a token, every request but /health carries `Authorization: Bearer <token>` (401;
      on /mcp as a JSON-RPC error, which the MCP client shows);
    - a body is read whole, up to `limit` bytes (413 above it, chunked or not), then handed on.
    """

    def __init__(self, app, token: str | None, limit: int, loopback: bool):
        self.app, self.limit, self.loopback = app, limit, loopback
        self.token = token.encode() if token else None

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
        if self.token is not None and path != "/health" and not self._authorised(headers):
            body = ({"jsonrpc": "2.0", "id": None, "error": {"code": -32001, "message": UNAUTHORISED}}
                    if path.startswith("/mcp") else {"error": UNAUTHORISED})
            return await _send_json(send, 401, body, [(b"www-authenticate", b'Bearer realm="tmem"')])
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

    def _authorised(self, headers: dict) -> bool:
        scheme, _, value = headers.get(b"authorization", b"").partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(value.strip(), self.token)


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

    app = FastAPI(title="tmem-graph", version="0.1.0", lifespan=lifespan,
                  description="T-Mem long-term conversational memory on Neo4j (docs/service.md).")
    @app.exception_handler(errors.TmemError)
    async def tmem_error(request: Request, exc: errors.TmemError):
        status, generic = next((code, text) for cls, code, text in STATUS if isinstance(exc, cls))
        first = (str(exc).splitlines() or [""])[0]
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


    health_threads = anyio.CapacityLimiter(2)   # /health never waits behind the request threads

    @app.get("/health")
    async def health():
        state = await anyio.to_thread.run_sync(service.health, limiter=health_threads)
        return JSONResponse(state, status_code=200 if state["ok"] else 503)

    @app.get("/memories")
    def memories() -> dict:
        return {"memories": service.list_memories()}

    @app.get("/memories/{memory_id}")
    def stats(memory_id: str) -> dict:
        return service.stats(memory_id)

    @app.post("/memories/{memory_id}/turns")
    def add(memory_id: str, body: TurnsIn) -> dict:
        return service.add(memory_id, [t.model_dump(exclude_none=True) for t in body.turns])

    @app.post("/memories/{memory_id}/build")
    def build(memory_id: str, body: BuildIn | None = None) -> dict:
        return service.build(memory_id, flush=bool(body and body.flush))

    @app.post("/memories/{memory_id}/flush")
    def flush(memory_id: str) -> dict:
        return service.flush(memory_id)

    @app.post("/memories/{memory_id}/recall")
    def recall(memory_id: str, body: RecallIn) -> dict:
        return service.recall(memory_id, body.query, speaker=body.speaker, without=body.without,
                              budgets=Budgets(body.k_scenes, body.k_items, body.k_recent, body.budget_tokens))

    @app.post("/memories/{memory_id}/ask")
    def ask(memory_id: str, body: AskIn) -> dict:
        return service.ask(memory_id, body.question, speaker=body.speaker, without=body.without)

    @app.get("/memories/{memory_id}/export")
    def export(memory_id: str) -> dict:
        return service.export(memory_id)

    @app.put("/memories/{memory_id}")
    def import_(memory_id: str, document: dict[str, Any],
                replace: Annotated[bool, Query(description="Overwrite an existing memory.")] = False) -> dict:
        return service.import_(memory_id, document, replace_existing=replace)

    @app.delete("/memories/{memory_id}")
    def delete(memory_id: str, confirm: Annotated[str | None, Query(description="The memory id again.")] = None) -> dict:
        if confirm != memory_id:
            raise errors.UsageError(f"not deleted: pass confirm={memory_id} to delete memory {memory_id!r}")
        return service.delete(memory_id)

    endpoint = StreamableHTTPASGIApp(mcp.session_manager)
    app.router.routes.append(Route("/mcp", endpoint=endpoint))
    app.router.routes.append(Route("/mcp/", endpoint=endpoint))
    return Gate(app, service.access.token, max_body_bytes, loopback=host in LOOPBACK)
