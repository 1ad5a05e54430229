"""The HTTP face of the service: a FastAPI app (OpenAPI page at /docs) over `Service`, and
the MCP server mounted at /mcp (streamable HTTP). Errors are JSON `{"error": message}` with a
status code, never a traceback; request bodies are size-limited; beyond /health every request
needs the bearer token when the server has one."""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from mcp.server.transport_security import TransportSecuritySettings
from pydantic import BaseModel, Field
from starlette.exceptions import HTTPException
from starlette.routing import Route

import tmem_graph.errors as errors
from .mcp import build_mcp
from .service import LOOPBACK, MAX_K, Budgets, Service

log = logging.getLogger(__name__)

STATUS = [  # the most specific first
    (errors.MemoryNotFound, 404), (errors.MemoryExists, 409), (errors.LeaseHeld, 409), (errors.MemoryBusy, 503),
    (errors.EncoderMismatch, 409), (errors.ValidationError, 400), (errors.UsageError, 400),
    (errors.ConfigError, 503), (errors.DatabaseUnavailable, 503), (errors.SchemaError, 503),
    (errors.LLMError, 502), (errors.TmemError, 500),
]


class TurnsIn(BaseModel):
    turns: list[dict[str, Any]] = Field(min_length=1, max_length=10_000,
                                        description='Turns: {"speaker", "text", "time"?, "session"?, "id"?}.')


class BuildIn(BaseModel):
    flush: bool = Field(False, description="Close every turn added so far into scenes.")


class RecallIn(BaseModel):
    query: str = Field(min_length=1, max_length=32768)
    speaker: str | None = None
    without: list[str] = Field(default_factory=list, description="Components to switch off (tmem recall --without).")
    k_scenes: int | None = Field(None, ge=0, le=MAX_K)
    k_items: int | None = Field(None, ge=0, le=MAX_K)
    k_recent: int | None = Field(None, ge=0, le=MAX_K)


class AskIn(BaseModel):
    question: str = Field(min_length=1, max_length=32768)
    speaker: str | None = None
    without: list[str] = Field(default_factory=list)


def _error(status: int, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": message, **extra}, status_code=status)


class BodyLimit:
    """Refuses a request body above `limit` bytes (413), by its Content-Length or as it streams."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope["headers"]).get(b"content-length")
        if length is not None and length.isdigit() and int(length) > self.limit:
            return await _send_json(send, 413, {"error": f"the request body is larger than {self.limit} bytes"})
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise _TooLarge()
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _send_json(send, 413, {"error": f"the request body is larger than {self.limit} bytes"})


class _TooLarge(Exception):
    pass


async def _send_json(send, status: int, body: dict, headers: list | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


class BearerGuard:
    """In front of /mcp: the bearer token, answered as a JSON-RPC error the MCP client shows."""

    def __init__(self, app, token: str | None):
        self.app = app
        self.expected = f"Bearer {token}".encode() if token else None

    async def __call__(self, scope, receive, send):
        if self.expected is not None and scope["type"] == "http":
            got = dict(scope["headers"]).get(b"authorization", b"")
            if not hmac.compare_digest(got, self.expected):
                return await _send_json(send, 401, {"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32001, "message": "unauthorized: a missing or wrong bearer token"}},
                    [(b"www-authenticate", b'Bearer realm="tmem"')])
        await self.app(scope, receive, send)


def create_app(service: Service, host: str = "127.0.0.1", max_body_bytes: int = 16 * 2**20) -> "BodyLimit":
    """The service's ASGI app, FastAPI behind a body-size limit (one per process: the MCP
    session manager runs once)."""
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
    token = service.access.token

    def authorised(request: Request) -> None:
        if token is not None:
            got = request.headers.get("authorization", "")
            if not hmac.compare_digest(got.encode(), f"Bearer {token}".encode()):
                raise HTTPException(401, "unauthorized: a missing or wrong bearer token")

    @app.exception_handler(errors.TmemError)
    async def tmem_error(request: Request, exc: errors.TmemError):
        status = next(code for cls, code in STATUS if isinstance(exc, cls))
        message = str(exc) if isinstance(exc, errors.ValidationError) else (str(exc).splitlines() or [""])[0]
        if status >= 500:
            log.warning("%s %s: %s", request.method, request.url.path, message)
        return _error(status, message or type(exc).__name__)

    @app.exception_handler(RequestValidationError)
    async def bad_request(request: Request, exc: RequestValidationError):
        problems = [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
        return _error(400, "; ".join(problems) or "invalid request", problems=problems)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException):
        return _error(exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def internal(request: Request, exc: Exception):
        log.exception("%s %s failed", request.method, request.url.path)
        return _error(500, "internal error (the server's log has the details)")

    auth = [Depends(authorised)]

    @app.get("/health")
    def health() -> dict:
        service.store.check()
        return {"ok": True}

    @app.get("/memories", dependencies=auth)
    def memories() -> dict:
        return {"memories": service.list_memories()}

    @app.get("/memories/{memory_id}", dependencies=auth)
    def stats(memory_id: str) -> dict:
        return service.stats(memory_id)

    @app.post("/memories/{memory_id}/turns", dependencies=auth)
    def add(memory_id: str, body: TurnsIn) -> dict:
        return service.add(memory_id, body.turns)

    @app.post("/memories/{memory_id}/build", dependencies=auth)
    def build(memory_id: str, body: BuildIn | None = None) -> dict:
        return service.build(memory_id, flush=bool(body and body.flush))

    @app.post("/memories/{memory_id}/flush", dependencies=auth)
    def flush(memory_id: str) -> dict:
        return service.flush(memory_id)

    @app.post("/memories/{memory_id}/recall", dependencies=auth)
    def recall(memory_id: str, body: RecallIn) -> dict:
        return service.recall(memory_id, body.query, speaker=body.speaker, without=body.without,
                              budgets=Budgets(body.k_scenes, body.k_items, body.k_recent))

    @app.post("/memories/{memory_id}/ask", dependencies=auth)
    def ask(memory_id: str, body: AskIn) -> dict:
        return service.ask(memory_id, body.question, speaker=body.speaker, without=body.without)

    @app.get("/memories/{memory_id}/export", dependencies=auth)
    def export(memory_id: str) -> dict:
        return service.export(memory_id)

    @app.put("/memories/{memory_id}", dependencies=auth)
    def import_(memory_id: str, document: dict[str, Any],
                replace: Annotated[bool, Query(description="Overwrite an existing memory.")] = False) -> dict:
        return service.import_(memory_id, document, replace_existing=replace)

    @app.delete("/memories/{memory_id}", dependencies=auth)
    def delete(memory_id: str, confirm: Annotated[str | None, Query(description="The memory id again.")] = None) -> dict:
        if confirm != memory_id:
            raise errors.UsageError(f"not deleted: pass confirm={memory_id} to delete memory {memory_id!r}")
        return service.delete(memory_id)

    endpoint = BearerGuard(StreamableHTTPASGIApp(mcp.session_manager), token)
    app.router.routes.append(Route("/mcp", endpoint=endpoint))
    app.router.routes.append(Route("/mcp/", endpoint=endpoint))
    return BodyLimit(app, max_body_bytes)
