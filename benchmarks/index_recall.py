"""How much of a memory's exact rankings recall's index searches return.

For each memory, `--queries` of its own item and turn texts (encoded with its encoder) are
searched in each vector index recall uses, filtered to the memory, asking
for `k × f` entries for each over-fetch factor `f`; recall@k is the share of the exact top k
(every entry's cosine, in Cypher) that the search's first k hold. The BM25 rankings of
`retrieve/rankings` are held to `lexical.Bm25` over every text of the memory the same way, at
the over-fetch recall uses (`cascade.BM25_OVERFETCH`). The index settings are printed too:

    python -m benchmarks index-recall --memory conv26-full --queries 20 --factor 1 --factor 2
"""

from __future__ import annotations

import argparse
import math
import random
import statistics
import time

from tmem_graph.config import RetrievalSettings, Settings
from tmem_graph.retrieve import cascade
from tmem_graph.retrieve.lexical import KINDS, Bm25, query_terms
from tmem_graph.encode import get_encoder
from tmem_graph.store import Store

# what recall asks each ranking for by default: (label, property, family, k, index); a scene's
# Horizon vector is one component longer than the encoder's (store/scene_horizon: the query gets a 0)
RANKINGS = {
    "topic_embedding": ("Topic", "embedding", None, 50, "topic_embedding"),
    "scene_dialogue_embedding": ("Scene", "dialogue_embedding", None, 50, "scene_dialogue_embedding"),
    "turn_embedding": ("Turn", "passage_embedding", None, 80, "turn_embedding"),
    "item_embedding": ("Item", "embedding", None, 50, "item_embedding"),
    "item views": ("ItemView", "embedding", None, 80, "item_view_embedding"),
    "scene views": ("SceneView", "embedding", None, 200, "scene_trigger_view_embedding"),
    "scene_horizon_embedding": ("Scene", "horizon_embedding", None, 1000, "scene_horizon_embedding"),
}


def search(label: str, index: str, family: str | None) -> str:
    """The index search of one ranking: an index or label name cannot be a parameter (these are
    fixed names, no value)."""
    return ("CYPHER 25 MATCH (n:" + label + ") SEARCH n IN (VECTOR INDEX " + index + " FOR $vector WHERE "
            "n.memory_id = $memory_id" + (" AND n.family = $family" if family else "") + " LIMIT $fetch) "
            "SCORE AS score RETURN elementId(n) AS id, score ORDER BY score DESC LIMIT $k")


EXACT = """MATCH (n:$($label) {memory_id: $memory_id})
WHERE ($family IS NULL OR n.family = $family) AND size(n[$prop]) = size($vector)
WITH n, vector.similarity.cosine(n[$prop], $vector) AS score
RETURN elementId(n) AS id, score ORDER BY score DESC LIMIT $k"""
COUNT = """MATCH (n:$($label) {memory_id: $memory_id})
WHERE ($family IS NULL OR n.family = $family) AND size(n[$prop]) = $dim RETURN count(*) AS held"""


def queries(store: Store, memory_id: str, n: int, seed: int) -> list[str]:
    """`n` texts of the memory's items and turns, drawn at random."""
    with store.session("READ") as s:
        texts = [r["t"] for r in s.run("MATCH (n:Item|Turn {memory_id: $m}) WHERE n.text IS NOT NULL "
                                         "RETURN n.text AS t LIMIT 20000", m=memory_id)]
    return random.Random(seed).sample(texts, min(n, len(texts)))


def measure(store: Store, memory_id: str, n: int, factors: list[float], seed: int) -> None:
    header = store.memory(memory_id)
    encoder = get_encoder(header["encoder"])
    pid = header["pid"]   # the id its objects carry (a replaced memory's staged version)
    vectors = encoder.encode(queries(store, pid, n, seed))
    if not vectors:
        raise SystemExit(f"{memory_id}: no item or turn text to draw queries from")
    print(f"\n{memory_id} ({header['encoder']}, {len(vectors)} queries)")
    print(f"{'ranking':26} {'held':>7} {'k':>5} " + " ".join(f"{'f=' + str(f):>16}" for f in factors) + f" {'exact ms':>9}")
    with store.session("READ") as s:
        for name, (label, prop, family, k, index) in RANKINGS.items():
            longer = [0.0] if prop == "horizon_embedding" else []
            held = s.run("CYPHER 25 " + COUNT, label=label, memory_id=pid, family=family, prop=prop,
                         dim=header["dim"] + len(longer)).single()["held"]
            if not held:
                continue
            kk = min(k, held)
            cells, exact_ms = [], []
            truth = []
            for v in vectors:
                v = [*v, *longer]
                t0 = time.perf_counter()
                truth.append({r["id"] for r in s.run("CYPHER 25 " + EXACT, label=label, memory_id=pid, family=family,
                                                      prop=prop, vector=v, k=kk)})
                exact_ms.append((time.perf_counter() - t0) * 1000)
            for f in factors:
                fetch = min(held, math.ceil(kk * f))
                shares, took = [], []
                for v, want in zip(vectors, truth):
                    t0 = time.perf_counter()
                    got = {r["id"] for r in s.run(search(label, index, family), memory_id=pid, family=family,
                                                  vector=[*v, *longer],
                                                  fetch=fetch, k=kk)}
                    took.append((time.perf_counter() - t0) * 1000)
                    shares.append(len(got & want) / len(want) if want else 1.0)
                cells.append(f"{statistics.mean(shares):.4f}/{min(shares):.2f} {statistics.median(took):4.0f}ms")
            print(f"{name:26} {held:>7} {kk:>5} " + " ".join(f"{c:>16}" for c in cells)
                  + f" {statistics.median(exact_ms):>9.0f}")


TEXTS = """MATCH (m:Memory {id: $memory_id})
RETURN COLLECT { MATCH (t:Topic {memory_id: $memory_id}) RETURN [t.id, t.title, t.keywords_text, t.summary] } AS topics,
       COLLECT { MATCH (s:Scene {memory_id: $memory_id}) RETURN [s.id, s.title, s.summary, s.narrative, s.text] } AS scenes,
       COLLECT { MATCH (i:Item {memory_id: $memory_id}) RETURN [i.id, i.text] } AS items,
       COLLECT { MATCH (t:Turn {memory_id: $memory_id}) WHERE EXISTS { MATCH (:Scene)-[:HAS_TURN]->(t) }
                 RETURN [t.id, t.text] } AS turns"""


def measure_bm25(store: Store, memory_id: str, n: int, seed: int) -> None:
    """recall@k of each BM25 ranking of `retrieve/rankings` against `lexical.Bm25` over every text."""
    header = store.memory(memory_id)
    pid = header["pid"]
    texts = [" ".join(t.split()[:12]) for t in queries(store, pid, n, seed)]
    with store.session("READ") as s:
        row = s.run(TEXTS, memory_id=pid).single()
    exact = {kind: Bm25(((r[0], dict(zip(boosts, r[1:]))) for r in row[f"{kind}s"]), boosts)
             for kind, boosts in KINDS.items()}
    run = cascade.Cascade(store, RetrievalSettings(budget_tokens=2000))   # the turn lane too (k = 80)
    stats = run.statistics(pid, None)
    vector = [1.0] + [0.0] * (header["dim"] - 1)
    names = {"topic": "topic_bm25", "scene": "scene_bm25", "item": "item_bm25", "turn": "lane_bm25"}
    shares: dict[str, list[float]] = {kind: [] for kind in KINDS}
    took = []
    for text in texts:
        terms = query_terms(text)
        params = run._ranking_params(pid, text, terms, stats, vector, None, frozenset())
        t0 = time.perf_counter()
        got = store.run("retrieve/rankings", **params, past_commit=True)[0]
        took.append((time.perf_counter() - t0) * 1000)
        for kind, name in names.items():
            want = {key for key, _ in exact[kind].rank(terms, params["bm25"][kind]["k"])}
            shares[kind].append(len(set(got[f"{name}_ids"]) & want) / len(want) if want else 1.0)
    print(f"\n{memory_id} BM25 ({len(texts)} queries, over-fetch {cascade.BM25_OVERFETCH}): recall@k against "
          f"every text; rankings query median {statistics.median(took):.0f} ms\n")
    print("| ranking | mean | min |\n|---|---|---|")
    for kind in KINDS:
        print(f"| {kind} | {statistics.mean(shares[kind]):.4f} | {min(shares[kind]):.2f} |")


def main(argv: list[str], prog: str) -> None:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    parser.add_argument("--memory", action="append", required=True)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--factor", type=float, action="append")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--what", choices=("vectors", "bm25", "both"), default="both")
    args = parser.parse_args(argv)
    settings = Settings.from_env()
    with Store(settings) as store:
        with store.session("READ") as s:
            row = s.run("SHOW VECTOR INDEXES YIELD name, options WHERE name = 'item_view_embedding' "
                        "RETURN options").single()
        print("index settings:", row["options"]["indexConfig"] if row else "no item_view_embedding index")
        for memory_id in args.memory:
            if args.what != "bm25":
                measure(store, memory_id, args.queries, args.factor or [1.0, 2.0, 3.0], args.seed)
            if args.what != "vectors":
                measure_bm25(store, memory_id, args.queries, args.seed)

