"""A local Neo4j Community server that tmem-graph provisions and runs itself.

No Docker and no Neo4j tarball: the server's jars come from Maven Central through `mvn`
(`neo4j-server/pom.xml` lists them), once, into `<data_dir>/neo4j/lib-<version>/`, and the server runs
as `java -cp lib/* org.neo4j.server.Neo4jCommunity --console-mode` in a session of its own, so
it outlives the Python process that started it. Everything lives under `<data_dir>/neo4j/`:

    lib-<version>/     jars (a `.complete` marker says the copy finished)
    conf/neo4j.conf    written on every start from `LocalServer` settings (+ `neo4j.local.conf`)
    data/ logs/ run/ import/ plugins/    the server's own directories
    server.log         the JVM's stdout and stderr (the previous one is kept as server.log.1)
    server.pid         the pid of the JVM; server.json holds the ports and version it runs with

Neo4j 2026.x needs Java 21 or newer; `tmem_graph.local.java` finds it (`find_java`) and the POM
(`find_pom`); `tmem_graph.local.proc` has the process and socket helpers. Both modules' public names
are importable from here too.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

from ..config import default_data_dir
from ..errors import ServerError
from .java import JVM_FLAGS, MAIN_CLASS, MIN_JAVA, _java_info, find_java, find_pom, neo4j_version
from ..store.graph import bolt_ping
from .proc import HOST, _LOG_TAIL_LINES, _cmdline, _detach, _pid_alive, _port_open, _tail

__all__ = [
    "HOST", "JVM_FLAGS", "MAIN_CLASS", "MIN_JAVA", "LocalServer", "bolt_ping", "default_data_dir",
    "find_java", "find_pom", "neo4j_version",
]

_POLL_INTERVAL = 0.25


# --------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class LocalServer:
    """A Neo4j Community server under `<data_dir>/neo4j`, started and stopped from Python.

    Auth is disabled and every connector listens on 127.0.0.1 only. `http_port=None` turns the
    HTTP connector (Query API and Neo4j Browser) off.
    """

    #: Memory settings for a small (2-core) developer machine. The heap starts small and may
    #: grow to 3 GB so that one import transaction of a 5,000-item memory fits (2 GB of
    #: transaction memory; measured in docs/design-and-evidence.md).
    heap_initial = "512m"
    heap_max = "3g"
    pagecache = "512m"
    transaction_max = "2g"
    #: Vector index segments (Neo4j's internal settings of 2026.08): one after a build, and a
    #: write merges this many segments of like size into one (the server's own: fifty).
    vector_compaction = "FULL"
    vector_merge_factor = 10

    def __init__(self, data_dir: Path | None = None, bolt_port: int = 7687, http_port: int | None = 7474):
        self.data_dir = Path(data_dir).expanduser().resolve() if data_dir else default_data_dir().resolve()
        self.home = self.data_dir / "neo4j"
        self.bolt_port = int(bolt_port)
        self.http_port = int(http_port) if http_port else None
        self.pid_file = self.home / "server.pid"
        self.state_file = self.home / "server.json"
        self.log_file = self.home / "server.log"
        self.local_conf = self.home / "neo4j.local.conf"
        self._pom: Path | None = None
        self._version: str | None = None

    # -- properties ---------------------------------------------------------------------------

    @property
    def pom(self) -> Path:
        if self._pom is None:
            self._pom = find_pom()
        return self._pom

    @property
    def version(self) -> str:
        if self._version is None:
            self._version = neo4j_version(self.pom)
        return self._version

    @property
    def lib_dir(self) -> Path:
        return self.home / f"lib-{self.version}"

    @property
    def uri(self) -> str:
        return f"bolt://{HOST}:{self.bolt_port}"

    # -- state ---------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _lock(self):
        self.home.mkdir(parents=True, exist_ok=True)
        with open(self.home / ".lock", "w") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(f, fcntl.LOCK_UN)

    def _read_state(self) -> dict:
        try:
            pid = int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return {}
        try:
            state = json.loads(self.state_file.read_text())
        except (OSError, ValueError):
            state = {}
        state["pid"] = pid
        return state

    def _running_pid(self, state: dict) -> int | None:
        """The pid of this data dir's server if its process is alive, else None."""
        pid = state.get("pid")
        if not pid or not _pid_alive(pid):
            return None
        cmd = _cmdline(pid)
        if cmd is not None and f"--home-dir={self.home}" not in cmd:
            return None  # the pid was reused by another process
        return pid

    def _clear_state(self) -> None:
        for path in (self.pid_file, self.state_file, self.home / "run" / "neo4j.pid"):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()

    def status(self) -> dict:
        """Whether this data dir's server runs, on which ports, with which version."""
        state = self._read_state()
        pid = self._running_pid(state)
        if pid:
            bolt, http = state.get("bolt_port", self.bolt_port), state.get("http_port")
            version = state.get("version") or self.version
        else:
            bolt, http = self.bolt_port, self.http_port
            try:
                version = self.version
            except ServerError:
                version = "unknown"
        return {
            "running": pid is not None,
            "pid": pid,
            "uri": f"bolt://{HOST}:{bolt}",
            "http": f"http://{HOST}:{http}" if http else None,
            "data_dir": str(self.data_dir),
            "version": version,
            "log": str(self.log_file),
        }

    # -- provisioning --------------------------------------------------------------------------

    def provision(self) -> Path:
        """Copy the server's jars into `lib-<version>/` once (needs `mvn` and Maven Central)."""
        lib = self.lib_dir
        marker = lib / ".complete"
        if marker.is_file():
            return lib
        mvn = os.environ.get("TMEM_MVN") or shutil.which("mvn")
        if not mvn:
            raise ServerError(
                f"the Neo4j {self.version} jars are not in {lib} yet and Maven is needed once to "
                "fetch them: install it (e.g. `apt-get install maven`) or set TMEM_MVN"
            )
        tmp = self.home / f".lib-{self.version}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        cmd = [
            mvn, "-q", "-B", "-f", str(self.pom),
            "dependency:copy-dependencies", f"-DoutputDirectory={tmp}",
        ]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, stdin=subprocess.DEVNULL)
        except (OSError, subprocess.TimeoutExpired) as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            raise ServerError(f"fetching the Neo4j jars failed: {' '.join(cmd)}: {exc}") from None
        jars = sorted(p.name for p in tmp.glob("*.jar")) if tmp.is_dir() else []
        if proc.returncode != 0 or not any(j.startswith(f"neo4j-{self.version}") for j in jars):
            shutil.rmtree(tmp, ignore_errors=True)
            out = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-_LOG_TAIL_LINES:])
            raise ServerError(
                f"fetching the Neo4j jars failed (exit {proc.returncode}): {' '.join(cmd)}\n{out}"
            )
        (tmp / ".complete").write_text("\n".join(jars) + "\n")
        shutil.rmtree(lib, ignore_errors=True)
        tmp.rename(lib)
        return lib

    # -- configuration -------------------------------------------------------------------------

    def _config(self) -> str:
        lines = [
            "# Written by tmem_graph.local.neo4j on every start; put your own settings in",
            f"# {self.local_conf} (they replace the ones here).",
            f"server.directories.lib={self.lib_dir}",
            f"server.directories.import={self.home / 'import'}",
            f"server.default_listen_address={HOST}",
            f"server.default_advertised_address={HOST}",
            f"server.bolt.listen_address={HOST}:{self.bolt_port}",
            f"server.bolt.advertised_address={HOST}:{self.bolt_port}",
            "server.bolt.tls_level=DISABLED",
            "server.https.enabled=false",
        ]
        if self.http_port:
            lines += [
                "server.http.enabled=true",
                f"server.http.listen_address={HOST}:{self.http_port}",
                f"server.http.advertised_address={HOST}:{self.http_port}",
            ]
        else:
            lines.append("server.http.enabled=false")
        lines += [
            # local developer server: no password; it listens on loopback only
            "dbms.security.auth_enabled=false",
            "dbms.usage_report.enabled=false",
            # no Aura fleet-management reporting, no UDP discovery broadcasts on the network
            "dbms.fleet_manager.enabled=false",
            "server.fleet_discovery.enabled=false",
            # Cypher 25 (SEARCH clause, vector index WITH filters) for databases created here
            "db.query.default_language=CYPHER_25",
            # memory: a 2-core / 24 GiB machine that also runs the test suite
            f"server.memory.heap.initial_size={self.heap_initial}",
            f"server.memory.heap.max_size={self.heap_max}",
            f"server.memory.pagecache.size={self.pagecache}",
            f"dbms.memory.transaction.total.max={self.transaction_max}",
            # a vector index search walks each segment of the index on its own: keep them few
            # (vector_compaction, vector_merge_factor; docs/design-and-evidence.md, "Recall at scale")
            f"internal.dbms.index.vector.post_population_compaction={self.vector_compaction}",
            f"internal.dbms.index.vector.standard_merge_factor={self.vector_merge_factor}",
            # keep transaction logs small
            "db.tx_log.rotation.size=32m",
            "db.tx_log.rotation.retention_policy=2 files",
            "db.tx_log.preallocate=false",
            # stop in about a second instead of ten (Bolt's shutdown grace periods)
            "internal.server.bolt.thread_pool_shutdown_wait_time=1s",
            "internal.server.bolt.connection_shutdown_wait_time=1s",
            "internal.dbms.bolt.netty_server_shutdown_quiet_period_duration=0s",
            "internal.dbms.bolt.netty_server_shutdown_timeout=2s",
        ]
        if self.local_conf.is_file():
            # Neo4j rejects a setting declared twice: the local file's settings replace ours
            keys = self._local_settings()
            lines = [ln for ln in lines if ln.startswith("#") or ln.split("=", 1)[0] not in keys]
            lines += [f"# ---- from {self.local_conf} ----", *self.local_conf.read_text().splitlines()]
        return "\n".join(lines) + "\n"

    def _local_settings(self) -> dict[str, str]:
        """The `key=value` settings of `neo4j.local.conf` (empty if there is none)."""
        out = {}
        if self.local_conf.is_file():
            for ln in self.local_conf.read_text().splitlines():
                if "=" in ln and not ln.lstrip().startswith("#"):
                    key, value = ln.split("=", 1)
                    out[key.strip()] = value.strip()
        return out

    def _java_command(self, java: str, vector_module: bool) -> list[str]:
        local = self._local_settings()  # the heap is a JVM flag: honour the local file's sizes
        xms = local.get("server.memory.heap.initial_size", self.heap_initial)
        xmx = local.get("server.memory.heap.max_size", self.heap_max)
        # its own temp dir (Jetty unpacks the Browser there; netty its native library)
        flags = [f"-Xms{xms}", f"-Xmx{xmx}", *JVM_FLAGS, f"-Djava.io.tmpdir={self.home / 'tmp'}"]
        if vector_module:
            flags.append("--add-modules=jdk.incubator.vector")
        cp = f"{self.home / 'plugins'}/*:{self.lib_dir}/*"
        return [
            java, *flags, "-cp", cp, MAIN_CLASS,
            f"--home-dir={self.home}", f"--config-dir={self.home / 'conf'}", "--console-mode",
        ]

    # -- start / stop --------------------------------------------------------------------------

    def start(self, timeout: float = 180.0) -> str:
        """Start the server (provisioning it first if needed); return its Bolt URI.

        If this data dir's server already runs, wait until it answers and return its URI (the
        ports it was started with win over this object's). Raises ServerError on failure, with
        the tail of the server log.
        """
        deadline = time.monotonic() + timeout
        with self._lock():
            state = self._read_state()
            pid = self._running_pid(state)
            if pid:
                port = int(state.get("bolt_port", self.bolt_port))
                self._wait_ready(pid, port, deadline, kill_on_failure=False)
                return f"bolt://{HOST}:{port}"
            self._clear_state()
            for port, what in ((self.bolt_port, "Bolt"), (self.http_port, "HTTP")):
                if port and _port_open(port):
                    raise ServerError(
                        f"{what} port {port} on {HOST} is already in use by another process "
                        "(another Neo4j?); stop it or choose other ports"
                    )
            java = find_java()
            _, vector = _java_info(java)
            self.provision()
            for sub in ("conf", "data", "logs", "run", "import", "plugins", "tmp"):
                (self.home / sub).mkdir(parents=True, exist_ok=True)
            (self.home / "conf" / "neo4j.conf").write_text(self._config())
            if self.log_file.exists():
                self.log_file.replace(self.log_file.with_name("server.log.1"))
            cmd = self._java_command(java, vector)
            with open(self.log_file, "wb") as log:
                log.write(f"# {_dt.datetime.now().isoformat(timespec='seconds')} starting Neo4j "
                          f"{self.version} with {java} (full command in {self.state_file.name})\n".encode())
                log.flush()
                try:
                    proc = subprocess.Popen(
                        cmd, cwd=self.home, stdin=subprocess.DEVNULL, stdout=log,
                        stderr=subprocess.STDOUT, start_new_session=True, close_fds=True,
                    )
                except OSError as exc:
                    raise ServerError(f"cannot run {java}: {exc}") from None
            _detach(proc)
            self.pid_file.write_text(f"{proc.pid}\n")
            self.state_file.write_text(json.dumps({
                "pid": proc.pid, "bolt_port": self.bolt_port, "http_port": self.http_port,
                "version": self.version, "java": java,
                "started": _dt.datetime.now().isoformat(timespec="seconds"), "command": cmd,
            }, indent=2) + "\n")
            self._wait_ready(proc.pid, self.bolt_port, deadline, kill_on_failure=True)
            return self.uri

    def _wait_ready(self, pid: int, port: int, deadline: float, kill_on_failure: bool) -> None:
        why = "Bolt port not open yet"
        while True:
            if not _pid_alive(pid):
                self._clear_state()
                raise ServerError(
                    f"Neo4j exited during startup; see {self.log_file} "
                    f"(and {self.home / 'logs' / 'debug.log'}):\n{_tail(self.log_file)}"
                )
            if _port_open(port):
                # while the databases start, the server holds the query back: wait for its answer
                # (up to 30 s) rather than time out and ask again
                ok, why = bolt_ping(port, timeout=max(1.0, min(30.0, deadline - time.monotonic())))
                if ok:
                    return
            if time.monotonic() >= deadline:
                break
            time.sleep(_POLL_INTERVAL)
        if kill_on_failure:
            self._terminate(pid, 30.0)
            self._clear_state()
        raise ServerError(
            f"Neo4j did not become ready on bolt://{HOST}:{port} in time ({why}); "
            f"see {self.log_file}:\n{_tail(self.log_file)}"
        )

    def _terminate(self, pid: int, timeout: float) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        end = time.monotonic() + timeout
        while _pid_alive(pid) and time.monotonic() < end:
            time.sleep(0.1)
        if _pid_alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            end = time.monotonic() + 10
            while _pid_alive(pid) and time.monotonic() < end:
                time.sleep(0.1)
            if _pid_alive(pid):
                raise ServerError(f"Neo4j (pid {pid}) did not exit even after SIGKILL")

    def stop(self, timeout: float = 60.0, port: int | None = None) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after `timeout` s); True if it was running.
        With `port`, only if it runs on that Bolt port: this data dir's server on another port is
        left running and the call fails (ServerError), since a caller who names a port means
        another server."""
        with self._lock():
            state = self._read_state()
            pid = self._running_pid(state)
            if pid is None:
                self._clear_state()
                return False
            running = int(state.get("bolt_port", self.bolt_port))
            if port is not None and port != running:
                raise ServerError(f"the local server of {self.data_dir} runs on port {running}, not {port}: "
                                  f"nothing stopped (the server on port {port} keeps its data elsewhere: "
                                  "give its --data-dir, or leave --port out to stop this one)")
            try:
                self._terminate(pid, timeout)
            except PermissionError as exc:
                raise ServerError(f"cannot stop Neo4j (pid {pid}): {exc}") from None
            self._clear_state()
            return True
