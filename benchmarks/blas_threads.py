"""The MPNet encoder's BLAS threads (docs/encoders.md): the first 32 LoCoMo questions of conv-26
encoded in one batch with the encoder's OpenBLAS limit set to N threads, after one warm-up.

    for n in 1 2 1 2; do python -m benchmarks.blas_threads $n; done   # beside a local LLM build
"""

from __future__ import annotations

import sys
import time

from tmem_graph.encode import mpnet
from tmem_graph.evaluate import data as ev


def main() -> None:
    mpnet.BLAS_THREADS = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    encoder = mpnet.MPNetEncoder()
    sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == "conv-26")
    questions = [q["question"] for q in sample["qa"]][:32]
    encoder.encode(questions[:2])
    started = time.perf_counter()
    encoder.encode(questions)
    print(f"{mpnet.BLAS_THREADS} BLAS thread(s): 32 questions in {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
