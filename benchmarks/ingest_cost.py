"""Cost of building a memory with the write path, with a scripted LLM (no model quality
involved): LLM calls and prompt/completion tokens per stage and per 100 turns, and wall time
with a simulated per-call latency at several concurrencies.

The scripted LLM is an OpenAI-compatible HTTP stub on loopback that writes a plausible,
schema-valid reply for every stage (segmentation every ~8 turns, one topic per 3 scenes,
3 atomic items per scene plus connected items, 3 triggers per item, 4 attributes and 5
Horizon projections per scene) after sleeping `--latency` seconds. Tokens are counted with
the encoder's WordPiece tokenizer (all-MiniLM-L6-v2), not the LLM's.

    python benchmarks/ingest_cost.py --uri bolt://127.0.0.1:7689 --sample conv-26 \
        --latency 1 --concurrency 1 8 --out /tmp/ingest_cost.json
"""

from __future__ import annotations

import argparse
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.construct.inputs import read_conversation
from tmem_graph.embeddings import get_encoder
from tmem_graph.llm.client import LLMClient, LLMSettings
from tmem_graph.store import Store

def _data() -> Path:
    from tmem_graph.evaluate.data import data_dir

    return data_dir() / "locomo10.json"


def auto_reply(prompt: str) -> dict:
    """A schema-valid reply for whichever stage `prompt` belongs to."""
    if "New turns, numbered" in prompt:
        numbers = [int(n) for n in re.findall(r"^\[(\d+)\] ", prompt.split("New turns, numbered:")[1], re.M)]
        return {"starts": [n for n in numbers if n in (1, 9) and len(numbers) >= n]}
    if "Describe this scene" in prompt:
        first = re.search(r"\] (\w+): (.{0,60})", prompt)
        who, what = (first.group(1), first.group(2)) if first else ("Someone", "something")
        return {"title": f"{who} talks about {what}", "summary": f"{who} said {what}. " * 2,
                "narrative": f"In this scene {who} explained {what} at length. " * 3}
    if "For every topic listed below say whether" in prompt:
        ids = re.findall(r"^- (t\d+): ", prompt, re.M)
        title = re.search(r"Title: (.*)", prompt).group(1)
        pick = ids[hash(title) % len(ids)] if sum(map(ord, title)) % 3 else None
        return {"results": [{"topic_id": i, "match": i == pick} for i in ids]}
    if "starts a new topic" in prompt or "A new scene joined it" in prompt:
        title = re.search(r"Title: (.*)", prompt).group(1)[:40]
        return {"title": f"Thread: {title}", "keywords": title.lower().split()[:12]}
    if "Scenes to extract from" in prompt:
        block = prompt.split("Scenes to extract from:")[1].split("Earlier scenes of the topic")[0]
        ids = re.findall(r"--- scene (\S+) ", block)
        items = [{"text": f"Fact {k} of scene {s}: someone did something memorable.", "scene_ids": [s]}
                 for s in ids for k in range(3)]
        items += [{"text": f"Scenes {a} and {b} are linked.", "scene_ids": [a, b]} for a, b in zip(ids, ids[1:])]
        return {"items": items}
    if "Fact: " in prompt:
        return {"triggers": [{"concept": f"concept {k}", "bridge": f"a later situation {k}",
                              "rationale": "because it matters"} for k in range(3)]}
    if "Read this scene" in prompt:
        return {"situation": "a chat", "object": "a plan", "event": "sharing news", "emotion": "joy",
                "horizon": {c: f"a future {c} moment" for c in
                            ("personal_arc", "avoidance_habit", "goal_arc", "belief_in_action", "legacy_anchor")}}
    if "Keep a profile of" in prompt:
        return {"summary": "A person who talks about many things. " * 5}
    raise ValueError("unknown stage")


def serve(latency: float, count):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompt = "\n".join(m["content"] for m in body["messages"])
            reply = json.dumps(auto_reply(prompt))
            time.sleep(latency)
            data = json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": reply}}],
                               "usage": {"prompt_tokens": count(prompt), "completion_tokens": count(reply),
                                         "total_tokens": count(prompt) + count(reply)}}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--uri", default="bolt://127.0.0.1:7687")
    ap.add_argument("--data", type=Path, default=None, help="locomo10.json (default: the shared data folder)")
    ap.add_argument("--sample", default="conv-26")
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--concurrency", type=int, nargs="+", default=[1, 8])
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    encoder = get_encoder()
    tokenizer = encoder._model.tokenizer
    count = lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])  # noqa: E731
    turns = read_conversation(args.data or _data(), "locomo", args.sample)
    store = Store(Settings.from_env(uri=args.uri))
    store.apply_schema(encoder.dim)
    server = serve(args.latency, count)
    results = {"sample": args.sample, "turns": len(turns), "latency_s": args.latency, "runs": []}
    for conc in args.concurrency:
        memory_id = f"bench-ingest-{args.sample}-c{conc}"
        if store.exists(memory_id):
            store.drop(memory_id)
        llm = LLMClient(LLMSettings(base_url=f"http://127.0.0.1:{server.server_address[1]}/v1", model="auto"))
        t0 = time.perf_counter()
        report = api.ingest(memory_id, turns, store=store, encoder=encoder, llm=llm, concurrency=conc)
        wall = time.perf_counter() - t0
        stages = {k: vars(v) for k, v in llm.ledger.items()}
        results["runs"].append({"concurrency": conc, "wall_s": wall, "stages": stages,
                                "report": vars(report) | {"ledger": None}})
        store.drop(memory_id)
    server.shutdown()
    first = results["runs"][0]["stages"]
    per100 = 100 / len(turns)
    print(f"{args.sample}: {len(turns)} turns; simulated latency {args.latency} s per call\n")
    print("| stage | calls | prompt tokens | completion tokens | calls / 100 turns | tokens / 100 turns |")
    print("|---|---|---|---|---|---|")
    total = {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0}
    for stage, u in first.items():
        for k in total:
            total[k] += u[k]
        print(f"| {stage} | {u['calls']} | {u['prompt_tokens']} | {u['completion_tokens']} | "
              f"{u['calls'] * per100:.1f} | {(u['prompt_tokens'] + u['completion_tokens']) * per100:.0f} |")
    print(f"| **total** | {total['calls']} | {total['prompt_tokens']} | {total['completion_tokens']} | "
          f"{total['calls'] * per100:.1f} | {(total['prompt_tokens'] + total['completion_tokens']) * per100:.0f} |\n")
    print("| concurrency | wall time (s) | scenes | topics | items | trigger views |")
    print("|---|---|---|---|---|---|")
    for run in results["runs"]:
        r = run["report"]
        print(f"| {run['concurrency']} | {run['wall_s']:.0f} | {r['new_scenes']} | {r['new_topics']} | "
              f"{r['new_items']} | {r['new_trigger_views']} |")
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
