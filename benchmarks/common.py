"""What the kit's commands share: the machine's state beside each figure, process sizes,
percentiles, the queries, and `tmem serve` started from a checkout."""

from __future__ import annotations

import contextlib
import os
import random
import socket
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages (a noisy machine shows here)."""
    return [round(x, 2) for x in os.getloadavg()]


def du(path: Path) -> int:
    """Bytes of every file under `path` (files that vanish meanwhile are skipped)."""
    total = 0
    for root, _, files in os.walk(path):
        for f in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(root, f)).st_size
    return total


def proc_status(pid: int | str, *keys: str) -> dict[str, int]:
    """Selected kB fields of /proc/<pid>/status (VmRSS, VmHWM, …), in bytes; {} if it is gone."""
    out = {}
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            k, _, v = line.partition(":")
            if k in keys:
                out[k] = int(v.split()[0]) * 1024
    return out


def pct(values: list[float], p: float) -> float:
    """The p-th percentile (0-100) by linear interpolation; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low = int(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summary(values: list[float]) -> dict:
    """n, p50, p95 and max of some timings."""
    return {"n": len(values), "p50": pct(values, 50), "p95": pct(values, 95), "max": pct(values, 100)}


def locomo_queries(sample_id: str, count: int, plus_base: str | None = None) -> list[str]:
    """The first `count` LoCoMo questions of `sample_id`, interleaved with the first `count`
    LoCoMo-Plus dev probes of `plus_base` when given (their queries are the weak matches), so
    that both kinds see the same load."""
    from tmem_graph.evaluate import data as ev

    samples = ev.load(ev.data_dir() / "locomo10.json")
    sample = next(s for s in samples if s["sample_id"] == sample_id)
    questions = [q["question"] for q in sample["qa"]][:count]
    if plus_base:
        probes = [p.query for p in ev.base_probes(ev.load(ev.data_dir() / "locomo_plus_dev.json"), samples,
                                                  plus_base)][:count]
        questions = [q for pair in zip(questions, probes) for q in pair]
    return questions


def own_texts(doc: dict, n: int) -> list[str]:
    """`n` texts of a memory document's turns and as many of its items, drawn with a fixed seed."""
    rng = random.Random(5)
    return ([t["text"] for t in rng.sample(doc["turns"], min(n, len(doc["turns"])))]
            + [i["text"] for i in rng.sample(doc["items"], min(n, len(doc["items"])))])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(checkout: Path, port: int | None = None, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """`tmem serve` (no build worker) run by the code of `checkout`; its process and base URL,
    once it answers."""
    from tests.fixtures.processes import wait_for_http

    port = port or free_port()
    proc = subprocess.Popen([sys.executable, "-m", "tmem_graph.cli", "serve", "--port", str(port), "--no-worker"],
                            cwd=checkout, env={**os.environ, **(env or {}), "PYTHONPATH": str(checkout)},
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    wait_for_http(url + "/health", proc)
    return proc, url


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(timeout=60)
