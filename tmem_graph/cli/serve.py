"""`tmem serve` (HTTP and MCP over streamable HTTP, one warm process) and `tmem mcp` (MCP over
stdio, for desktop agents); docs/service.md."""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import click

from ..config import serve_token
from ..errors import ConfigError
from .common import friendly, settings_of


def _token(token_file: Path | None) -> str | None:
    if token_file is None:
        return serve_token()
    try:
        return token_file.read_text(encoding="utf-8").strip() or None
    except OSError as exc:
        raise ConfigError(f"{token_file}: cannot read the token ({exc.strerror})") from None


def _logging() -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s", "%H:%M:%S"))
    logger = logging.getLogger("tmem_graph")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False   # the MCP SDK configures the root logger too: one line per record


memories_option = click.option("--memories", "patterns", multiple=True, metavar="PATTERN",
                               help="Serve only memories whose id matches (shell pattern, e.g. 'team-*'; repeatable). "
                                    "Any other memory is answered as absent.")
worker_option = click.option("--no-worker", is_flag=True, help="Do not build in the background (adds stay pending).")
flush_option = click.option("--flush-after", type=click.FloatRange(0.1), metavar="MINUTES",
                            help="The worker flushes a memory no turn was added to for MINUTES.")


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to bind; beyond loopback a token is required.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True)
@click.option("--token-file", type=click.Path(path_type=Path, dir_okay=False),
              help="A file holding the bearer token (default: $TMEM_SERVE_TOKEN).")
@click.option("--tokens", "tokens_file", type=click.Path(path_type=Path, dir_okay=False),
              help="A TOML file of tokens, each with its memory patterns and read or read-write access "
                   "(docs/service.md, 'Beyond loopback: tokens'); instead of the one token and --memories.")
@click.option("--max-body-mb", type=click.FloatRange(0.001, 1024), default=16.0, show_default=True,
              help="Largest request body accepted.")
@memories_option
@worker_option
@flush_option
@click.pass_context
@friendly
def serve_cmd(ctx, host, port, token_file, tokens_file, max_body_mb, patterns, no_worker, flush_after) -> None:
    """Serve memories over HTTP (JSON API, OpenAPI page at /docs) and MCP (/mcp)."""
    import uvicorn

    from ..serve.access import Access, read_tokens
    from ..serve.http import create_app
    from ..serve.service import Service

    _logging()
    if tokens_file is None:
        access = Access.for_bind(host, _token(token_file), patterns)
        callers = "" if access.tokens else ", no token (loopback only)"
    elif token_file is not None or patterns or serve_token():
        # one way to say who may call, so that no token is served with rules the operator did not mean
        raise click.UsageError("--tokens replaces --token-file, $TMEM_SERVE_TOKEN and --memories: "
                               "give the tokens file alone")
    else:
        access = read_tokens(tokens_file)
        callers = f", tokens of {tokens_file}: " + "; ".join(scope.describe() for scope in access.scopes)
    service = Service(settings_of(ctx), access, worker=not no_worker,
                      flush_after_s=flush_after * 60 if flush_after else None)
    try:
        app = create_app(service, host=host, max_body_bytes=int(max_body_mb * 2**20))
        click.echo(f"tmem serve: http://{host}:{port} (MCP at /mcp, API docs at /docs){callers}", err=True)
        uvicorn.run(app, host=host, port=port, log_level="warning")
    finally:
        service.close()


@click.command("mcp")
@memories_option
@worker_option
@flush_option
@click.pass_context
@friendly
def mcp_cmd(ctx, patterns, no_worker, flush_after) -> None:
    """Serve memories over MCP on stdin/stdout (for desktop agents); logs go to stderr."""
    from ..serve.access import Access, Scope
    from ..serve.mcp import build_mcp
    from ..serve.service import Service

    _logging()
    service = Service(settings_of(ctx), Access(anonymous=Scope(tuple(patterns))), worker=not no_worker,
                      flush_after_s=flush_after * 60 if flush_after else None)
    try:
        service.start()
        build_mcp(service).run()
    finally:
        service.close()
