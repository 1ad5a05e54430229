"""Warm recall through `tmem serve` over HTTP (query encoding included), then `--clients`
concurrent clients for `--seconds` while a writer adds turns, on a synthetic LoCoMo-sized memory
(`svc-locomo`: 600 turns, 60 scenes, 500 items, about 2,460 trigger views; `--items N` a smaller
one) imported into the database of `--uri`. Each server runs as a process (token on, build
worker off); with `--old DIR` (a checkout of older code) a second one runs that code beside
this one, and every measurement is made on both, interleaved, their answers compared timings
aside. The concurrent phase records the CPU time per recall of each server, of the clients and,
given `--neo4j-pid`, of the database.

    git worktree add /tmp/base main
    python -m benchmarks service --uri bolt://127.0.0.1:7687 --old /tmp/base --queries 200 \
        --clients 16 --seconds 20 --rounds 3 --neo4j-pid PID --out /tmp/service_latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import threading
import time
from pathlib import Path

import httpx

from benchmarks.common import HERE, load_average, own_texts, serve, stop, summary
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.encode import get_encoder
from tmem_graph.store import Store

MEMORY = "svc-locomo"
WRITES = "svc-locomo-live"
TOKEN = "benchmark-token-0123456789"


def cpu_s(pid: int) -> float:
    """User + system CPU seconds a process has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def concurrent(base: str, clients: int, seconds: float, queries: list[str], pids: dict[str, int]) -> dict:
    """`clients` threads recalling as fast as they can for `seconds`, while a writer adds two
    turns every 0.5 s to a fresh memory and to the one being recalled; with the CPU seconds
    each process of `pids` (and this one, the clients) used meanwhile."""
    headers, done, latencies, errors, adds = {"Authorization": f"Bearer {TOKEN}"}, threading.Event(), [], [], [0]

    def reader(k: int) -> None:
        rng = random.Random(k)
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            while not done.is_set():
                t0 = time.perf_counter()
                try:
                    r = http.post(f"/memories/{MEMORY}/recall", json={"query": rng.choice(queries)})
                    (latencies.append((time.perf_counter() - t0) * 1000) if r.status_code == 200
                     else errors.append(r.text))
                except httpx.HTTPError as exc:
                    errors.append(str(exc))

    def writer() -> None:
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            while not done.is_set():
                turns = [{"speaker": "Ana", "text": f"live turn {adds[0]}: {queries[adds[0] % len(queries)]}"},
                         {"speaker": "Ben", "text": f"reply {adds[0]}"}]
                for target in (WRITES, MEMORY):  # a fresh memory and the one being recalled
                    r = http.post(f"/memories/{target}/turns", json={"turns": turns})
                    (errors.append(r.text) if r.status_code != 200 else adds.__setitem__(0, adds[0] + 1))
                done.wait(0.5)

    threads = [threading.Thread(target=reader, args=(k,)) for k in range(clients)] + [threading.Thread(target=writer)]
    cpu0, client0, t0 = {name: cpu_s(pid) for name, pid in pids.items()}, time.process_time(), time.perf_counter()
    for t in threads:
        t.start()
    time.sleep(seconds)
    done.set()
    for t in threads:
        t.join()
    cpu = {name: cpu_s(pid) - cpu0[name] for name, pid in pids.items()} | {"clients": time.process_time() - client0}
    return {"seconds": time.perf_counter() - t0, "latencies": latencies, "adds": adds[0], "errors": errors, "cpu_s": cpu}


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--old", type=Path, help="a checkout of older code, served beside this one")
    ap.add_argument("--items", type=int, default=500, help="the memory's items (500: LoCoMo-sized)")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=30.0, help="of each concurrent round, per server")
    ap.add_argument("--rounds", type=int, default=1, help="concurrent rounds per server")
    ap.add_argument("--port", type=int, default=8790, help="this code's server; the old one's is the next")
    ap.add_argument("--neo4j-pid", type=int, help="the database's process, for its CPU time per recall")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    encoder = get_encoder()
    store = Store(Settings.from_env(uri=args.uri))
    store.apply_schema(encoder.dim)
    doc = synthetic_memory(MEMORY, n_items=args.items, n_scenes=max(1, args.items * 60 // 500), turns_per_scene=10,
                           horizon_per_scene=12)
    for m in (MEMORY, WRITES):  # afresh: the last run's adds left turns pending in it
        if store.exists(m):
            store.drop(m)
    api.import_memory(doc, store=store, encoder=encoder)
    queries = own_texts(doc, 60)
    sides = {"new": (HERE, args.port), **({"old": (args.old.resolve(), args.port + 1)} if args.old else {})}
    servers, bases = {}, {}
    out: dict = {"memory": MEMORY, "cores": os.cpu_count(), "load_before": load_average()}
    headers = {"Authorization": f"Bearer {TOKEN}"}
    try:
        for side, (code, port) in sides.items():
            servers[side], bases[side] = serve(code, port, {"NEO4J_URI": args.uri, "TMEM_SERVE_TOKEN": TOKEN})
        memory = api.Memory(MEMORY, store=store, encoder=encoder)
        clients = {side: httpx.Client(base_url=base, headers=headers, timeout=60) for side, base in bases.items()}
        order = list(clients)
        for q in queries[:min(30, args.queries)]:  # warm-up, every path
            for http in clients.values():
                http.post(f"/memories/{MEMORY}/recall", json={"query": q}).raise_for_status()
            memory.recall(q)
        via_http: dict[str, list[float]] = {side: [] for side in clients}
        server_ms: dict[str, dict[str, list[float]]] = {side: {} for side in clients}
        in_process: list[float] = []
        same = 0
        for n in range(args.queries):
            q = queries[n % len(queries)]
            answers = {}
            for side in order[n % 2:] + order[:n % 2]:
                t0 = time.perf_counter()
                r = clients[side].post(f"/memories/{MEMORY}/recall", json={"query": q})
                via_http[side].append((time.perf_counter() - t0) * 1000)
                r.raise_for_status()
                answers[side] = r.json()
                for stage, ms in answers[side]["timings_ms"].items():
                    server_ms[side].setdefault(stage, []).append(ms)
            if len(answers) == 2:   # the same answer, timings aside
                same += answers["new"] | {"timings_ms": 0} == answers["old"] | {"timings_ms": 0}
            t0 = time.perf_counter()
            memory.recall(q)
            in_process.append((time.perf_counter() - t0) * 1000)
        for http in clients.values():
            http.close()
        out["sequential"] = {side: {"http_ms": summary(via_http[side]),
                                    "server_timings_ms": {k: summary(v) for k, v in server_ms[side].items()}}
                             for side in clients}
        out["sequential"]["python_api_ms"] = summary(in_process)
        if args.old:
            out["sequential"]["same_answers"] = {"same": same, "different": args.queries - same}

        runs: dict[str, list[dict]] = {side: [] for side in clients}
        for k in range(args.rounds):
            for side in order[k % 2:] + order[:k % 2]:
                pids = {"server": servers[side].pid, **({"neo4j": args.neo4j_pid} if args.neo4j_pid else {})}
                runs[side].append(concurrent(bases[side], args.clients, args.seconds, queries, pids))
        out["concurrent"] = {}
        for side, done in runs.items():
            latencies = [ms for run in done for ms in run["latencies"]]
            out["concurrent"][side] = {
                "clients": args.clients, "recalls": len(latencies),
                "throughput_per_s": len(latencies) / sum(run["seconds"] for run in done),
                "adds": sum(run["adds"] for run in done), "errors": sum(len(run["errors"]) for run in done),
                "error_samples": [e for run in done for e in run["errors"]][:5],
                "latency_ms": summary(latencies) if latencies else None,
                "cpu_ms_per_recall": {name: 1000 * sum(run["cpu_s"][name] for run in done) / max(1, len(latencies))
                                      for name in done[0]["cpu_s"]}}
        out["load_after"] = load_average()
    finally:
        for server in servers.values():
            stop(server)
        if store.exists(WRITES):
            store.drop(WRITES)
        store.close()
    report(out, list(sides)[::-1])
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


def report(out: dict, sides: list[str]) -> None:
    """The sequential and the concurrent table, the old checkout first when there is one."""
    seq, conc = out["sequential"], out["concurrent"]
    print(f"load average {out['load_before']} → {out['load_after']}\n")
    print("| recall through HTTP, query encoding included | " + " | ".join(f"{s} p50 | p95" for s in sides)
          + " |\n" + "|---" * (1 + 2 * len(sides)) + "|")
    rows = [("`POST /memories/MEMORY/recall`", lambda s: seq[s]["http_ms"])]
    rows += [(f"the server's own `timings_ms.{k}`", lambda s, k=k: seq[s]["server_timings_ms"][k])
             for k in seq[sides[0]]["server_timings_ms"]]
    for what, get in rows:
        print(f"| {what} | " + " | ".join(f"{get(s)['p50']:.1f} | {get(s)['p95']:.1f}" for s in sides) + " |")
    print(f"| `Memory.recall` in this process | {seq['python_api_ms']['p50']:.1f} | {seq['python_api_ms']['p95']:.1f} |")
    if "same_answers" in seq:
        print(f"\nthe same answer, timings aside: {seq['same_answers']['same']} of "
              f"{seq['same_answers']['same'] + seq['same_answers']['different']}")
    print(f"\n| {conc[sides[0]]['clients']} clients, a writer adding turns | " + " | ".join(sides) + " |\n"
          + "|---" * (1 + len(sides)) + "|")
    print("| recalls per second | " + " | ".join(f"{conc[s]['throughput_per_s']:.1f}" for s in sides) + " |")
    print("| latency p50 / p95 / max | " + " | ".join(
        "{p50:.0f} / {p95:.0f} / {max:.0f} ms".format(**conc[s]["latency_ms"]) if conc[s]["latency_ms"] else "-"
        for s in sides) + " |")
    print("| errors; adds | " + " | ".join(f"{conc[s]['errors']}; {conc[s]['adds']}" for s in sides) + " |")
    for name in (conc[sides[0]]["cpu_ms_per_recall"] or {}):
        print(f"| CPU per recall: {name} | " + " | ".join(
            f"{conc[s]['cpu_ms_per_recall'][name]:.1f} ms" for s in sides) + " |")

