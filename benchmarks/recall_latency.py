"""Recall latency on a LoCoMo-sized memory, alone in its database and among 1,000 memories.

Two servers of our own run side by side:

A  one memory: `synthetic_memory('locomo-0000', n_items=500, n_scenes=60, turns_per_scene=10,
   horizon_per_scene=12)` (600 turns, 60 scenes, 20 topics, 500 items, 2,460 trigger views)
B  the same memory, then N-1 clones of it made inside Neo4j by the Cypher below (every node
   with a new memory_id, its embedding lists, its relationships; ft_scope recomputed for the
   clone), so only one memory is ever encoded

Then, interleaved query by query (so that both servers see the same machine load):

* the cascade WITHOUT query encoding (`Cascade.recall` with precomputed vectors): today's
  two-query cascade and, beside it, the five-round-trip one before it
  (tests/fixtures/stepwise_cascade.py), query by query, on the same vectors
* the cascade INCLUDING encoding (`Memory.recall`)

on A against its memory and on B against the original and 20 random clones. Also: evidence
tokens of `Memory.evidence(recall)` (the encoder's tokenizer), time per named Cypher query of
the cascade, PROFILE of the slowest queries on both servers, and isolation checks for clones.

    python -m benchmarks.recall_latency --memories 1000 --queries 200 --out /tmp/bench-results/recall.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import shutil
import statistics
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

from benchmarks._common import du, load_average, pct, proc_status
from tests.fixtures.synthetic import synthetic_memory
from tmem_graph.api import Memory, import_memory
from tmem_graph.config import Settings
from tmem_graph.encode import Encoder, get_encoder
from tmem_graph.format import parse_document
from tmem_graph.store.queries import query as cypher_text
from tmem_graph.retrieve.cascade import Cascade
from tmem_graph.local.neo4j import LocalServer
from tmem_graph.store import Store, ft_scope
from tests.fixtures.stepwise_cascade import StepwiseCascade

PROTECTED_PORTS = {7687, 7688, 7689}
SOURCE_ID = "locomo-0000"
SERVER_CONF = [
    "server.memory.heap.initial_size=3g",
    "server.memory.heap.max_size=3g",
    "server.memory.pagecache.size=4g",
    "dbms.memory.transaction.total.max=2g",
]

# 40 varied queries over the synthetic vocabulary (people, things, places, feelings) plus a few
# that match nothing in particular; cycled to the requested number.
QUERIES = [
    "What did Ana say about the guitar?",
    "When did Ben go to Kyoto?",
    "How did Ana feel about the new job?",
    "Who talked about sourdough bread at the bakery?",
    "What happened with the broken bike near the park?",
    "Did Ben ever mention a chess tournament?",
    "Where was the wedding planned?",
    "What worried Ana about the tax return?",
    "Tell me about the vintage camera.",
    "Why was Ben anxious at the clinic?",
    "What did they celebrate at the jazz bar?",
    "Which road trip did Ana remember?",
    "What progress was made on the pottery class?",
    "Who complained about the leaking roof?",
    "What advice did Ben ask about the promotion?",
    "How did the sailing course go?",
    "When was the camping trip near the lake?",
    "What does Ana like?",
    "What painting was discussed at the museum?",
    "Did anyone feel nostalgic at grandma's house?",
    "What is Ben's book club reading?",
    "Was Ana proud of something at the office?",
    "What happened at the station?",
    "How often do they go to the gym?",
    "What made Ben relieved?",
    "Which plans involve Lisbon?",
    "What was Ana curious about?",
    "What upset Ben last spring?",
    "Summarise what they planned for the weekend",
    "Did they talk about moving to another city?",
    "What gift ideas came up?",
    "Has Ana changed jobs recently?",
    "What does Ben think about cooking?",
    "Which hobbies did they take up this year?",
    "Any health issues mentioned?",
    "What did Ana and Ben argue about?",
    "What music do they listen to?",
    "When is the next trip?",
    "favourite restaurant",
    "money problems",
]

# ---- cloning: benchmark code, server-side Cypher, parameters only --------------------------
# $source: the memory copied; $targets: [{id, scene_scope, topic_scope, item_scope}].
CLONE_MEMORY = """
MATCH (m:Memory {id: $source})
UNWIND $targets AS t
CREATE (c:Memory) SET c = m {.*, id: t.id}
"""
CLONE_NODES = {
    "Turn": """
UNWIND $targets AS t
MATCH (n:Turn {memory_id: $source})
CREATE (c:Turn) SET c = n {.*, memory_id: t.id}
""",
    "Persona": """
UNWIND $targets AS t
MATCH (n:Persona {memory_id: $source})
CREATE (c:Persona) SET c = n {.*, memory_id: t.id}
""",
    "Scene": """
UNWIND $targets AS t
MATCH (n:Scene {memory_id: $source})
CREATE (c:Scene) SET c = n {.*, memory_id: t.id, ft_scope: t.scene_scope}
""",
    "Topic": """
UNWIND $targets AS t
MATCH (n:Topic {memory_id: $source})
CREATE (c:Topic) SET c = n {.*, memory_id: t.id, ft_scope: t.topic_scope}
""",
    "Item": """
UNWIND $targets AS t
MATCH (n:Item {memory_id: $source})
CREATE (c:Item) SET c = n {.*, memory_id: t.id, ft_scope: t.item_scope}
""",
    "Trigger": """
UNWIND $targets AS t
MATCH (n:Trigger {memory_id: $source})
CREATE (c:Trigger) SET c = n {.*, memory_id: t.id}
""",
}
# The clone-side lookups carry index hints: inside the transaction that created the clone's nodes,
# the planner may otherwise seek the single-property memory_id index and filter on id, which
# is quadratic in the memory's size (see docs/benchmarks.md, import).
CLONE_RELS = {
    "HAS_TURN": """
UNWIND $targets AS t
MATCH (a:Scene {memory_id: $source})-[r:HAS_TURN]->(b:Turn)
MATCH (a2:Scene {memory_id: t.id, id: a.id}) USING INDEX a2:Scene(memory_id, id)
MATCH (b2:Turn {memory_id: t.id, id: b.id}) USING INDEX b2:Turn(memory_id, id)
CREATE (a2)-[r2:HAS_TURN]->(b2) SET r2 = properties(r)
""",
    "NEXT": """
UNWIND $targets AS t
MATCH (a:Scene {memory_id: $source})-[r:NEXT]->(b:Scene)
MATCH (a2:Scene {memory_id: t.id, id: a.id}) USING INDEX a2:Scene(memory_id, id)
MATCH (b2:Scene {memory_id: t.id, id: b.id}) USING INDEX b2:Scene(memory_id, id)
CREATE (a2)-[r2:NEXT]->(b2) SET r2 = properties(r)
""",
    "HAS_SCENE": """
UNWIND $targets AS t
MATCH (a:Topic {memory_id: $source})-[r:HAS_SCENE]->(b:Scene)
MATCH (a2:Topic {memory_id: t.id, id: a.id}) USING INDEX a2:Topic(memory_id, id)
MATCH (b2:Scene {memory_id: t.id, id: b.id}) USING INDEX b2:Scene(memory_id, id)
CREATE (a2)-[r2:HAS_SCENE]->(b2) SET r2 = properties(r)
""",
    "HAS_ITEM": """
UNWIND $targets AS t
MATCH (a:Scene {memory_id: $source})-[r:HAS_ITEM]->(b:Item)
MATCH (a2:Scene {memory_id: t.id, id: a.id}) USING INDEX a2:Scene(memory_id, id)
MATCH (b2:Item {memory_id: t.id, id: b.id}) USING INDEX b2:Item(memory_id, id)
CREATE (a2)-[r2:HAS_ITEM]->(b2) SET r2 = properties(r)
""",
    "TRIGGERS->Scene": """
UNWIND $targets AS t
MATCH (a:Trigger {memory_id: $source})-[r:TRIGGERS]->(b:Scene)
MATCH (a2:Trigger {memory_id: t.id, id: a.id}) USING INDEX a2:Trigger(memory_id, id)
MATCH (b2:Scene {memory_id: t.id, id: b.id}) USING INDEX b2:Scene(memory_id, id)
CREATE (a2)-[r2:TRIGGERS]->(b2) SET r2 = properties(r)
""",
    "TRIGGERS->Item": """
UNWIND $targets AS t
MATCH (a:Trigger {memory_id: $source})-[r:TRIGGERS]->(b:Item)
MATCH (a2:Trigger {memory_id: t.id, id: a.id}) USING INDEX a2:Trigger(memory_id, id)
MATCH (b2:Item {memory_id: t.id, id: b.id}) USING INDEX b2:Item(memory_id, id)
CREATE (a2)-[r2:TRIGGERS]->(b2) SET r2 = properties(r)
""",
}
# relationship counts of one memory, by type (start node in the memory)
REL_COUNTS = """
CALL () {
  MATCH (a:Scene {memory_id: $memory_id})-[r]->(b) RETURN r, b
  UNION ALL
  MATCH (a:Topic {memory_id: $memory_id})-[r]->(b) RETURN r, b
  UNION ALL
  MATCH (a:Trigger {memory_id: $memory_id})-[r]->(b) RETURN r, b
}
RETURN type(r) AS type, labels(b)[0] AS to, count(*) AS n,
       sum(CASE WHEN b.memory_id = $memory_id THEN 0 ELSE 1 END) AS foreign
ORDER BY type, to
"""
CROSS_LINKS = """
MATCH (a)-[r]->(b) WHERE a.memory_id IS NOT NULL AND a.memory_id <> b.memory_id
RETURN count(r) AS n
"""
# the cascade's index searches, returning the memory of every hit (isolation check)
CHECK_DENSE = {
    "Topic": "CYPHER 25 MATCH (n:Topic) SEARCH n IN (VECTOR INDEX topic_embedding FOR $vector "
             "WHERE n.memory_id = $memory_id LIMIT 50) SCORE AS score RETURN n.memory_id AS m",
    "Scene": "CYPHER 25 MATCH (n:Scene) SEARCH n IN (VECTOR INDEX scene_embedding FOR $vector "
             "WHERE n.memory_id = $memory_id LIMIT 50) SCORE AS score RETURN n.memory_id AS m",
    "Item": "CYPHER 25 MATCH (n:Item) SEARCH n IN (VECTOR INDEX item_embedding FOR $vector "
            "WHERE n.memory_id = $memory_id LIMIT 50) SCORE AS score RETURN n.memory_id AS m",
    "Trigger": "CYPHER 25 MATCH (v:Trigger) SEARCH v IN (VECTOR INDEX trigger_embedding FOR $vector "
               "WHERE v.memory_id = $memory_id AND v.family = 'horizon' LIMIT 250) SCORE AS score "
               "RETURN v.memory_id AS m",
}
CHECK_FULLTEXT = ("CALL db.index.fulltext.queryNodes('text_search', $lucene, {limit: 50}) YIELD node "
                  "RETURN node.memory_id AS m")


# ---- helpers ----------------------------------------------------------------------------------
class MemoEncoder(Encoder):
    """Encodes through `inner` unless the text was encoded before (one memory, two servers)."""

    def __init__(self, inner: Encoder):
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.memo: dict[str, list[float]] = {}
        self.seconds = 0.0

    def encode(self, texts, batch_size: int = 64):
        todo = [t for t in dict.fromkeys(texts) if t not in self.memo]
        if todo:
            t0 = time.perf_counter()
            self.memo.update(zip(todo, self.inner.encode(todo, batch_size=batch_size)))
            self.seconds += time.perf_counter() - t0
        return [self.memo[t] for t in texts]


class TimedCascade(Cascade):
    """A Cascade that records, per named query, the client wall time and the server's own time
    (result_available_after + result_consumed_after), and the time of each stage of a recall:
    query 1 (retrieve/rankings), query 2 (retrieve/finish), and the Python between and after."""

    def __init__(self, *a, **kw):
        super().__init__(*a, **kw)
        self.times: dict[str, list[float]] = defaultdict(list)
        self.server: dict[str, list[float]] = defaultdict(list)
        self.stages: dict[str, list[float]] = defaultdict(list)
        self.first_params: dict[str, dict] = {}
        self.recording = True
        self._current: list[tuple[str, float, float]] = []
        self._mine = threading.local()
        self.store.query_listeners.append(self._timed)

    def _run(self, name, params):
        # the product's Cascade._run; the store's listener times it (and no other user's queries)
        self._mine.active = True
        try:
            return super()._run(name, params)
        finally:
            self._mine.active = False

    def _timed(self, name, params, wall_ms, server_ms):
        if self.recording and getattr(self._mine, "active", False):
            self._current.append((name, wall_ms, server_ms))
            self.times[name].append(wall_ms)
            self.server[name].append(server_ms)
            self.first_params.setdefault(name, params)

    def recall(self, *a, **kw):
        self._current = []
        t0 = time.perf_counter()
        out = super().recall(*a, **kw)
        total = (time.perf_counter() - t0) * 1000
        if self.recording and self._current:
            self.stages["server time, both queries"].append(sum(srv for _, _, srv in self._current))
            for name, wall, _ in self._current:
                self.stages[f"client wall of {name}"].append(wall)
            self.stages["python (choices, assembly)"].append(total - sum(w for _, w, _ in self._current))
        return out


def summary(xs) -> dict:
    return {"n": len(xs), "p50": pct(xs, 50), "p95": pct(xs, 95), "mean": statistics.fmean(xs) if xs else None,
            "max": max(xs) if xs else None}


def start_server(data_dir: Path, port: int, conf: list[str], fresh: bool) -> LocalServer:
    server = LocalServer(data_dir, bolt_port=port, http_port=None)
    if fresh:
        server.stop()
        shutil.rmtree(server.home / "data", ignore_errors=True)
    server.home.mkdir(parents=True, exist_ok=True)
    server.local_conf.write_text("\n".join(conf) + "\n")
    t0 = time.perf_counter()
    server.start(timeout=600)
    print(f"server {data_dir} on {port} up in {time.perf_counter() - t0:.1f} s", flush=True)
    return server


def clone_targets(ids: list[str]) -> list[dict]:
    return [{"id": m, "scene_scope": ft_scope("scene", m), "topic_scope": ft_scope("topic", m),
             "item_scope": ft_scope("item", m)} for m in ids]


def clone_batch(store: Store, targets: list[dict], timings: dict[str, float]) -> None:
    """Clone SOURCE_ID into every target, in one transaction."""
    with store.transaction() as tx:
        steps = [("Memory", CLONE_MEMORY), *CLONE_NODES.items(), *CLONE_RELS.items()]
        for name, text in steps:
            t0 = time.perf_counter()
            tx.run(text, {"source": SOURCE_ID, "targets": targets}).consume()
            timings[name] += time.perf_counter() - t0
        t0 = time.perf_counter()
    timings["commit"] += time.perf_counter() - t0


def memory_ids(store: Store) -> list[str]:
    with store.session("READ") as s:
        return [r["id"] for r in s.run("MATCH (m:Memory) RETURN m.id AS id ORDER BY id")]


def build_many(store: Store, n_memories: int, batch: int, budget_s: float, state_file: Path) -> dict:
    """Clone the source memory until the database holds n_memories (or the budget runs out)."""
    have = set(memory_ids(store))
    wanted = [f"locomo-{k:04d}" for k in range(1, n_memories)]
    todo = [m for m in wanted if m not in have]
    previous = json.loads(state_file.read_text()) if state_file.is_file() else {}
    timings: dict[str, float] = defaultdict(float, previous.get("step_s", {}))
    done_before = n_memories - 1 - len(todo)
    t_start = time.perf_counter()
    elapsed_before = previous.get("clone_s", 0.0)
    progress = previous.get("progress", [])
    stopped_by_budget = False
    for k in range(0, len(todo), batch):
        if elapsed_before + time.perf_counter() - t_start > budget_s:
            stopped_by_budget = True
            break
        clone_batch(store, clone_targets(todo[k:k + batch]), timings)
        made = done_before + k + len(todo[k:k + batch])
        el = elapsed_before + time.perf_counter() - t_start
        if (k // batch) % 4 == 0 or k + batch >= len(todo):
            progress.append({"clones": made, "elapsed_s": round(el, 1), "load": load_average()})
            print(f"  {made} clones in {el:.0f} s ({made / el:.2f} clones/s so far), load {load_average()}",
                  flush=True)
        state_file.write_text(json.dumps({"clone_s": el, "step_s": timings, "progress": progress}))
    clone_s = elapsed_before + time.perf_counter() - t_start
    t0 = time.perf_counter()
    with store.session("READ") as s:
        s.run("CALL db.awaitIndexes(3600)").consume()
    await_s = time.perf_counter() - t0
    out = {"clone_s": clone_s, "await_indexes_s": await_s, "step_s": dict(timings),
           "stopped_by_budget": stopped_by_budget, "progress": progress,
           "memories": len(memory_ids(store))}
    state_file.write_text(json.dumps(out))
    return out


def profile(store: Store, name: str, params: dict, runs: int = 5) -> dict:
    """PROFILE one cascade query (warmed, so no planning): db hits, the server's time (median of
    `runs`), and the plan's operators."""
    text = cypher_text(name)
    lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("//")]
    if lines and lines[0].strip().upper().startswith("CYPHER"):
        lines[0] = lines[0].strip() + " PROFILE"  # "CYPHER 25 PROFILE ..."
    else:
        lines.insert(0, "PROFILE")
    prof_text = "\n".join(lines)
    server_ms = []
    with store.session("READ") as s:
        for _ in range(3):
            s.run(prof_text, params).consume()
        for _ in range(runs):
            summ = s.run(prof_text, params).consume()
            server_ms.append((summ.result_available_after or 0) + (summ.result_consumed_after or 0))
    ops: list[dict] = []

    def walk(p, depth=0):
        args_ = p.get("args", {})
        ops.append({"operator": p.get("operatorType"), "depth": depth, "rows": p.get("rows"),
                    "db_hits": p.get("dbHits"), "page_cache_hits": p.get("pageCacheHits"),
                    "page_cache_misses": p.get("pageCacheMisses"),
                    "details": str(args_.get("Details", ""))[:160]})
        for c in p.get("children", []):
            walk(c, depth + 1)

    walk(summ.profile)
    return {"query": name, "server_ms_median": statistics.median(server_ms), "server_ms": server_ms,
            "db_hits": sum(o["db_hits"] or 0 for o in ops),
            "rows_out": ops[0]["rows"] if ops else None, "operators": ops}


def floor(store: Store, n: int = 60, fan: int = 10, workers: int = 6) -> dict:
    """The cost of the cascade's pattern with nothing to compute: one session + `RETURN 1`,
    sequentially and `fan` at once on a pool of `workers` threads (as in a recall's round 1)."""
    from concurrent.futures import ThreadPoolExecutor

    def one():
        with store.session("READ") as s:
            s.run("RETURN 1 AS x").consume()

    for _ in range(10):
        one()
    seq = []
    for _ in range(n):
        t0 = time.perf_counter()
        one()
        seq.append((time.perf_counter() - t0) * 1000)
    par = []
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for _ in range(n):
            t0 = time.perf_counter()
            for f in [pool.submit(one) for _ in range(fan)]:
                f.result()
            par.append((time.perf_counter() - t0) * 1000)
    return {"sequential_ms": summary(seq), f"fan_out_{fan}_on_{workers}_threads_ms": summary(par)}


def encoder_query(encoder, queries: list[str], n: int = 40) -> dict:
    """Time to encode one query, one at a time (the default encoder: one thread)."""
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        encoder.encode([queries[i % len(queries)]])
        out.append((time.perf_counter() - t0) * 1000)
    return {encoder.name: summary(out)}


# ---- main ------------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--memories", type=int, default=1000, help="memories in database B")
    ap.add_argument("--queries", type=int, default=200, help="measured recalls per configuration")
    ap.add_argument("--warmup", type=int, default=40, help="unmeasured recalls per server first")
    ap.add_argument("--targets", type=int, default=20, help="random clones queried on B (+ the original)")
    ap.add_argument("--clone-batch", type=int, default=5, help="clones per transaction")
    ap.add_argument("--build-budget-min", type=float, default=40.0,
                    help="stop cloning after this many minutes (the figure then says how many)")
    ap.add_argument("--items", type=int, default=500)
    ap.add_argument("--scenes", type=int, default=60)
    ap.add_argument("--horizon", type=int, default=12, help="horizon views per scene")
    ap.add_argument("--port-single", type=int, default=7702)
    ap.add_argument("--port-many", type=int, default=7703)
    ap.add_argument("--dir-single", type=Path, default=Path("/tmp/bench-recall-1"))
    ap.add_argument("--dir-many", type=Path, default=Path("/tmp/bench-recall-many"))
    ap.add_argument("--conf", action="append", metavar="KEY=VALUE",
                    help=f"neo4j.local.conf of both servers (default: {' '.join(SERVER_CONF)})")
    ap.add_argument("--reuse", action="store_true",
                    help="keep database B if it exists (resume or skip the cloning)")
    ap.add_argument("--keep-servers", action="store_true", help="leave both servers running")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--out", type=Path, required=True, help="JSON results file")
    args = ap.parse_args(argv)
    for p in (args.port_single, args.port_many):
        if p in PROTECTED_PORTS:
            ap.error(f"port {p} belongs to someone else")
    conf = args.conf or SERVER_CONF
    rng = random.Random(args.seed)
    loads = {"start": load_average()}
    result: dict = {"benchmark": "recall_latency", "neo4j_local_conf": conf,
                    "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                                "python": sys.version.split()[0]}}

    doc = synthetic_memory(SOURCE_ID, n_items=args.items, n_scenes=args.scenes, turns_per_scene=10,
                           horizon_per_scene=args.horizon)
    parsed = parse_document(doc)[0]
    counts = parsed.counts()
    result["memory"] = {"id": SOURCE_ID, "counts": counts, "objects": sum(counts.values())}
    print(f"memory: {counts}", flush=True)

    single = start_server(args.dir_single, args.port_single, conf, fresh=True)
    if not args.reuse:
        (args.dir_many / "clone-state.json").unlink(missing_ok=True)
    many = start_server(args.dir_many, args.port_many, conf, fresh=not args.reuse)
    result["neo4j_version"] = single.version
    sa = Store(Settings.from_env(uri=single.uri))
    sb = Store(Settings.from_env(uri=many.uri))
    real = get_encoder(sa.settings.encoder)
    enc = MemoEncoder(real)
    try:
        # ---- build ------------------------------------------------------------------------
        sa.apply_schema(real.dim)
        sb.apply_schema(real.dim)
        t0 = time.perf_counter()
        import_memory(parsed, store=sa, encoder=enc, replace=True)
        result["import_single_s"] = time.perf_counter() - t0
        result["import_single_encode_s"] = enc.seconds
        print(f"A: imported in {result['import_single_s']:.1f} s (encoding {enc.seconds:.1f} s)", flush=True)
        if not sb.exists(SOURCE_ID):
            t0 = time.perf_counter()
            import_memory(parsed, store=sb, encoder=enc, replace=True)  # replayed vectors
            print(f"B: source imported in {time.perf_counter() - t0:.1f} s", flush=True)
        loads["before_build"] = load_average()
        print(f"B: cloning to {args.memories} memories, {args.clone_batch} per transaction "
              f"(budget {args.build_budget_min} min)", flush=True)
        build = build_many(sb, args.memories, args.clone_batch, args.build_budget_min * 60,
                           args.dir_many / "clone-state.json")
        loads["after_build"] = load_average()
        build["db_bytes_on_disk"] = du(many.home / "data")
        build["db_bytes_single"] = du(single.home / "data")
        with sb.session("READ") as s:
            build["nodes"] = s.run("MATCH (n) RETURN count(n) AS n").single()["n"]
            build["relationships"] = s.run("MATCH ()-[r]->() RETURN count(r) AS n").single()["n"]
            build["indexes"] = [r.data() for r in s.run(
                "SHOW INDEXES YIELD name, type, state, populationPercent, entityType, labelsOrTypes "
                "RETURN name, type, state, populationPercent")]
        result["build"] = build
        n_mem = build["memories"]
        print(f"B: {n_mem} memories, {build['nodes']:,} nodes, {build['relationships']:,} relationships, "
              f"{build['db_bytes_on_disk'] / 2**30:.2f} GiB on disk; cloning {build['clone_s']:.0f} s, "
              f"awaitIndexes {build['await_indexes_s']:.1f} s", flush=True)

        # ---- checks -----------------------------------------------------------------------
        all_ids = memory_ids(sb)
        clones = [m for m in all_ids if m != SOURCE_ID]
        targets = [SOURCE_ID] + rng.sample(clones, min(args.targets, len(clones)))
        result["targets"] = targets
        result["checks"] = run_checks(sb, sa, targets, real, clones)
        print(f"checks: {json.dumps(result['checks']['summary'])}", flush=True)

        # ---- measurement ------------------------------------------------------------------
        queries = [QUERIES[i % len(QUERIES)] for i in range(args.queries)]
        t0 = time.perf_counter()
        qvec = dict(zip(QUERIES, real.encode(QUERIES)))
        result["encode_40_queries_batch_ms"] = (time.perf_counter() - t0) * 1000
        result["tokenizer"] = f"the tokenizer of {real.name} ({type(real).__name__})"

        ca = TimedCascade(sa, sa.settings.retrieval)
        cb = TimedCascade(sb, sb.settings.retrieval)
        mems_a = Memory(SOURCE_ID, store=sa, encoder=real)
        mems_b = {m: Memory(m, store=sb, encoder=real) for m in targets}
        for m in [mems_a, *mems_b.values()]:
            _ = m.encoder  # header check once, outside the timings

        ca.recording = cb.recording = False
        for i in range(args.warmup):
            q = QUERIES[i % len(QUERIES)]
            ca.recall(SOURCE_ID, q, qvec[q])
            cb.recall(targets[i % len(targets)], q, qvec[q])
            mems_a.recall(q)
            mems_b[targets[i % len(targets)]].recall(q)
        ca.recording = cb.recording = True
        loads["before_measure"] = load_average()

        lat = {k: [] for k in ("A_cascade", "B_cascade", "A_full", "B_full", "A_full_encode",
                               "B_full_encode", "A_full_cascade", "B_full_cascade", "A_stepwise", "B_stepwise")}
        # the cascade before the two-query rewrite, on the same servers, memories and vectors
        sa_old, sb_old = StepwiseCascade(sa, sa.settings.retrieval), StepwiseCascade(sb, sb.settings.retrieval)
        for i in range(args.warmup // 2):
            q = QUERIES[i % len(QUERIES)]
            sa_old.recall(SOURCE_ID, q, qvec[q])
            sb_old.recall(targets[i % len(targets)], q, qvec[q])
        same_as_stepwise = 0
        by_target: dict[str, list[float]] = defaultdict(list)
        tokens, evidence_shape = [], []
        same_ids = same_sets = 0
        for i, q in enumerate(queries):
            target = targets[i % len(targets)]
            order = ("A", "B") if i % 2 == 0 else ("B", "A")
            recs = {}
            for side in order:  # precomputed vector: the cascade alone, today's and the stepwise one
                memory_id = SOURCE_ID if side == "A" else target
                new, old = (ca, sa_old) if side == "A" else (cb, sb_old)
                for which in (("new", "old") if i % 4 < 2 else ("old", "new")):
                    t0 = time.perf_counter()
                    got = (new if which == "new" else old).recall(memory_id, q, qvec[q])
                    dt = (time.perf_counter() - t0) * 1000
                    if which == "new":
                        recs[side] = got
                        lat[f"{side}_cascade"].append(dt)
                        if side == "B":
                            by_target[target].append(dt)
                    else:
                        recs[f"{side}_old"] = got
                        lat[f"{side}_stepwise"].append(dt)
                same_as_stepwise += recs[side].to_json()["scenes"] == recs[f"{side}_old"].to_json()["scenes"] and \
                    recs[side].to_json()["items"] == recs[f"{side}_old"].to_json()["items"]
            ida = ([s.id for s in recs["A"].scenes], [x.id for x in recs["A"].items])
            idb = ([s.id for s in recs["B"].scenes], [x.id for x in recs["B"].items])
            same_ids += ida == idb
            same_sets += (set(ida[0]), set(ida[1])) == (set(idb[0]), set(idb[1]))
            for side in order:  # Memory.recall: encoding + cascade (+ its thread pool)
                mem = mems_a if side == "A" else mems_b[target]
                t0 = time.perf_counter()
                r = mem.recall(q)
                lat[f"{side}_full"].append((time.perf_counter() - t0) * 1000)
                lat[f"{side}_full_encode"].append(r.timings_ms["encode"])
                lat[f"{side}_full_cascade"].append(r.timings_ms["cascade"])
                if side == "A":
                    text = mem.evidence(r)
                    tokens.append(real.count_tokens(text))
                    evidence_shape.append({"scenes": len(r.scenes), "turns": sum(len(s.turns) for s in r.scenes),
                                           "items": len(r.items), "chars": len(text)})
        loads["after_measure"] = load_average()
        sa_old.close()
        sb_old.close()
        result["same_result_as_stepwise"] = f"{same_as_stepwise}/{2 * len(queries)}"

        result["latency_ms"] = {k: summary(v) for k, v in lat.items()}
        result["latency_ms_B_by_target"] = {m: summary(v) for m, v in by_target.items()}
        result["same_result_A_vs_B"] = f"{same_ids}/{len(queries)}"
        result["same_sets_A_vs_B"] = f"{same_sets}/{len(queries)}"
        result["evidence_tokens"] = summary(tokens)
        result["evidence_shape_median"] = {k: statistics.median(e[k] for e in evidence_shape)
                                           for k in evidence_shape[0]}
        result["per_query_ms"] = {
            name: {"A": summary(ca.times.get(name, [])), "B": summary(cb.times.get(name, []))}
            for name in sorted(set(ca.times) | set(cb.times))}

        result["stages_ms"] = {"A": {k: summary(v) for k, v in ca.stages.items()},
                               "B": {k: summary(v) for k, v in cb.stages.items()}}
        result["per_query_server_ms"] = {
            name: {"A": summary(ca.server.get(name, [])), "B": summary(cb.server.get(name, []))}
            for name in sorted(set(ca.server) | set(cb.server))}
        result["floor"] = {"A": floor(sa), "B": floor(sb)}
        result["encoder_query"] = encoder_query(real, QUERIES)

        # ---- PROFILE of every cascade query on B (against a clone) and on A ------------------
        # parameters of the first measured recall (query 0), moved to a clone for B
        clone = targets[1] if len(targets) > 1 else SOURCE_ID
        src_hash, clone_hash = hashlib.sha1(SOURCE_ID.encode()).hexdigest(), hashlib.sha1(clone.encode()).hexdigest()
        result["profiles"] = {"query": queries[0], "B_memory": clone}
        for key, params in sorted(ca.first_params.items()):
            params_b = {**params, "memory_id": clone}
            for k, v in params.items():
                if k.endswith("lucene") and isinstance(v, str):
                    params_b[k] = v.replace(src_hash, clone_hash)
            name = key
            result["profiles"][key] = {"A": profile(sa, name, params), "B": profile(sb, name, params_b)}
        result["jvm_peak_rss_bytes"] = {
            "A": proc_status(single.status()["pid"], "VmHWM").get("VmHWM"),
            "B": proc_status(many.status()["pid"], "VmHWM").get("VmHWM")}
    finally:
        sa.close()
        sb.close()
        if not args.keep_servers:
            single.stop()
            many.stop()
        loads["end"] = load_average()
        result["load_average_1_5_15"] = loads
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2, default=str) + "\n")

    report(result, args)
    return 0


def run_checks(sb: Store, sa: Store, targets: list[str], encoder: Encoder, clones: list[str]) -> dict:
    """Clones are faithful copies and recall against a clone sees only that clone."""
    out: dict = {}
    src_counts = sb.counts(SOURCE_ID)
    with sb.session("READ") as s:
        src_rels = [r.data() for r in s.run(REL_COUNTS, {"memory_id": SOURCE_ID})]
        out["relationships_of_source"] = src_rels
        mismatched = []
        for m in targets[1:]:
            rels = [r.data() for r in s.run(REL_COUNTS, {"memory_id": m})]
            if sb.counts(m) != src_counts or rels != src_rels:
                mismatched.append(m)
        out["clones_differing_from_source"] = mismatched
        out["cross_memory_relationships"] = s.run(CROSS_LINKS).single()["n"]
        vec = encoder.encode(["What did Ana say about the guitar at the lake?"])[0]
        foreign = defaultdict(int)
        hits = defaultdict(int)
        for m in targets:
            for label, text in CHECK_DENSE.items():
                got = [r["m"] for r in s.run(text, {"vector": vec, "memory_id": m})]
                hits[label] += len(got)
                foreign[label] += sum(x != m for x in got)
            for kind in ("topic", "scene", "item"):
                lucene = f"+ft_scope:{ft_scope(kind, m)} +(text:(guitar lake) title:(guitar lake))"
                got = [r["m"] for r in s.run(CHECK_FULLTEXT, {"lucene": lucene})]
                hits[f"fulltext-{kind}"] += len(got)
                foreign[f"fulltext-{kind}"] += sum(x != m for x in got)
        out["index_hits"] = dict(hits)
        out["index_hits_of_other_memories"] = dict(foreign)
    # a marker word in one clone's topic t3, scene s7 and item i7 (t3 holds s7, s7 holds i7):
    # recall of that word finds them in that clone and nothing marked anywhere else
    marked, other = targets[1], targets[2]
    marker = "zebracornquux"
    mark = ("MATCH (t:Topic {memory_id: $m, id: 't3'}), (sc:Scene {memory_id: $m, id: 's7'}), "
            "(i:Item {memory_id: $m, id: 'i7'}) "
            "SET t.title = t.title + ' ' + $w, sc.title = sc.title + ' ' + $w, i.text = i.text + ' ' + $w")
    restore = ("MATCH (t:Topic {memory_id: $m, id: 't3'}), (sc:Scene {memory_id: $m, id: 's7'}), "
               "(i:Item {memory_id: $m, id: 'i7'}), (t0:Topic {memory_id: $source, id: 't3'}), "
               "(sc0:Scene {memory_id: $source, id: 's7'}), (i0:Item {memory_id: $source, id: 'i7'}) "
               "SET t.title = t0.title, sc.title = sc0.title, i.text = i0.text")
    with sb.session("WRITE") as s:
        s.run(mark, {"m": marked, "w": marker}).consume()
        s.run("CALL db.awaitIndexes(600)").consume()
    rec = {}
    try:
        for m in (marked, other, SOURCE_ID):
            r = Memory(m, store=sb, encoder=encoder).recall(marker)
            rec[m] = {"items_with_marker": [i.id for i in r.items if marker in i.text],
                      "scenes_with_marker": [sc.id for sc in r.scenes if marker in (sc.title or "")]}
    finally:
        with sb.session("WRITE") as s:  # undo: the clone is a faithful copy again
            s.run(restore, {"m": marked, "source": SOURCE_ID}).consume()
    out["marker_recall"] = rec
    found = rec[marked]["items_with_marker"] == ["i7"] and rec[marked]["scenes_with_marker"] == ["s7"]
    leaked = any(rec[m]["items_with_marker"] or rec[m]["scenes_with_marker"] for m in (other, SOURCE_ID))
    out["summary"] = {
        "clones_checked": len(targets) - 1,
        "faithful_copies": not out["clones_differing_from_source"],
        "cross_memory_relationships": out["cross_memory_relationships"],
        "index_hits_of_other_memories": sum(foreign.values()),
        "index_hits": sum(hits.values()),
        "marker_found_in_its_clone": found,
        "marker_seen_in_other_memories": leaked,
    }
    return out


def report(r: dict, args) -> None:
    lat = r["latency_ms"]
    b = r["build"]
    n_b = b["memories"]
    print(f"\nNeo4j {r['neo4j_version']}, {r['machine']['cpus']} CPUs; both servers: {', '.join(r['neo4j_local_conf'])}")
    print(f"load average (1/5/15 min): {r['load_average_1_5_15']}")
    print(f"memory {r['memory']['id']}: {r['memory']['counts']}")
    print(f"database B: {n_b} memories, {b['nodes']:,} nodes, {b['relationships']:,} relationships, "
          f"{b['db_bytes_on_disk'] / 2**30:.2f} GiB on disk (A: {b['db_bytes_single'] / 2**20:.0f} MiB); "
          f"cloning {b['clone_s'] / 60:.1f} min{' (stopped by the time budget)' if b['stopped_by_budget'] else ''}, "
          f"awaitIndexes {b['await_indexes_s']:.1f} s")
    print(f"B queried on {len(r['targets'])} memories: the original and {len(r['targets']) - 1} random clones\n")
    print(f"| recall latency, ms ({lat['A_cascade']['n']} queries) | 1 memory p50 | p95 | {n_b} memories p50 | p95 "
          f"| ratio p50 | ratio p95 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key, what in (("cascade", "cascade, precomputed vector (`Cascade.recall`)"),
                      ("full", "with query encoding (`Memory.recall`)"),
                      ("full_encode", "  of which encoding"), ("full_cascade", "  of which cascade")):
        a, bb = lat[f"A_{key}"], lat[f"B_{key}"]
        print(f"| {what} | {a['p50']:.1f} | {a['p95']:.1f} | {bb['p50']:.1f} | {bb['p95']:.1f} | "
              f"{bb['p50'] / a['p50']:.2f} | {bb['p95'] / a['p95']:.2f} |")
    old_a, old_b = lat["A_stepwise"], lat["B_stepwise"]
    print(f"| the stepwise cascade before, same vectors, interleaved | {old_a['p50']:.1f} | {old_a['p95']:.1f} "
          f"| {old_b['p50']:.1f} | {old_b['p95']:.1f} | {old_b['p50'] / old_a['p50']:.2f} | {old_b['p95'] / old_a['p95']:.2f} |")
    print(f"\ntoday's / stepwise: A p50 {lat['A_cascade']['p50'] / old_a['p50']:.2f}, p95 "
          f"{lat['A_cascade']['p95'] / old_a['p95']:.2f}; B p50 {lat['B_cascade']['p50'] / old_b['p50']:.2f}, "
          f"p95 {lat['B_cascade']['p95'] / old_b['p95']:.2f}; same scenes and items as the stepwise cascade: "
          f"{r['same_result_as_stepwise']}")
    orig = r["latency_ms_B_by_target"].get(SOURCE_ID, {})
    others = [v["p50"] for m, v in r["latency_ms_B_by_target"].items() if m != SOURCE_ID]
    if orig and others:
        print(f"\nB cascade p50 on the original: {orig['p50']:.1f} ms; on the clones: median of their p50s "
              f"{statistics.median(others):.1f} ms (range {min(others):.1f}-{max(others):.1f})")
    t = r["evidence_tokens"]
    print(f"\nevidence tokens per query ({r['tokenizer']}): median {t['p50']:.0f}, p95 {t['p95']:.0f}, "
          f"max {t['max']}; median shape {r['evidence_shape_median']}")
    print(f"same scene and item ids on A and B for the same query: {r['same_result_A_vs_B']} in the same order, "
          f"{r['same_sets_A_vs_B']} as sets")
    print("\n| stage of `Cascade.recall` (ms) | A p50 | A p95 | B p50 | B p95 |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for k in r["stages_ms"]["A"]:
        a, bb = r["stages_ms"]["A"][k], r["stages_ms"]["B"][k]
        print(f"| {k} | {a['p50']:.1f} | {a['p95']:.1f} | {bb['p50']:.1f} | {bb['p95']:.1f} |")
    print("\n| named query (ms; client wall while running concurrently / server's own time) "
          "| A wall p50 | A server p50 | B wall p50 | B wall p95 | B server p50 | B server p95 |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, v in sorted(r["per_query_ms"].items(), key=lambda kv: -kv[1]["B"]["p50"]):
        sv = r["per_query_server_ms"][name]
        print(f"| {name} (n={v['B']['n']}) | {v['A']['p50']:.1f} | {sv['A']['p50']:.0f} | {v['B']['p50']:.1f} | "
              f"{v['B']['p95']:.1f} | {sv['B']['p50']:.0f} | {sv['B']['p95']:.0f} |")
    fa, fb = r["floor"]["A"], r["floor"]["B"]
    fan_key = [k for k in fa if k.startswith("fan_out")][0]
    print(f"\nfloor (session + RETURN 1): sequential p50 A {fa['sequential_ms']['p50']:.1f} / B "
          f"{fb['sequential_ms']['p50']:.1f} ms; {fan_key}: p50 A {fa[fan_key]['p50']:.1f} / B {fb[fan_key]['p50']:.1f} ms, "
          f"p95 A {fa[fan_key]['p95']:.1f} / B {fb[fan_key]['p95']:.1f} ms")
    print("encoding one query: " + ", ".join(f"{k} p50 {v['p50']:.1f} ms p95 {v['p95']:.1f} ms"
                                            for k, v in r["encoder_query"].items()))
    prof = r["profiles"]
    print(f"\nPROFILE (query {prof['query']!r}; B on {prof['B_memory']}; median server ms of 5 after warm-up)")
    print("| query | A rows | A db hits | A server ms | B rows | B db hits | B server ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for key, p in prof.items():
        if isinstance(p, dict) and "A" in p:
            print(f"| {key} | {p['A']['rows_out']} | {p['A']['db_hits']:,} | {p['A']['server_ms_median']} | "
                  f"{p['B']['rows_out']} | {p['B']['db_hits']:,} | {p['B']['server_ms_median']} |")
    print(f"\nchecks: {json.dumps(r['checks']['summary'])}")
    print(f"JSON: {args.out}")


if __name__ == "__main__":
    raise SystemExit(main())
