"""Import throughput of a large synthetic memory (`tmem_graph.api.import_memory`).

Default: `synthetic_memory('bench-10k', n_items=10000, n_scenes=1250, horizon_per_scene=4)`,
10,000 items and 40,000 trigger views, imported into a server of its own. The import of a new
memory writes it in batches of `Settings.write_batch` rows, one transaction each, behind one
small switch (tmem_graph/transfer.py), after encoding every distinct text.

Per run, two imports of the same document into the same database:

1. with the real encoder, wrapped in a timing proxy: total time, the encoder's share (the time
   spent inside `encoder.encode`), the database's share (each write query, then the commit)
2. the memory is dropped, then imported again with a *replay* encoder that returns the vectors
   computed in (1) from a dict: the import without the encoder, measured rather than subtracted

Peak RSS of this Python process (ru_maxrss) and of the Neo4j JVM (VmHWM) are reported.

    python -m benchmarks.import_throughput --out /tmp/bench-results/import.json
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import resource
import shutil
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

from tests.fixtures.synthetic import synthetic_memory
from benchmarks._common import du, load_average, proc_status
from tmem_graph.api import import_memory
from tmem_graph.config import Settings
from tmem_graph.encode import Encoder, get_encoder
from tmem_graph.format import parse_document
from tmem_graph.local.neo4j import LocalServer
from tmem_graph.store import Store

PROTECTED_PORTS = {7687, 7688, 7689}
DEFAULT_CONF = [
    "server.memory.heap.initial_size=4g",
    "server.memory.heap.max_size=4g",
    "server.memory.pagecache.size=2g",
    "dbms.memory.transaction.total.max=3g",
]


class TimingEncoder(Encoder):
    """Passes calls to an encoder, timing them and remembering every vector by its text."""

    def __init__(self, inner: Encoder):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.seconds = 0.0
        self.texts = 0
        self.memo: dict[str, list[float]] = {}

    def encode(self, texts, batch_size: int = 64):
        t0 = time.perf_counter()
        vectors = self.inner.encode(texts, batch_size=batch_size)
        self.seconds += time.perf_counter() - t0
        self.texts += len(texts)
        self.memo.update(zip(texts, vectors))
        return vectors


class ReplayEncoder(Encoder):
    """Returns vectors computed earlier (no model runs)."""

    def __init__(self, like: Encoder, memo: dict[str, list[float]]):
        self.name, self.dim, self.memo = like.name, like.dim, memo
        self.seconds = 0.0

    def encode(self, texts, batch_size: int = 64):
        t0 = time.perf_counter()
        out = [self.memo[t] for t in texts]
        self.seconds += time.perf_counter() - t0
        return out


class HashVectors(dict):
    """A unit vector for any text, drawn from a generator seeded by the text's hash: the import's
    database side alone at a size whose encoding would take hours (`--hash-vectors`)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def __missing__(self, text: str) -> list[float]:
        import numpy as np

        seed = int.from_bytes(hashlib.sha1(text.encode("utf-8")).digest()[:8], "little")
        v = np.random.default_rng(seed).standard_normal(self.dim)
        return (v / np.linalg.norm(v)).tolist()


class TimedStore:
    """Instruments one Store instance (not the class): time per write query and for the commit."""

    def __init__(self, store: Store):
        self.store = store
        self.queries: dict[str, float] = defaultdict(float)
        self.commit_s = 0.0
        self.tx_s = 0.0
        inner_run, inner_tx = store.tx_run, store.transaction

        def tx_run(tx, name, **params):
            t0 = time.perf_counter()
            try:
                return inner_run(tx, name, **params)
            finally:
                self.queries[name] += time.perf_counter() - t0

        @contextlib.contextmanager
        def transaction():
            t_open = time.perf_counter()
            cm = inner_tx()
            tx = cm.__enter__()
            ok = False
            try:
                yield tx
                ok = True
            finally:
                t0 = time.perf_counter()
                if ok:
                    cm.__exit__(None, None, None)  # commits
                else:
                    cm.__exit__(*sys.exc_info())
                self.commit_s += time.perf_counter() - t0   # an import of a new memory: many batches
                self.tx_s += time.perf_counter() - t_open

        store.tx_run = tx_run
        store.transaction = transaction

    def reset(self) -> None:
        self.queries.clear()
        self.commit_s = self.tx_s = 0.0


def plan_rows(profile: dict, depth: int = 0) -> list[dict]:
    args_ = profile.get("args", {})
    out = [{"operator": profile.get("operatorType"), "depth": depth, "rows": profile.get("rows"),
            "db_hits": profile.get("dbHits"), "details": str(args_.get("Details", ""))[:140]}]
    for child in profile.get("children", []):
        out += plan_rows(child, depth + 1)
    return out


def profile_writes(store: Store, parsed, encoder: Encoder, batch: int = 500) -> dict:
    """The import's write queries in its own situation: the same rows, in the same order
    (tmem_graph.transfer.write_steps), in one transaction on this (fresh) database;
    each query's second batch runs under PROFILE. Rolled back at the end."""
    from tmem_graph.store.queries import query
    from tmem_graph.transfer import memory_rows, write_steps

    m = parsed.memory_id
    rows = memory_rows(parsed, encoder, 64)
    out: dict = {}
    with store.session("WRITE") as s:
        tx = s.begin_transaction()
        try:
            store.create_memory_in(tx, m, encoder.name, encoder.dim, parsed.speakers)
            for name, chunk, params in write_steps(m, rows, batch):
                entry = out.setdefault(name, {"rows": 0, "batches": 0, "all_batches_s": 0.0})
                t0 = time.perf_counter()
                if entry["batches"] == 1:
                    summ = tx.run("PROFILE " + query(name), {**params, "rows": chunk}).consume()
                    ops = plan_rows(summ.profile)
                    entry.update({"profiled_batch_s": time.perf_counter() - t0,
                                  "profiled_batch_db_hits": sum(o["db_hits"] or 0 for o in ops),
                                  "lookups": [o for o in ops if o["operator"] and
                                              ("Seek" in o["operator"] or "Filter" in o["operator"]
                                               or "Scan" in o["operator"])]})
                else:
                    tx.run(query(name), {**params, "rows": chunk}).consume()
                entry["rows"] += len(chunk)
                entry["batches"] += 1
                entry["all_batches_s"] += time.perf_counter() - t0
        finally:
            tx.rollback()
    print(f"\nPROFILE of the second batch ({batch} rows) of each write query, inside the import transaction:")
    for name, e in out.items():
        if "profiled_batch_s" not in e:
            continue
        print(f"  {name}: all {e['rows']:,} rows {e['all_batches_s']:.1f} s; profiled batch "
              f"{e['profiled_batch_s']:.2f} s, {e['profiled_batch_db_hits']:,} db hits", flush=True)
        for o in e["lookups"]:
            print(f"      {o['operator']}: rows {o['rows']:,}, hits {o['db_hits']:,}  {o['details'][:100]}")
    return out


def save_vectors(path: Path, memo: dict[str, list[float]]) -> None:
    import numpy as np

    path.parent.mkdir(parents=True, exist_ok=True)
    texts = list(memo)
    np.savez(path, texts=np.array(texts, dtype=object),
             vectors=np.array([memo[t] for t in texts], dtype=np.float32))  # float32 in, lossless


def load_vectors(path: Path) -> dict[str, list[float]]:
    import numpy as np

    data = np.load(path, allow_pickle=True)
    return dict(zip(data["texts"].tolist(), data["vectors"].astype("float64").tolist()))


def _nodes(store: Store) -> int:
    """Every node in the benchmark's database (one memory: what a replacement left is counted)."""
    with store.session("READ") as s:
        return s.run("MATCH (n) RETURN count(n) AS n").single()["n"]


def mib(n: float) -> str:
    return f"{n / 2**20:,.0f} MiB"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--scenes", type=int, default=1250)
    ap.add_argument("--horizon", type=int, default=4, help="horizon views per scene")
    ap.add_argument("--runs", type=int, default=1, help="repetitions of the pair of imports")
    ap.add_argument("--port", type=int, default=7701)
    ap.add_argument("--data-dir", type=Path, default=Path("/tmp/bench-import"),
                    help="the benchmark server's data dir (its database is wiped first)")
    ap.add_argument("--conf", action="append", metavar="KEY=VALUE",
                    help=f"server setting for neo4j.local.conf (repeatable; default: {' '.join(DEFAULT_CONF)})")
    ap.add_argument("--default-conf", action="store_true", help="no neo4j.local.conf: LocalServer defaults")
    ap.add_argument("--save-vectors", type=Path, help="save the encoded vectors (npz) for --load-vectors")
    ap.add_argument("--load-vectors", type=Path,
                    help="skip the encoder: only the import with vectors replayed from this npz")
    ap.add_argument("--hash-vectors", action="store_true",
                    help="skip the encoder: only the import, with vectors drawn from each text's hash")
    ap.add_argument("--profile-writes", action="store_true",
                    help="first, on the fresh database, run the import's write queries in one transaction "
                         "with a PROFILE of each one's second batch, then roll back (needs --load-vectors)")
    ap.add_argument("--replace", action="store_true",
                    help="after each import (with --hash-vectors or --load-vectors), import the same document "
                         "again with --replace: a staged version written in batches, the switch, the old "
                         "version deleted in batches")
    ap.add_argument("--keep-server", action="store_true", help="leave the server running")
    ap.add_argument("--out", type=Path, required=True, help="JSON results file")
    args = ap.parse_args(argv)
    if args.port in PROTECTED_PORTS:
        ap.error(f"port {args.port} belongs to someone else")

    conf = [] if args.default_conf else (args.conf or DEFAULT_CONF)
    server = LocalServer(args.data_dir, bolt_port=args.port, http_port=None)
    server.stop()
    shutil.rmtree(server.home / "data", ignore_errors=True)  # a fresh database; keep the jars
    server.home.mkdir(parents=True, exist_ok=True)
    if conf:
        server.local_conf.write_text("\n".join(conf) + "\n")
    else:
        server.local_conf.unlink(missing_ok=True)
    loads = [load_average()]
    print(f"starting Neo4j {server.version} in {args.data_dir} on port {args.port} ({conf or 'defaults'})",
          flush=True)
    uri = server.start(timeout=300)
    jvm_pid = server.status()["pid"]

    t0 = time.perf_counter()
    doc = synthetic_memory("bench-10k", n_items=args.items, n_scenes=args.scenes,
                           horizon_per_scene=args.horizon)
    parsed = parse_document(doc)[0]
    counts = parsed.counts()
    gen_s = time.perf_counter() - t0
    objects = sum(counts.values())
    print(f"document: {counts} = {objects:,} objects (built and validated in {gen_s:.1f} s)", flush=True)

    settings = Settings.from_env(uri=uri)
    store = Store(settings)
    timed = TimedStore(store)
    real = get_encoder(settings.encoder)
    store.apply_schema(real.dim)
    rss_before = proc_status("self", "VmRSS")["VmRSS"]

    runs = []
    error = None
    writes_profile = None
    try:
        if args.profile_writes:
            if not args.load_vectors:
                raise SystemExit("--profile-writes needs --load-vectors")
            print("profiling the write queries in one transaction (rolled back):", flush=True)
            writes_profile = profile_writes(store, parsed, ReplayEncoder(real, load_vectors(args.load_vectors)))
        for n in range(args.runs):
            if args.load_vectors or args.hash_vectors:  # only (2): the database side
                memo = load_vectors(args.load_vectors) if args.load_vectors else HashVectors(real.dim)
                if store.exists(parsed.memory_id):
                    store.drop(parsed.memory_id)
                replay = ReplayEncoder(real, memo)
                timed.reset()
                loads.append(load_average())
                t0 = time.perf_counter()
                import_memory(parsed, store=store, encoder=replay, replace=True)
                no_enc = time.perf_counter() - t0
                loads.append(load_average())
                print(f"run {n + 1}: without encoder {no_enc:.1f} s (transaction {timed.tx_s:.1f} s "
                      f"incl. commit {timed.commit_s:.1f} s)", flush=True)
                runs.append({"without_encoder_s": no_enc, "without_encoder_transaction_s": timed.tx_s,
                             "without_encoder_commit_s": timed.commit_s,
                             "without_encoder_write_queries_s": dict(timed.queries),
                             "db_counts": store.counts(parsed.memory_id)})
                if args.replace:   # the same document over the memory: a staged version, then the switch
                    timed.reset()
                    t0 = time.perf_counter()
                    import_memory(parsed, store=store, encoder=replay, replace=True)
                    runs[-1].update({"replace_s": time.perf_counter() - t0, "replace_transaction_s": timed.tx_s,
                                     "replace_write_queries_s": dict(timed.queries),
                                     "replace_db_counts": store.counts(store.memory(parsed.memory_id)["pid"]),
                                     "replace_nodes_left": _nodes(store)})
                    loads.append(load_average())
                    print(f"run {n + 1}: replaced in {runs[-1]['replace_s']:.1f} s (staged writes and the old "
                          f"version's deletion); {runs[-1]['replace_nodes_left']:,} nodes in the database", flush=True)
                continue
            # (1) with the encoder
            if store.exists(parsed.memory_id):
                store.drop(parsed.memory_id)
            enc = TimingEncoder(real)
            timed.reset()
            loads.append(load_average())
            t0 = time.perf_counter()
            import_memory(parsed, store=store, encoder=enc, replace=True)
            with_enc = time.perf_counter() - t0
            t1 = time.perf_counter()
            with store.session("READ") as s:
                s.run("CALL db.awaitIndexes(3600)").consume()
            await_s = time.perf_counter() - t1
            db_queries = dict(timed.queries)
            commit1, tx1 = timed.commit_s, timed.tx_s
            loads.append(load_average())
            print(f"run {n + 1}: with encoder {with_enc:.1f} s (encode {enc.seconds:.1f} s of "
                  f"{enc.texts:,} texts; transaction {tx1:.1f} s incl. commit {commit1:.1f} s)", flush=True)
            db_counts = store.counts(parsed.memory_id)
            if args.save_vectors:
                save_vectors(args.save_vectors, enc.memo)

            # (2) drop, then the same import with replayed vectors
            t0 = time.perf_counter()
            dropped = store.drop(parsed.memory_id)
            drop_s = time.perf_counter() - t0
            replay = ReplayEncoder(real, enc.memo)
            timed.reset()
            t0 = time.perf_counter()
            import_memory(parsed, store=store, encoder=replay, replace=True)
            no_enc = time.perf_counter() - t0
            loads.append(load_average())
            print(f"run {n + 1}: drop {drop_s:.1f} s ({dropped:,} nodes); without encoder {no_enc:.1f} s "
                  f"(transaction {timed.tx_s:.1f} s incl. commit {timed.commit_s:.1f} s)", flush=True)
            runs.append({
                "with_encoder_s": with_enc, "encode_s": enc.seconds, "distinct_texts": enc.texts,
                "with_encoder_minus_encode_s": with_enc - enc.seconds,
                "transaction_s": tx1, "commit_s": commit1, "await_indexes_after_s": await_s,
                "write_queries_s": db_queries,
                "drop_s": drop_s, "dropped_nodes": dropped,
                "without_encoder_s": no_enc, "without_encoder_transaction_s": timed.tx_s,
                "without_encoder_commit_s": timed.commit_s,
                "without_encoder_write_queries_s": dict(timed.queries),
                "db_counts": db_counts,
            })
    except Exception as exc:  # e.g. the server's transaction memory limit: report it
        error = f"{type(exc).__name__}: {exc}"[:2000]
        print(f"import failed: {error}", flush=True)
    finally:
        py_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        try:
            jvm = proc_status(jvm_pid, "VmHWM", "VmRSS")
        except OSError:
            jvm = {}
        store.close()
        db_bytes = du(server.home / "data")
        if not args.keep_server:
            server.stop()
        loads.append(load_average())

    def med(key):
        xs = [r[key] for r in runs if key in r]
        return statistics.median(xs) if xs else None

    def per_s(seconds):
        return objects / seconds if seconds else None

    m = {
        "with_encoder_s": med("with_encoder_s"), "encode_s": med("encode_s"),
        "with_encoder_minus_encode_s": med("with_encoder_minus_encode_s"),
        "without_encoder_s": med("without_encoder_s"),
        "objects_per_s_with_encoder": per_s(med("with_encoder_s")),
        "objects_per_s_without_encoder": per_s(med("without_encoder_s")),
        "objects_per_s_with_encoder_minus_encode": per_s(med("with_encoder_minus_encode_s")),
        "encoder_share": med("encode_s") / med("with_encoder_s") if med("encode_s") else None,
        "texts_per_s_encoder": med("distinct_texts") / med("encode_s") if med("encode_s") else None,
    }
    result = {
        "benchmark": "import_throughput", "neo4j_version": server.version,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0]},
        "neo4j_local_conf": conf or (f"LocalServer defaults (heap {server.heap_initial}-{server.heap_max}, "
                                     f"page cache {server.pagecache}, tx memory {server.transaction_max})"),
        "encoder": real.name, "encode_batch": settings.encode_batch,
        "vectors": f"replayed from {args.load_vectors}" if args.load_vectors else "encoded",
        "document": {"memory_id": parsed.memory_id, "counts": counts, "objects": objects,
                     "build_and_validate_s": gen_s},
        "runs": runs, "error": error, "median": m, "profile_writes": writes_profile,
        "python_peak_rss_bytes": py_peak, "python_rss_after_model_load_bytes": rss_before,
        "jvm_peak_rss_bytes": jvm.get("VmHWM"), "jvm_rss_end_bytes": jvm.get("VmRSS"),
        "db_bytes_on_disk": db_bytes,
        "load_average_1_5_15": loads,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")

    print(f"\nNeo4j {server.version}, {os.cpu_count()} CPUs, settings: {result['neo4j_local_conf']}")
    print(f"load average during the run: {loads}")
    print(f"document: {counts}, {objects:,} objects\n")
    if error:
        print(f"FAILED: {error}\n")
    print(f"| measure (median of {len(runs)} run(s)) | value |")
    print("| --- | ---: |")
    if m["with_encoder_s"]:
        print(f"| import with encoder | {m['with_encoder_s']:.1f} s = "
              f"{m['objects_per_s_with_encoder']:,.0f} objects/s |")
        print(f"| of which encoding ({med('distinct_texts'):,} distinct texts, "
              f"{m['texts_per_s_encoder']:,.0f} texts/s) | {m['encode_s']:.1f} s ({100 * m['encoder_share']:.0f} %) |")
        print(f"| with encoder minus encoding | {m['with_encoder_minus_encode_s']:.1f} s = "
              f"{m['objects_per_s_with_encoder_minus_encode']:,.0f} objects/s |")
    if m["without_encoder_s"]:
        print(f"| import without encoder (replayed vectors, measured) | {m['without_encoder_s']:.1f} s = "
              f"{m['objects_per_s_without_encoder']:,.0f} objects/s |")
        print(f"| of which the one transaction / its commit | {med('without_encoder_transaction_s'):.1f} s / "
              f"{med('without_encoder_commit_s'):.1f} s |")
    if med("drop_s"):
        print(f"| drop of the memory | {med('drop_s'):.1f} s |")
    print(f"| Python peak RSS (ru_maxrss) | {mib(py_peak)} (after model load: {mib(rss_before)}) |")
    print(f"| Neo4j JVM peak RSS (VmHWM) | {mib(jvm.get('VmHWM', 0))} |")
    print(f"| database on disk | {mib(db_bytes)} |")
    for key, what in (("write_queries_s", "with encoder"), ("without_encoder_write_queries_s", "replayed")):
        if runs and key in runs[0]:
            print(f"\nwrite queries inside the transaction (s, import {what}):")
            for name, sec in sorted(runs[0][key].items(), key=lambda kv: -kv[1]):
                print(f"  {name:32s} {sec:7.1f}")
    print(f"\nJSON: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
