"""`tmem db` (the local Neo4j server) and `tmem schema` (constraints and indexes)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api
from ..store.lease import name_of
from .common import echo_json, friendly, store_of


# -- local database --------------------------------------------------------------------------
@click.group()
def db() -> None:
    """Start, inspect and stop the local Neo4j server."""


def _server(port: int | None, data_dir: Path | None, http_port: int | None = None):
    from ..local.neo4j import LocalServer

    kwargs = {"bolt_port": port} if port else {}
    if http_port is not None:
        kwargs["http_port"] = http_port or None
    return LocalServer(data_dir, **kwargs)


def _server_options(fn):
    """--port, --http-port and --data-dir, shared by the db commands."""
    fn = click.option("--data-dir", type=click.Path(file_okay=False, path_type=Path),
                      help="Where the server keeps its jars, data and logs "
                           "(default $TMEM_HOME or ~/.local/share/tmem-graph).")(fn)
    fn = click.option("--http-port", type=int,
                      help="HTTP port for Neo4j Browser (default 7474; 0 turns HTTP off).")(fn)
    return click.option("--port", type=int, help="Bolt port (default 7687).")(fn)


@db.command("start")
@_server_options
@click.option("--timeout", type=float, default=180.0, show_default=True,
              help="Seconds to wait for the server to accept Bolt.")
@friendly
def db_start(port, http_port, data_dir, timeout) -> None:
    """Start a local Neo4j Community server (provisioned on first use); print its URI."""
    click.echo(_server(port, data_dir, http_port).start(timeout=timeout))


@db.command("status")
@_server_options
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@friendly
def db_status(port, http_port, data_dir, as_json) -> None:
    """Exit 0 if the local server runs, 3 if not."""
    status = _server(port, data_dir, http_port).status()
    if as_json:
        echo_json(status)
    else:
        state = f"running (pid {status['pid']}) at {status['uri']}" if status["running"] else "not running"
        click.echo(f"local Neo4j {state}; data in {status['data_dir']}")
    sys.exit(0 if status["running"] else 3)


@db.command("stop")
@_server_options
@friendly
def db_stop(port, http_port, data_dir) -> None:
    """Stop the local server gracefully (with --port, only if it runs on that port)."""
    was_running = _server(port, data_dir, http_port).stop(port=port)
    click.echo("stopped" if was_running else "not running")


# -- schema ----------------------------------------------------------------------------------
@click.group()
def schema() -> None:
    """Manage the database schema (constraints and indexes)."""


@schema.command("apply")
@click.pass_context
@friendly
def schema_apply(ctx) -> None:
    """Apply the schema migrations (idempotent) and wait for indexes to come online."""
    applied = api.apply_schema(store=store_of(ctx))
    click.echo(f"schema: {len(applied)} migrations applied, indexes online")


@db.command("check")
@click.option("--repair", is_flag=True, help="Drop every index that fails and build it again from the stored data.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_context
@friendly
def db_check(ctx, repair, as_json) -> None:
    """Check that every index of the schema exists, is online and answers (a killed server can
    leave an index that throws on every query); with --repair, rebuild the ones that fail.
    Exit 0 if all are usable (after the repair), 4 if not."""
    report = api.check_database(repair=repair, store=store_of(ctx))
    if as_json:
        echo_json(report)
    else:
        for entry in report["indexes"]:
            click.echo(f"{entry['name']}: " + ("ok" if entry["ok"] else f"UNUSABLE, {entry['problem']}"))
        if report["repaired"]:
            click.echo(f"rebuilt {', '.join(report['repaired'])}")
        for memory_id in report["removed"]:
            click.echo(f"removed what an interrupted import or drop of {name_of(memory_id)!r} left"
                       + (f" (its staged version {memory_id!r})" if memory_id != name_of(memory_id) else ""))
        for memory_id in report["hidden"]:
            name = name_of(memory_id)
            what = (f"memory {name!r} is hidden: an import, a drop or a replacement of it" if memory_id == name else
                    f"a version of memory {name!r} ({memory_id!r}) is hidden: a replacement of it, or its deletion,")
            click.echo(f"{what} is under way, or was killed"
                       + ("" if repair else " (`tmem db check --repair` removes it once its writer is gone)"))
        bad = [e["name"] for e in report["indexes"] if not e["ok"]]
        if bad and not repair:
            click.echo(f"{len(bad)} unusable: run `tmem db check --repair` to rebuild "
                       f"{'it' if len(bad) == 1 else 'them'} from the stored data", err=True)
    sys.exit(0 if all(e["ok"] for e in report["indexes"]) else 4)
