"""Warm recall through `tmem serve` over HTTP, query encoding included, on a LoCoMo-sized
memory; then 16 concurrent clients for a bounded run while turns are being added.

The memory is `synthetic_memory('svc-locomo', n_items=500, n_scenes=60, turns_per_scene=10,
horizon_per_scene=12)` (600 turns, 60 scenes, 500 items, about 2,460 trigger views), imported
into the database of `--uri`. The server is started as a process (`tmem serve`, its build
worker off so that only recall and add are measured), with a token. Beside each HTTP recall
the same recall is made in this process with the Python API (`Memory.recall`), interleaved,
so both see the same machine load.

    python -m benchmarks.service_latency --uri bolt://127.0.0.1:7687 --queries 200 \
        --clients 16 --seconds 30 --out /tmp/service_latency.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx

from benchmarks._common import pct
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.encode import get_encoder
from tmem_graph.store import Store
from tests.fixtures.processes import wait_for_http
from tests.fixtures.synthetic import synthetic_memory

MEMORY = "svc-locomo"
WRITES = "svc-locomo-live"
TOKEN = "benchmark-token-0123456789"



def summary(values: list[float]) -> dict:
    return {"n": len(values), "p50": statistics.median(values), "p95": pct(values, 95), "max": max(values)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--port", type=int, default=8790)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    encoder = get_encoder()
    store = Store(Settings.from_env(uri=args.uri))
    store.apply_schema(encoder.dim)
    doc = synthetic_memory(MEMORY, n_items=500, n_scenes=60, turns_per_scene=10, horizon_per_scene=12)
    for m in (MEMORY, WRITES):  # afresh: the last run's adds left turns pending in it
        if store.exists(m):
            store.drop(m)
    api.import_memory(doc, store=store, encoder=encoder)
    rng = random.Random(5)
    queries = [t["text"] for t in rng.sample(doc["turns"], 60)] + [i["text"] for i in rng.sample(doc["items"], 60)]
    env = {**os.environ, "NEO4J_URI": args.uri, "TMEM_SERVE_TOKEN": TOKEN}
    server = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "serve", "--port", str(args.port),
                               "--no-worker"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{args.port}"
    out: dict = {"memory": MEMORY, "cores": os.cpu_count(), "host": socket.gethostname()}
    try:
        wait_for_http(base + "/health", server)
        headers = {"Authorization": f"Bearer {TOKEN}"}
        memory = api.Memory(MEMORY, store=store, encoder=encoder)
        with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
            for q in queries[:30]:  # warm-up, both paths
                http.post(f"/memories/{MEMORY}/recall", json={"query": q}).raise_for_status()
                memory.recall(q)
            via_http, in_process = [], []
            for n in range(args.queries):
                q = queries[n % len(queries)]
                t0 = time.perf_counter()
                http.post(f"/memories/{MEMORY}/recall", json={"query": q}).raise_for_status()
                via_http.append((time.perf_counter() - t0) * 1000)
                t0 = time.perf_counter()
                memory.recall(q)
                in_process.append((time.perf_counter() - t0) * 1000)
        out["sequential"] = {"http_ms": summary(via_http), "python_api_ms": summary(in_process),
                             "ratio_p50": statistics.median(via_http) / statistics.median(in_process)}
        print(json.dumps(out["sequential"]), flush=True)

        stop = threading.Event()
        latencies: list[float] = []
        errors: list[str] = []
        adds = [0]
        lock = threading.Lock()

        def reader(k: int) -> None:
            local_rng = random.Random(k)
            with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
                while not stop.is_set():
                    t0 = time.perf_counter()
                    try:
                        r = http.post(f"/memories/{MEMORY}/recall", json={"query": local_rng.choice(queries)})
                        ok = r.status_code == 200
                    except httpx.HTTPError as exc:
                        ok, r = False, exc
                    with lock:
                        (latencies.append((time.perf_counter() - t0) * 1000) if ok else errors.append(str(r)))

        def writer() -> None:
            with httpx.Client(base_url=base, headers=headers, timeout=60) as http:
                n = 0
                while not stop.is_set():
                    n += 1
                    turns = [{"speaker": "Ana", "text": f"live turn {n}: {rng.choice(queries)}"},
                             {"speaker": "Ben", "text": f"reply {n}"}]
                    for target in (WRITES, MEMORY):  # a fresh memory and the one being recalled
                        r = http.post(f"/memories/{target}/turns", json={"turns": turns})
                        with lock:
                            if r.status_code == 200:
                                adds[0] += 1
                            else:
                                errors.append(r.text)
                    stop.wait(0.5)

        threads = [threading.Thread(target=reader, args=(k,)) for k in range(args.clients)]
        threads.append(threading.Thread(target=writer))
        t0 = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join()
        wall = time.perf_counter() - t0
        out["concurrent"] = {"clients": args.clients, "seconds": wall, "recalls": len(latencies),
                             "throughput_per_s": len(latencies) / wall, "adds": adds[0], "errors": len(errors),
                             "error_samples": errors[:5], "latency_ms": summary(latencies) if latencies else None}
        print(json.dumps(out["concurrent"]), flush=True)
    finally:
        server.terminate()
        server.wait(timeout=30)
        for m in (WRITES,):
            if store.exists(m):
                store.drop(m)
        store.close()
    if args.out:
        args.out.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
