"""Does one import of a 5,000-item memory fit in the local server's transaction memory?

`synthetic_memory('bench-5k', n_items=5000, n_scenes=625, horizon_per_scene=4)` is imported by
`api.import_memory` (one transaction) into a fresh local server on its own port and data
directory, with server settings given as `--conf key=value` (none: `LocalServer`'s defaults).
The vectors are computed once with the real encoder (`encode`) and replayed, so a run times
the database write alone; it records the outcome (or the error's first line), the wall time,
the JVM's peak RSS and the load:

    python -m benchmarks.import_5k encode
    python -m benchmarks.import_5k run old --port 7710 --conf server.memory.heap.max_size=1g \\
        --conf dbms.memory.transaction.total.max=512m
    python -m benchmarks.import_5k run new --port 7711

Figures in docs/benchmarks.md ("Transaction memory").
"""

from __future__ import annotations

import argparse
import json
import shutil
import time
from pathlib import Path

from benchmarks._common import load_average, proc_status
from benchmarks.import_throughput import ReplayEncoder, TimingEncoder, load_vectors, save_vectors
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.encode import get_encoder
from tmem_graph.errors import TmemError
from tmem_graph.format import parse_document
from tmem_graph.local.neo4j import LocalServer
from tmem_graph.transfer import memory_rows

PROTECTED_PORTS = {7687, 7688, 7689}  # the developer's and the test suite's servers


def document() -> dict:
    return synthetic_memory("bench-5k", n_items=5000, n_scenes=625, horizon_per_scene=4)


def encode(vectors: Path) -> None:
    encoder = TimingEncoder(get_encoder(Settings().encoder))
    t0 = time.perf_counter()
    memory_rows(parse_document(document())[0], encoder, Settings().encode_batch)  # every text the import encodes
    print(f"encoded {len(encoder.memo):,} distinct texts in {time.perf_counter() - t0:.1f} s")
    save_vectors(vectors, encoder.memo)


def run(label: str, port: int, conf: list[str], root: Path, vectors: Path) -> dict:
    if port in PROTECTED_PORTS:
        raise SystemExit(f"port {port} belongs to another server; choose another")
    data_dir = root / f"data-{label}"
    shutil.rmtree(data_dir, ignore_errors=True)
    server = LocalServer(data_dir, bolt_port=port, http_port=None)
    server.home.mkdir(parents=True, exist_ok=True)
    if conf:
        server.local_conf.write_text("\n".join(conf) + "\n")
    real = get_encoder(Settings().encoder)
    replay = ReplayEncoder(real, load_vectors(vectors))
    result = {"label": label, "port": port, "conf": conf or "LocalServer defaults"}
    settings = Settings(uri=server.start(timeout=600))
    pid = int(server.pid_file.read_text().strip())
    try:
        api.apply_schema(settings, encoder=real)
        result["load_start"] = load_average()
        t0 = time.perf_counter()
        try:
            memory, _ = api.import_memory(document(), settings, encoder=replay)
            result.update(ok=True, counts=memory.stats() if hasattr(memory, "stats") else None)
            memory.close()
        except TmemError as exc:
            result.update(ok=False, error=f"{type(exc).__name__}: {str(exc).splitlines()[0]}")
        result["wall_s"] = round(time.perf_counter() - t0, 1)
        result["load_end"] = load_average()
        result["jvm"] = proc_status(pid, "VmHWM", "VmRSS")
    finally:
        server.stop()
        shutil.rmtree(data_dir, ignore_errors=True)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cmd", choices=["encode", "run"])
    ap.add_argument("label", nargs="?", default="run")
    ap.add_argument("--port", type=int, default=7710)
    ap.add_argument("--conf", action="append", default=[], help="a neo4j.local.conf line, key=value")
    ap.add_argument("--root", type=Path, default=Path("/tmp/bench-5k"), help="data directories and vectors")
    args = ap.parse_args()
    args.root.mkdir(parents=True, exist_ok=True)
    vectors = args.root / "vectors.npz"
    if args.cmd == "encode":
        encode(vectors)
        return
    result = run(args.label, args.port, args.conf, args.root, vectors)
    print(json.dumps(result, indent=2, default=str))
    (args.root / f"result-{args.label}.json").write_text(json.dumps(result, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
