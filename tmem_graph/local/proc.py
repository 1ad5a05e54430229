"""Processes and sockets on this machine, as the local Neo4j server (`tmem_graph.local.neo4j`) needs
them: whether a pid is alive and what it runs, whether a loopback port is open, whether Bolt
answers there, the tail of a log, and a child process left to outlive its parent.

Linux-first: a pid's state and command line are read from /proc where there is one.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

__all__ = ["HOST"]

HOST = "127.0.0.1"
_LOG_TAIL_LINES = 20


def _pid_alive(pid: int) -> bool:
    try:  # reap it if it is our own child that has exited
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    except ChildProcessError:
        pass
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


def _cmdline(pid: int) -> list[str] | None:
    """The arguments of a process, or None where /proc cannot tell."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    return raw.decode(errors="replace").split("\0")


def _port_open(port: int, host: str = HOST, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _tail(path: Path, lines: int = _LOG_TAIL_LINES) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 64 * 1024))
            text = f.read().decode(errors="replace")
    except OSError:
        return "(no log)"
    rows = [r for r in text.splitlines() if r.strip()]
    return "\n".join(rows[-lines:]) if rows else "(log is empty)"


_detached: list = []


def _detach(proc: subprocess.Popen) -> None:
    """Let the server outlive us without a 'subprocess still running' warning at exit.

    The Popen object is kept (so it is not finalised while the server runs) and marked as
    finished; liveness is checked by pid (`_pid_alive` reaps it if it exits while we live).
    """
    proc.returncode = 0
    _detached.append(proc)
