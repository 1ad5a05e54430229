"""The `tmem` command line: thin click wrappers over the library. The group and its global
options are here; the commands live beside it (`db`, `memory`, `eval`), one module per area.

Every `TmemError` becomes a one-line message on stderr and exit status 1.
"""

from __future__ import annotations

import logging

import click

from ..config import Settings
from ..errors import TmemError
from ..local import enable_local_llm
from . import db, live, memory, objects, serve
from .eval import eval_group


@click.group()
@click.option("--uri", envvar="NEO4J_URI", help="Bolt URI (default bolt://127.0.0.1:7687).")
@click.option("--user", envvar="NEO4J_USER", help="Neo4j user (none for the local server).")
@click.option("--password", envvar="NEO4J_PASSWORD", help="Neo4j password.")
@click.option("--database", envvar="NEO4J_DATABASE", help="Neo4j database name.")
@click.option("-v", "--verbose", is_flag=True,
              help="Log every LLM call (stage, time, tokens) and the database driver's warnings to stderr.")
@click.version_option(package_name="tmem-graph")
@click.pass_context
def main(ctx: click.Context, uri, user, password, database, verbose) -> None:
    """tmem: T-Mem long-term conversational memory on Neo4j."""
    if not verbose:   # the driver's warnings (a transaction retried after a lost connection) would
        logging.getLogger("neo4j").setLevel(logging.ERROR)   # print before the one-line error saying what happened
    else:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
        logger = logging.getLogger("tmem_graph")
        logger.addHandler(handler)
        logger.setLevel(logging.INFO)
    try:
        settings = Settings.from_env(uri=uri, user=user, password=password, database=database)
    except TmemError as exc:
        raise click.ClickException(str(exc)) from None
    enable_local_llm()  # TMEM_LLM_MODEL=local serves the in-process model
    ctx.obj = {"settings": settings}


main.add_command(db.db)
main.add_command(db.schema)
for command in memory.COMMANDS + objects.COMMANDS:
    main.add_command(command)
main.add_command(live.add_cmd)
main.add_command(live.build_cmd)
main.add_command(serve.serve_cmd)
main.add_command(serve.mcp_cmd)
main.add_command(eval_group)

if __name__ == "__main__":  # pragma: no cover
    main()
