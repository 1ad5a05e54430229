"""Start-up and encoding cost, the old way and the new way, measured side by side in one run.

1. `tmem recall MEMORY QUERY` from a shell, `--runs` times each, old and new interleaved: wall
   time of the whole process, and the "encoding" it prints (loading the encoder included).
   OLD is a checkout of the code before the change run by a venv with PyTorch
   (`--old-python`, `--old-code`); NEW is this checkout run by the light venv (`--new-python`).
2. The encoders alone, each in fresh processes (cold imports): import, load, one query (p50 of
   40), and a batch of LoCoMo turns (conv-26, read in place), for every `--encoder` name, run
   by `--encoder-python` (a venv that has both backends).

    python -m benchmarks.startup --old-python /work/main/.venv/bin/python --old-code /work/old \\
        --new-python /work/venv-light/bin/python --memory team-dinner \\
        --encoder-python /work/main/.venv/bin/python --out /tmp/startup.json

The server named by NEO4J_URI (default the local one) must hold MEMORY.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import time
from pathlib import Path

from benchmarks._common import load_average, machine

HERE = Path(__file__).parents[1]
QUERY = "Can you suggest a good sushi place for our group outing?"
ENCODING = re.compile(r"of which encoding ([\d.]+) ms")

PROBE = r'''
import json, sys, time
t0 = time.perf_counter()
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate.data import data_dir, load
t1 = time.perf_counter()
enc = get_encoder(sys.argv[1])
t2 = time.perf_counter()
queries = ["Where should we take the team for dinner?", "When did Bob adopt his greyhound?",
           "What does Melanie paint?", "Who is moving in next month?"]
one = []
for n in range(40):
    a = time.perf_counter(); enc.encode([queries[n % 4]]); one.append((time.perf_counter() - a) * 1000)
sample = next(s for s in load(data_dir() / "locomo10.json") if s["sample_id"] == "conv-26")
turns = [t["text"] for k, v in sample["conversation"].items() if k.startswith("session_") and isinstance(v, list) for t in v]
batch = {}
for size in (16, 64):
    a = time.perf_counter(); enc.encode(turns, batch_size=size); batch[size] = time.perf_counter() - a
print(json.dumps({"import_s": t1 - t0, "load_s": t2 - t1, "query_ms": one, "turns": len(turns),
                  "batch_s": batch, "backend": type(enc).__name__}))
'''


def recall_once(python: str, code: Path | None, memory: str) -> tuple[float, float | None]:
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)  # ahead of the editable install's path
    t0 = time.perf_counter()
    out = subprocess.run([python, "-m", "tmem_graph.cli", "recall", memory, QUERY, "--k-scenes", "2",
                          "--k-items", "3"], capture_output=True, text=True, env=env, cwd="/")
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        raise SystemExit(f"recall failed ({python}): {out.stderr[-800:]}")
    found = ENCODING.search(out.stdout)
    return wall, float(found.group(1)) if found else None


def which_code(python: str, code: Path | None) -> str:
    env = dict(os.environ, **({"PYTHONPATH": str(code)} if code else {}))
    return subprocess.run([python, "-c", "import tmem_graph, os; print(os.path.dirname(tmem_graph.__file__))"],
                          capture_output=True, text=True, env=env, cwd="/").stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old-python", required=True)
    ap.add_argument("--old-code", type=Path, required=True, help="a checkout of the code before the change")
    ap.add_argument("--new-python", required=True)
    ap.add_argument("--memory", default="team-dinner")
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--encoder-python", help="a venv with both encoder backends")
    ap.add_argument("--encoder", action="append",
                    default=None, help="encoder names (default: the ONNX and the PyTorch MiniLM)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    result = {"machine": machine(), "load_before": load_average(), "query": QUERY,
              "old": {"python": args.old_python, "code": which_code(args.old_python, args.old_code)},
              "new": {"python": args.new_python, "code": which_code(args.new_python, None)}}
    print(f"old code {result['old']['code']}, new code {result['new']['code']}", flush=True)
    for side, python, code in (("old", args.old_python, args.old_code), ("new", args.new_python, None)):
        recall_once(python, code, args.memory)  # warm the OS file cache once, unmeasured
    walls: dict[str, list[float]] = {"old": [], "new": []}
    encodes: dict[str, list[float]] = {"old": [], "new": []}
    for n in range(args.runs):
        order = (("old", args.old_python, args.old_code), ("new", args.new_python, None))
        for side, python, code in (order if n % 2 == 0 else order[::-1]):
            wall, enc = recall_once(python, code, args.memory)
            walls[side].append(wall)
            if enc is not None:
                encodes[side].append(enc)
        print(f"run {n + 1}: old {walls['old'][-1]:.2f} s, new {walls['new'][-1]:.2f} s", flush=True)
    for side in ("old", "new"):
        result[side].update(wall_s=walls[side], wall_median_s=statistics.median(walls[side]),
                            encoding_median_ms=statistics.median(encodes[side]) if encodes[side] else None)
    result["ratio_new_old"] = result["new"]["wall_median_s"] / result["old"]["wall_median_s"]
    print(f"tmem recall, median of {args.runs}: old {result['old']['wall_median_s']:.2f} s, "
          f"new {result['new']['wall_median_s']:.2f} s (ratio {result['ratio_new_old']:.2f})", flush=True)
    if args.encoder_python:
        result["encoders"] = {}
        for name in args.encoder or ["all-MiniLM-L6-v2", "sentence-transformers/all-MiniLM-L6-v2"]:
            out = subprocess.run([args.encoder_python, "-c", PROBE, name], capture_output=True, text=True,
                                 cwd=str(HERE), env=dict(os.environ, PYTHONPATH=str(HERE)))
            if out.returncode != 0:
                raise SystemExit(f"encoder {name} failed: {out.stderr[-800:]}")
            row = json.loads(out.stdout.strip().splitlines()[-1])
            row["query_ms_p50"] = statistics.median(row["query_ms"][5:])
            result["encoders"][name] = row
            print(f"{name} ({row['backend']}): import {row['import_s']:.2f} s, load {row['load_s']:.2f} s, "
                  f"one query p50 {row['query_ms_p50']:.1f} ms, {row['turns']} turns in "
                  + ", ".join(f"{v:.2f} s at batch {k}" for k, v in row["batch_s"].items()), flush=True)
    result["load_after"] = load_average()
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
