"""`/health` after the database comes back (issue 55): the server reaches Neo4j through a TCP
relay that the test cuts and restores; once the database answers again, the build worker is
reported running at once, not after its pause (which grows to a minute while the database is
away)."""

from __future__ import annotations

import os
import socket
import threading
import time
from urllib.parse import urlparse

import httpx

from tests.integration.test_service import env_for, llm_url, serving  # noqa: F401


class Relay:
    """A TCP relay to Neo4j's Bolt port that can be cut (every open connection closed, new ones
    closed as they come) and restored."""

    def __init__(self, target: tuple[str, int]):
        self.target, self.open = target, True
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            if not self.open:
                client.close()
                continue
            upstream = socket.create_connection(self.target)
            with self.lock:
                self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source: socket.socket, sink: socket.socket) -> None:
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.close()
            except OSError:
                pass

    def cut(self) -> None:
        self.open = False
        with self.lock:
            for s in self.sockets:
                try:
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            self.sockets.clear()

    def restore(self) -> None:
        self.open = True


def _health(base: str) -> tuple[int, dict]:
    try:
        r = httpx.get(base + "/health", timeout=30)
        return r.status_code, r.json()
    except httpx.HTTPError:
        return 0, {}


def _until(check, timeout_s: float, step_s: float = 0.5):
    deadline = time.monotonic() + timeout_s
    while True:
        got = check()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(step_s)


def test_health_reports_the_worker_running_as_soon_as_the_database_answers_again(llm_url, tmp_path):  # noqa: F811
    bolt = urlparse(os.environ.get("NEO4J_URI", "bolt://127.0.0.1:7687"))
    relay = Relay((bolt.hostname or "127.0.0.1", bolt.port or 7687))
    env = {k: v for k, v in env_for(llm_url, NEO4J_URI=f"bolt://127.0.0.1:{relay.port}").items()
           if k != "TMEM_SERVE_TOKEN"}
    with serving([], env, tmp_path / "serve.log") as base:
        assert _until(lambda: _health(base)[1].get("worker") == "running", 30)
        relay.cut()
        # the worker's passes fail and its pause doubles (4, 8, 16, 32 s, then a minute) while the
        # database is away: after 65 s it sleeps until a minute or so past the restore
        assert _until(lambda: _health(base)[1].get("worker") == "retrying after an error", 60)
        time.sleep(65)
        assert _health(base)[0] == 503
        relay.restore()
        # back: the first /health that reaches the database wakes the worker from its pause
        assert _until(lambda: _health(base) == (200, {"ok": True, "worker": "running"}), 15), _health(base)
