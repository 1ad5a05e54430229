"""The encoding share of the 10,000-item import (benchmarks/import_throughput.py), per encoder,
side by side in one run: every distinct text that import encodes, encoded by each encoder in
a fresh process of its own, in the import's batches (`Settings.encode_batch`), twice each,
alternating which goes first.

    python -m benchmarks.encode_throughput --python /work/main/.venv/bin/python --out /tmp/encode.json

The rest of the import (the write queries and the commit) does not depend on the encoder.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

from benchmarks._common import load_average, machine

HERE = Path(__file__).parents[1]

PROBE = r'''
import json, sys, time
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph.config import Settings
from tmem_graph.format import parse_document
from tmem_graph.transfer import memory_rows
doc = parse_document(synthetic_memory("bench-10k", n_items=int(sys.argv[2]), n_scenes=int(sys.argv[3]),
                                      horizon_per_scene=4))[0]


class Capture:  # the texts the import would encode, in its order, each once
    name, dim, texts = "capture", 384, []

    def encode(self, texts, batch_size=64):
        self.texts = list(texts)
        return [[0.0] * self.dim for _ in texts]


capture = Capture()
memory_rows(doc, capture, 64)
texts = capture.texts
t0 = time.perf_counter()
from tmem_graph.encode import get_encoder
enc = get_encoder(sys.argv[1])
t1 = time.perf_counter()
enc.encode(texts, batch_size=Settings.from_env().encode_batch)
t2 = time.perf_counter()
print(json.dumps({"backend": type(enc).__name__, "texts": len(texts), "load_s": t1 - t0, "encode_s": t2 - t1}))
'''


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="a venv with both encoder backends")
    ap.add_argument("--encoder", action="append", default=None)
    ap.add_argument("--items", type=int, default=10000)
    ap.add_argument("--scenes", type=int, default=1250)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    names = args.encoder or ["sentence-transformers/all-MiniLM-L6-v2", "all-MiniLM-L6-v2"]
    result = {"machine": machine(), "load_before": load_average(), "runs": []}
    for n in range(args.rounds):
        for name in (names if n % 2 == 0 else names[::-1]):
            out = subprocess.run([args.python, "-c", PROBE, name, str(args.items), str(args.scenes)],
                                 capture_output=True, text=True, cwd=str(HERE), env=dict(os.environ, PYTHONPATH=str(HERE)))
            if out.returncode != 0:
                raise SystemExit(f"{name}: {out.stderr[-800:]}")
            row = {"encoder": name, **json.loads(out.stdout.strip().splitlines()[-1]), "load": load_average()}
            row["texts_per_s"] = row["texts"] / row["encode_s"]
            result["runs"].append(row)
            print(f"{name} ({row['backend']}): {row['texts']} texts in {row['encode_s']:.0f} s "
                  f"= {row['texts_per_s']:.0f} texts/s (load {row['load']})", flush=True)
    result["load_after"] = load_average()
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
