"""The local Neo4j server (`tmem_graph.local.neo4j.LocalServer`) for real: provisioning, start, status,
idempotent start, Cypher 25 full-text and filtered vector search, restart with data kept, stop,
and the errors of a server that cannot start.

It runs its own server in a temporary data dir on ports 7697/7484, so it does not touch the
suite's test server. The jars come from ~/.m2 (filled when the suite's server was provisioned),
so the first start costs a local `mvn dependency:copy-dependencies` (~5 s) plus creating the
databases (~10 s).
"""

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from neo4j import GraphDatabase

from tmem_graph.errors import ServerError
from tmem_graph.config import default_data_dir
from tmem_graph.local.neo4j import LocalServer, find_java
from tmem_graph.store import bolt_ping

BOLT = int(os.environ.get("TMEM_SERVER_TEST_BOLT_PORT", "7697"))
HTTP = int(os.environ.get("TMEM_SERVER_TEST_HTTP_PORT", "7484"))


def _free(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) != 0


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    assert _free(BOLT) and _free(HTTP), f"ports {BOLT}/{HTTP} are taken; set TMEM_SERVER_TEST_*_PORT"
    srv = LocalServer(tmp_path_factory.mktemp("tmem-server") / "data", bolt_port=BOLT, http_port=HTTP)
    try:
        yield srv
    finally:
        srv.stop(timeout=30)


@pytest.fixture(scope="module")
def started(server):
    t0 = time.monotonic()
    uri = server.start(timeout=240)
    print(f"first start took {time.monotonic() - t0:.1f}s")
    return uri


def _run(uri, query, **params):
    with GraphDatabase.driver(uri, auth=None) as driver, driver.session() as session:
        return session.run(query, **params).data()


# ---- no server needed ----------------------------------------------------------------------


def test_default_data_dir(monkeypatch, tmp_path):
    monkeypatch.setenv("TMEM_HOME", str(tmp_path / "h"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "x"))
    assert default_data_dir() == tmp_path / "h"
    monkeypatch.delenv("TMEM_HOME")
    assert default_data_dir() == tmp_path / "x" / "tmem-graph"
    monkeypatch.delenv("XDG_DATA_HOME")
    assert default_data_dir() == Path.home() / ".local" / "share" / "tmem-graph"


def test_status_of_a_server_never_started(tmp_path):
    st = LocalServer(tmp_path, bolt_port=BOLT, http_port=HTTP).status()
    assert st["running"] is False and st["pid"] is None
    assert st["uri"] == f"bolt://127.0.0.1:{BOLT}" and st["data_dir"] == str(tmp_path.resolve())
    assert st["version"].startswith("2026.")
    assert LocalServer(tmp_path, bolt_port=BOLT).stop() is False


def test_java_is_21_or_newer():
    import subprocess

    out = subprocess.run([find_java(), "-version"], capture_output=True, text=True).stderr
    major = int(out.split('"')[1].split(".")[0])
    assert major >= 21, out


def test_busy_port_is_a_clear_error(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(ServerError, match=f"port {port} .* already in use"):
            LocalServer(tmp_path, bolt_port=port, http_port=None).start(timeout=10)


# ---- the real server ------------------------------------------------------------------------


def test_start_status_and_idempotent_start(server, started):
    assert started == f"bolt://127.0.0.1:{BOLT}"
    st = server.status()
    assert st["running"] is True and isinstance(st["pid"], int)
    assert st["uri"] == started and st["http"] == f"http://127.0.0.1:{HTTP}"
    assert st["version"] == server.version
    pid_file = Path(st["data_dir"]) / "neo4j" / "server.pid"
    assert int(pid_file.read_text()) == st["pid"]
    assert (server.lib_dir / ".complete").is_file()

    t0 = time.monotonic()
    assert server.start() == started
    assert time.monotonic() - t0 < 5, "start() on a running server must return at once"
    assert server.status()["pid"] == st["pid"]
    # another object for the same data dir sees the same server, whatever ports it was given
    other = LocalServer(Path(st["data_dir"]), bolt_port=1, http_port=2)
    assert other.status()["pid"] == st["pid"] and other.start() == started


def test_bolt_query_and_settings(started):
    assert _run(started, "RETURN 1 AS x") == [{"x": 1}]
    assert bolt_ping(BOLT) == (True, "")
    settings = {r["name"]: r["value"] for r in _run(
        started,
        "SHOW SETTINGS YIELD name, value WHERE name IN "
        "['db.query.default_language', 'dbms.security.auth_enabled', 'server.memory.pagecache.size',"
        " 'server.bolt.listen_address']")}
    assert settings == {
        "db.query.default_language": "CYPHER_25",
        "dbms.security.auth_enabled": "false",
        "server.memory.pagecache.size": "512.00MiB",
        "server.bolt.listen_address": f"127.0.0.1:{BOLT}",
    }
    dbs = {r["name"]: r["defaultLanguage"] for r in _run(started, "SHOW DATABASES YIELD name, defaultLanguage")}
    assert dbs["neo4j"] == "CYPHER 25"


def test_vector_index_segments_are_merged(server, started):
    """The vector index settings SHOW SETTINGS hides (internal to Neo4j): written to the
    configuration the running server read, which rejects a setting it does not know."""
    conf = (server.home / "conf" / "neo4j.conf").read_text().splitlines()
    assert f"internal.dbms.index.vector.post_population_compaction={LocalServer.vector_compaction}" in conf
    assert LocalServer.vector_compaction == "FULL"   # an index built from existing data: one segment
    assert f"internal.dbms.index.vector.standard_merge_factor={LocalServer.vector_merge_factor}" in conf
    assert 2 <= LocalServer.vector_merge_factor < 50   # fewer segments than the server's own factor leaves


def test_http_discovery_and_browser(started):
    import json
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{HTTP}/", timeout=10) as r:
        disco = json.load(r)
    assert disco["neo4j_edition"] == "community" and disco["bolt_direct"] == started
    with urllib.request.urlopen(f"http://127.0.0.1:{HTTP}/browser/", timeout=10) as r:
        assert r.status == 200 and b"<html" in r.read().lower()


def test_fulltext_and_filtered_vector_search(started):
    _run(started, "MATCH (n:SrvTest) DETACH DELETE n")
    _run(started, "CREATE FULLTEXT INDEX srv_text IF NOT EXISTS FOR (n:SrvTest) ON EACH [n.text]")
    _run(started,
         "CREATE VECTOR INDEX srv_vec IF NOT EXISTS FOR (n:SrvTest) ON n.embedding WITH [n.memory_id] "
         "OPTIONS {indexConfig: {`vector.dimensions`: 3, `vector.similarity_function`: 'cosine'}}")
    _run(started, "CALL db.awaitIndexes(120)")
    idx = {r["name"]: r for r in _run(started, "SHOW INDEXES YIELD name, type, state, properties")}
    assert idx["srv_text"]["type"] == "FULLTEXT" and idx["srv_text"]["state"] == "ONLINE"
    assert idx["srv_vec"]["type"] == "VECTOR" and idx["srv_vec"]["state"] == "ONLINE"
    assert idx["srv_vec"]["properties"] == ["embedding", "memory_id"]

    _run(started,
         "UNWIND range(0, 9) AS i CREATE (:SrvTest {id: i, memory_id: CASE WHEN i < 5 THEN 'a' ELSE 'b' END, "
         "text: CASE WHEN i = 7 THEN 'the pelican flew home' ELSE 'plain text ' + i END, "
         "embedding: [1.0, toFloat(i), 0.5]})")
    hits = _run(started,
                "CALL db.index.fulltext.queryNodes('srv_text', 'pelican') YIELD node, score "
                "RETURN node.id AS id, score")
    assert [h["id"] for h in hits] == [7] and hits[0]["score"] > 0

    search = ("MATCH (n:SrvTest) SEARCH n IN (VECTOR INDEX srv_vec FOR $v WHERE n.memory_id = $m LIMIT $k) "
              "SCORE AS s RETURN n.id AS id, n.memory_id AS m, s ORDER BY s DESC")
    # the query vector is closest to node 9 (memory b); the filter must keep to memory a
    rows = _run(started, search, v=[1.0, 9.0, 0.5], m="a", k=3)
    assert len(rows) == 3 and {r["m"] for r in rows} == {"a"}
    assert rows[0]["id"] == 4 and all(0 < r["s"] <= 1.0 for r in rows)
    rows_b = _run(started, search, v=[1.0, 9.0, 0.5], m="b", k=2)
    assert [r["id"] for r in rows_b] == [9, 8]
    # the same with an explicit CYPHER 25 prefix (what a server whose default is Cypher 5 needs)
    assert _run(started, "CYPHER 25 " + search, v=[1.0, 9.0, 0.5], m="a", k=3) == rows


def test_restart_keeps_data_and_stop(server, started):
    _run(started, "MERGE (:SrvKeep {id: 'kept'})")
    old_pid = server.status()["pid"]
    # a stop that names another port stops nothing: not through the API, not through the CLI
    with pytest.raises(ServerError, match=f"runs on port {BOLT}, not {BOLT + 50}: nothing stopped"):
        server.stop(port=BOLT + 50)
    cli = subprocess.run([sys.executable, "-m", "tmem_graph.cli", "db", "stop", "--data-dir", str(server.data_dir),
                          "--port", str(BOLT + 50)], capture_output=True, text=True, timeout=120)
    assert cli.returncode == 1 and f"runs on port {BOLT}, not {BOLT + 50}" in cli.stderr, cli.stderr
    assert "Traceback" not in cli.stderr
    assert server.status()["pid"] == old_pid and _run(started, "RETURN 1 AS x") == [{"x": 1}]
    t0 = time.monotonic()
    assert server.stop() is True
    assert time.monotonic() - t0 < 30
    st = server.status()
    assert st["running"] is False and st["pid"] is None
    assert _free(BOLT), "Bolt port still open after stop"
    assert server.stop() is False  # already stopped

    t0 = time.monotonic()
    assert server.start(timeout=240) == started
    print(f"warm start took {time.monotonic() - t0:.1f}s")
    assert server.status()["pid"] != old_pid
    assert _run(started, "MATCH (n:SrvKeep) RETURN n.id AS id") == [{"id": "kept"}]
    assert server.stop() is True
    assert server.status()["running"] is False and _free(BOLT)


def test_failed_start_reports_the_log(server, started, tmp_path):
    """A setting Neo4j rejects makes it exit; the error names the log and quotes its tail."""
    srv = LocalServer(tmp_path / "bad", bolt_port=BOLT + 1, http_port=None)
    # reuse the jars of the module's server instead of copying them again
    shutil.copytree(server.lib_dir, srv.lib_dir, copy_function=os.link)
    srv.home.mkdir(parents=True, exist_ok=True)
    srv.local_conf.write_text("db.no_such_setting_for_the_test=1\n")
    with pytest.raises(ServerError) as err:
        srv.start(timeout=120)
    msg = str(err.value)
    assert "exited during startup" in msg and str(srv.log_file) in msg
    assert "db.no_such_setting_for_the_test" in msg
    assert srv.status()["running"] is False and _free(BOLT + 1)
