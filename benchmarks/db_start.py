"""Start and stop times of the local Neo4j server (`tmem_graph.local.neo4j.LocalServer`).

cold  a fresh, empty data dir: `provision()` (mvn copies the jars into `lib-<version>/`; with
      the jars already in ~/.m2 that is a local copy, no download) then the first start, which
      also creates the `system` and `neo4j` databases; reported in total and split in two
warm  stop, then start the same data dir again (jars and databases exist)
stop  `LocalServer.stop()` (SIGTERM, wait for the JVM to exit)

"Started" means what `LocalServer.start()` waits for: Bolt answers `RETURN 1`. Each start
begins with an empty Java-probe cache (`find_java` runs `java -version` on the candidates), as
a new `tmem db start` process does; the probe is also timed on its own. "Neo4j logs Started."
is the time from calling `start()` to that line of logs/neo4j.log.

    python -m benchmarks.db_start --repeat 3 --out /tmp/bench-results/db_start.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import time
from pathlib import Path

import datetime as dt

from benchmarks._common import du, load_average, machine
from tmem_graph.local import java as jvm
from tmem_graph.local.neo4j import LocalServer, find_java

PROTECTED_PORTS = {7687, 7688, 7689}


def logged_started(server: LocalServer, since: float) -> float | None:
    """Seconds from `since` (epoch) to Neo4j's own "Started." line in logs/neo4j.log."""
    path = server.home / "logs" / "neo4j.log"
    found = None
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:  # "2026-11-30 15:00:56.262+0000 INFO  Started."
        if line.rstrip().endswith("Started."):
            try:
                t = dt.datetime.strptime(line[:23], "%Y-%m-%d %H:%M:%S.%f").replace(tzinfo=dt.timezone.utc)
            except ValueError:
                continue
            if t.timestamp() >= since - 1:
                found = t.timestamp() - since
    return found


def fresh_java_probe() -> float:
    """Clear the per-process cache of Java probes (as a new `tmem db start` process has none);
    return how long `find_java()` then takes."""
    jvm._java_cache.clear()
    t0 = time.perf_counter()
    find_java()
    jvm._java_cache.clear()
    return time.perf_counter() - t0


def stats(xs: list[float]) -> dict:
    return {"median": statistics.median(xs), "min": min(xs), "max": max(xs), "runs": xs}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="repetitions of cold and of warm start")
    ap.add_argument("--port", type=int, default=7700, help="Bolt port of the benchmark server")
    ap.add_argument("--root", type=Path, default=Path("/tmp/bench-start"),
                    help="parent of the throwaway data dirs (removed first and at the end)")
    ap.add_argument("--timeout", type=float, default=300.0)
    ap.add_argument("--keep", action="store_true", help="keep the data dirs")
    ap.add_argument("--out", type=Path, required=True, help="JSON results file")
    args = ap.parse_args(argv)
    if args.port in PROTECTED_PORTS:
        ap.error(f"port {args.port} belongs to someone else")

    shutil.rmtree(args.root, ignore_errors=True)
    args.root.mkdir(parents=True)
    loads = [load_average()]
    cold: list[dict] = []
    warm: list[dict] = []
    stops: list[float] = []
    version = None
    try:
        for n in range(args.repeat):
            server = LocalServer(args.root / f"cold-{n}", bolt_port=args.port, http_port=None)
            version = server.version
            java_s = fresh_java_probe()
            t0 = time.perf_counter()
            server.provision()
            t1 = time.perf_counter()
            epoch = time.time()
            server.start(timeout=args.timeout)
            t2 = time.perf_counter()
            cold.append({"provision_s": t1 - t0, "first_start_s": t2 - t1, "total_s": t2 - t0,
                         "logged_started_s": logged_started(server, epoch), "java_probe_s": java_s,
                         "lib_bytes": du(server.lib_dir)})
            t3 = time.perf_counter()
            server.stop()
            stops.append(time.perf_counter() - t3)
            loads.append(load_average())
            print(f"cold {n + 1}: provision {t1 - t0:.1f} s + first start {t2 - t1:.1f} s", flush=True)
        server = LocalServer(args.root / "cold-0", bolt_port=args.port, http_port=None)
        for n in range(args.repeat):
            java_s = fresh_java_probe()
            t0 = time.perf_counter()
            epoch = time.time()
            server.start(timeout=args.timeout)
            t1 = time.perf_counter()
            pid = server.status()["pid"]
            logged = logged_started(server, epoch)
            server.stop()
            t2 = time.perf_counter()
            warm.append({"start_s": t1 - t0, "pid": pid, "logged_started_s": logged, "java_probe_s": java_s})
            stops.append(t2 - t1)
            loads.append(load_average())
            print(f"warm {n + 1}: start {t1 - t0:.1f} s, stop {t2 - t1:.1f} s", flush=True)
    finally:
        for d in args.root.glob("cold-*"):
            LocalServer(d, bolt_port=args.port, http_port=None).stop()
        if not args.keep:
            shutil.rmtree(args.root, ignore_errors=True)

    result = {
        "benchmark": "db_start", "neo4j_version": version, "machine": machine(),
        "settings": "LocalServer defaults (heap 512m-1g, page cache 512m), http_port=None",
        "load_average_1_5_15": loads,
        "cold": {"provision_s": stats([c["provision_s"] for c in cold]),
                 "first_start_s": stats([c["first_start_s"] for c in cold]),
                 "total_s": stats([c["total_s"] for c in cold]),
                 "logged_started_s": stats([c["logged_started_s"] for c in cold if c["logged_started_s"]]),
                 "lib_bytes": cold[0]["lib_bytes"] if cold else None},
        "warm": {"start_s": stats([w["start_s"] for w in warm]),
                 "logged_started_s": stats([w["logged_started_s"] for w in warm if w["logged_started_s"]])},
        "java_probe_s": stats([c["java_probe_s"] for c in cold] + [w["java_probe_s"] for w in warm]),
        "stop_s": stats(stops),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    def row(name: str, s: dict) -> str:
        return f"| {name} | {s['median']:.1f} | {s['min']:.1f} | {s['max']:.1f} | {len(s['runs'])} |"

    print(f"\nNeo4j {version}, {os.cpu_count()} CPUs, load average before/after: {loads[0]} / {loads[-1]}\n")
    print("| phase | median s | min s | max s | n |")
    print("| --- | ---: | ---: | ---: | ---: |")
    print(row("cold: provision (mvn copies jars from ~/.m2)", result["cold"]["provision_s"]))
    print(row("cold: first start (creates the databases)", result["cold"]["first_start_s"]))
    print(row("cold: total", result["cold"]["total_s"]))
    print(row("  of which until Neo4j logs \"Started.\"", result["cold"]["logged_started_s"]))
    print(row("warm start (same data dir)", result["warm"]["start_s"]))
    print(row("  of which until Neo4j logs \"Started.\"", result["warm"]["logged_started_s"]))
    print(row("Java probe (find_java, uncached; inside each start)", result["java_probe_s"]))
    print(row("stop", result["stop_s"]))
    print(f"\njars: {result['cold']['lib_bytes'] / 2**20:.0f} MiB; JSON: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
