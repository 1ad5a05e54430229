"""Helpers every benchmark shares: the machine's state recorded beside each figure, sizes on
disk and in memory, and percentiles."""

from __future__ import annotations

import contextlib
import os
import platform
import statistics
import sys
from pathlib import Path


def load_average() -> list[float]:
    """The 1-, 5- and 15-minute load averages (a noisy machine shows here)."""
    return [round(x, 2) for x in os.getloadavg()]


def machine() -> dict:
    return {"cpus": os.cpu_count(), "platform": platform.platform(), "python": sys.version.split()[0],
            "mem_total_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)}


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


def median(values: list[float]) -> float:
    return statistics.median(values) if values else float("nan")


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
