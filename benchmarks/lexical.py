"""Per-memory BM25 (tmem_graph/retrieve/lexical.py): what its stemmer buys, and what loading a
memory's Lexicon costs.

    python -m benchmarks.lexical stemming     # LoCoMo, all ten conversations: BM25 over turns
    python -m benchmarks.lexical load --memory conv26-full --memory conv47-strong

`stemming`: for each LoCoMo question (categories 1-4, repaired evidence), BM25 over the turns of
its conversation ranks them; the share of its evidence turns within the first 5 / 10 / 20, with
the Porter stems recall uses and with the same analysis unstemmed. No database, no encoder.
`load`: the `retrieve/lexicon` query and the Lexicon's build, each the median of 5 runs.
Figures in docs/retrieval.md ("Lexical ranking").
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

from tmem_graph.config import Settings
from tmem_graph.evaluate.data import EvidenceRepairs, data_dir, load, locomo_qas
from tmem_graph.retrieve import lexical
from tmem_graph.store import Store

DEPTHS = (5, 10, 20)


def conversation_turns(sample: dict) -> list[tuple[str, str]]:
    conv = sample["conversation"]
    return [(t["dia_id"], t.get("text", "")) for key, turns in conv.items()
            if key.startswith("session_") and isinstance(turns, list) for t in turns]


def stemming() -> None:
    porter = lexical.stem
    found = defaultdict(lambda: defaultdict(float))
    questions = 0
    for sample in load(data_dir() / "locomo10.json"):
        turns = conversation_turns(sample)
        qas = locomo_qas(sample, EvidenceRepairs())
        questions += len(qas)
        for name, stem in (("stemmed", porter), ("unstemmed", lambda w: w)):
            lexical.stem = stem   # the analysis with and without its last step
            lexical.counted.cache_clear()   # texts analysed the other way are kept there
            index = lexical.Bm25(((i, {"text": t}) for i, t in turns), {"text": 1.0})
            for qa in qas:
                ranked = [k for k, _ in index.rank(lexical.query_terms(qa.question))]
                for depth in DEPTHS:
                    found[name][depth] += len(set(ranked[:depth]) & set(qa.evidence)) / len(qa.evidence)
        lexical.stem = porter
        lexical.counted.cache_clear()
    print(f"LoCoMo, 10 conversations, {questions} questions: evidence turns ranked by BM25 over the turns")
    print("| analysis | " + " | ".join(f"R@{d}" for d in DEPTHS) + " |")
    print("|---|" + "---|" * len(DEPTHS))
    for name in ("stemmed", "unstemmed"):
        print(f"| {name} | " + " | ".join(f"{found[name][d] / questions:.3f}" for d in DEPTHS) + " |")


def load_cost(memories: list[str]) -> None:
    print("| memory | objects | query ms | build ms |")
    print("|---|---|---|---|")
    with Store(Settings.from_env()) as store:
        for memory_id in memories:
            fetch, build = [], []
            for _ in range(5):
                t0 = time.perf_counter()
                row = store.run("retrieve/lexicon", memory_id=store.memory(memory_id)["pid"])[0]
                t1 = time.perf_counter()
                lexicon = lexical.build(row)
                fetch.append((t1 - t0) * 1000)
                build.append((time.perf_counter() - t1) * 1000)
            print(f"| {memory_id} | {lexicon.size} | {statistics.median(fetch):.1f} | {statistics.median(build):.1f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("stemming")
    cost = sub.add_parser("load")
    cost.add_argument("--memory", action="append", required=True)
    args = ap.parse_args()
    if args.command == "stemming":
        stemming()
    else:
        load_cost(args.memory)


if __name__ == "__main__":
    main()
