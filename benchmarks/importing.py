"""Import throughput of a large synthetic memory (`import_memory`), and with `--replace` of its
replacement by the same document: `synthetic_memory('bench-import', n_items=--items, ...)`
(10,000 items: 12,500 turns, 40,000 trigger views, 64,169 objects), into a fresh server of its
own (LocalServer's defaults unless `--conf`) or with `--uri` that server's database.
`--hash-vectors`: every text's vector drawn from its hash (no encoding: sizes whose encoding
would take hours); else the encoder's share is timed. The queries' share is what the store
reports to its query listeners; the commits' share is not reported apart.

    python -m benchmarks import --items 100000 --scenes 12500 --hash-vectors --replace --port 7712 --out /tmp/i.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import shutil
import statistics
import time
from collections import defaultdict
from pathlib import Path

from benchmarks.common import du, load_average, proc_status
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph.api import import_memory
from tmem_graph.config import Settings
from tmem_graph.encode import Encoder, get_encoder
from tmem_graph.format import parse_document
from tmem_graph.store import Store

TAKEN_PORTS = {7687, 7688, 7689}   # other people's servers on this machine


class TimedEncoder(Encoder):
    """The real encoder, or with `hashed` a unit vector drawn from each text's hash; and the time
    spent in it."""

    def __init__(self, inner: Encoder, hashed: bool):
        self.inner, self.hashed, self.name, self.dim, self.seconds = inner, hashed, inner.name, inner.dim, 0.0

    def encode(self, texts, batch_size: int = 64):
        import numpy as np

        t0 = time.perf_counter()
        if not self.hashed:
            out = self.inner.encode(texts, batch_size=batch_size)
        else:
            seeds = (int.from_bytes(hashlib.sha1(t.encode("utf-8")).digest()[:8], "little") for t in texts)
            out = [(v / np.linalg.norm(v)).tolist()
                   for v in (np.random.default_rng(seed).standard_normal(self.dim) for seed in seeds)]
        self.seconds += time.perf_counter() - t0
        return out


def own_server(args) -> tuple[object, str]:
    """A LocalServer on a fresh database (its jars kept), started; and its URI."""
    from tmem_graph.local.neo4j import LocalServer

    if args.port in TAKEN_PORTS:
        raise SystemExit(f"port {args.port} belongs to someone else")
    server = LocalServer(args.data_dir, bolt_port=args.port, http_port=None)
    server.stop()
    shutil.rmtree(server.home / "data", ignore_errors=True)
    server.home.mkdir(parents=True, exist_ok=True)
    if args.conf:
        server.local_conf.write_text("\n".join(args.conf) + "\n")
    else:
        server.local_conf.unlink(missing_ok=True)
    print(f"starting Neo4j {server.version} in {args.data_dir} on port {args.port}", flush=True)
    return server, server.start(timeout=300)


def timed_import(parsed, store: Store, encoder: Encoder, writes: dict[str, float], replace: bool) -> dict:
    """One import (a new memory unless `replace`): its seconds, the write queries' and the encoder's."""
    writes.clear()
    encoder.seconds = 0.0
    t0 = time.perf_counter()
    import_memory(parsed, store=store, encoder=encoder, replace=replace)
    return {"s": time.perf_counter() - t0, "write_queries_s": sum(writes.values()),
            "encode_s": encoder.seconds, "by_query_s": dict(writes)}


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--scenes", type=int, default=1250)
    ap.add_argument("--horizon", type=int, default=4, help="horizon views per scene")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--hash-vectors", action="store_true", help="vectors from each text's hash, no encoder")
    ap.add_argument("--replace", action="store_true", help="after each import, import the same document over it")
    ap.add_argument("--uri", help="import into this server's database instead of a server of its own")
    ap.add_argument("--port", type=int, default=7701, help="the own server's Bolt port")
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-import"), help="the own server's data")
    ap.add_argument("--conf", action="append", metavar="KEY=VALUE", help="a setting of the own server (repeatable)")
    ap.add_argument("--keep-server", action="store_true")
    ap.add_argument("--out", type=Path, help="every figure, as JSON")
    args = ap.parse_args(argv)
    server, uri = (None, args.uri) if args.uri else own_server(args)
    parsed = parse_document(synthetic_memory("bench-import", n_items=args.items, n_scenes=args.scenes,
                                             horizon_per_scene=args.horizon))[0]
    objects = sum(parsed.counts().values())
    store = Store(Settings.from_env(uri=uri))
    real = get_encoder(store.settings.encoder)
    encoder = TimedEncoder(real, hashed=args.hash_vectors)
    store.apply_schema(real.dim)
    writes: dict[str, float] = defaultdict(float)
    store.query_listeners.append(lambda name, _p, wall_ms, _s: writes.__setitem__(name, writes[name] + wall_ms / 1000))
    runs, loads = [], [load_average()]
    try:
        for _ in range(args.runs):
            if store.exists(parsed.memory_id):
                store.drop(parsed.memory_id)
            run = {"import": timed_import(parsed, store, encoder, writes, replace=False)}
            if args.replace:
                run["replace"] = timed_import(parsed, store, encoder, writes, replace=True)
                counts = store.counts(store.memory(parsed.memory_id)["pid"])
                run["objects_after"] = sum(v for v in counts.values() if isinstance(v, int))
            loads.append(load_average())
            runs.append(run)
            print(json.dumps({k: v["s"] for k, v in run.items() if isinstance(v, dict)}), flush=True)
        if args.uri:   # someone else's database: leave it as it was
            store.drop(parsed.memory_id)
    finally:
        store.close()
        jvm = proc_status(server.status()["pid"], "VmHWM") if server else {}
        disk = du(server.home / "data") if server else None
        if server and not args.keep_server:
            server.stop()
    result = {"items": args.items, "objects": objects, "counts": parsed.counts(), "runs": runs, "loads": loads,
              "python_peak_rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
              "neo4j_peak_rss": jvm.get("VmHWM"), "on_disk": disk}
    report(result, args)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))


def report(r: dict, args) -> None:
    def med(*keys) -> float:
        values = [run for run in r["runs"]]
        for key in keys:
            values = [v[key] for v in values if key in v]
        return statistics.median(values) if values else float("nan")

    def mib(n) -> str:
        return f"{n / 2**20:,.0f} MiB" if n else "-"

    print(f"\nload average {r['loads'][0]} → {r['loads'][-1]}; {r['counts']}\n")
    print("| memory | objects | import | objects/s | items/s | of which queries | of which encoding "
          "| Neo4j peak RSS | Python peak RSS | on disk |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    s = med("import", "s")
    print(f"| {r['items']:,} items | {r['objects']:,} | {s:.1f} s | {r['objects'] / s:,.0f} | {r['items'] / s:,.0f} | "
          f"{med('import', 'write_queries_s'):.1f} s | {med('import', 'encode_s'):.1f} s | {mib(r['neo4j_peak_rss'])} "
          f"| {mib(r['python_peak_rss'])} | {mib(r['on_disk'])} |")
    if args.replace:
        print("\n| memory | import (new memory) | replacement | of which queries | objects after |"
              "\n|---|---:|---:|---:|---:|")
        print(f"| {r['items']:,} items | {s:.1f} s | {med('replace', 's'):.1f} s | "
              f"{med('replace', 'write_queries_s'):.1f} s | {med('objects_after'):,.0f} |")
