"""A command that loses the database prints one line saying so: the driver's own warnings (it
retries a transaction after a lost connection, saying so at WARNING) stay out of it, unless
`tmem -v` asks for the logs."""

import subprocess
import sys

PROBE = """
import logging, click
from tmem_graph.cli.main import main

@main.command("probe")
def probe():
    logging.getLogger("neo4j").warning("Transaction failed and will be retried in 1.0s (connection lost)")
    raise click.ClickException("lost Neo4j at bolt://127.0.0.1:7687 during lease/acquire")

main(prog_name="tmem")
"""


def run(*args: str) -> str:
    return subprocess.run([sys.executable, "-c", PROBE, *args], capture_output=True, text=True, timeout=120).stderr


def test_a_lost_connection_is_one_line_without_the_driver_s_warning():
    assert run("probe").splitlines() == ["Error: lost Neo4j at bolt://127.0.0.1:7687 during lease/acquire"]
    assert "Transaction failed" in run("-v", "probe")   # asked for the logs: the driver's too
