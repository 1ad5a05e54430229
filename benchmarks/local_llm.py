"""The local model's speed on this machine: load time, a ~250-token structured extraction
through `LLMClient`, tokens/s with and without a JSON schema, a ~3k-token prompt, N concurrent
requests, and the process's RSS (docs/local-llm.md):

    python benchmarks/local_llm.py --model qwen2.5-coder-1.5b --threads 2 --parallel 1 --repeat 1
"""

from __future__ import annotations

import argparse
import threading
import time
from pathlib import Path

import openai
from pydantic import BaseModel

from tmem_graph.llm.client import LLMClient
from tmem_graph.local.llama import DEFAULT_MODEL, MODELS, LocalLLM, local_settings


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def bench(args) -> None:
    """Load time, a ~250-token structured extraction through `LLMClient`, tokens/s with and
    without a JSON schema, a ~3k-token prompt, N concurrent requests, RSS."""

    class Fact(BaseModel):
        who: str
        what: str
        when: str | None = None

    class Facts(BaseModel):
        facts: list[Fact]

    story = ("On 3 March 2024 Maria Lopez flew from Madrid to Oslo for her sister Ana's wedding. "
             "Ana married Jonas Berg in a wooden church near the fjord on 5 March. Their cousin "
             "Pedro missed the ceremony because his train from Bergen was cancelled, but he "
             "arrived for the dinner and gave a speech about the summer the three of them spent "
             "in Seville in 2009. Maria stayed until 10 March and visited the Munch museum.")
    extract = [{"role": "user", "content": "List every fact in this text as JSON objects "
                "{who, what, when}.\n\n" + story}]
    lines = [f"[2024-03-{1 + i // 12:02d} {8 + i % 12}:00] {'Maria' if i % 2 else 'Ana'}: turn {i} of the "
             f"dialogue about the wedding plans, the flights, the dinner and the speech." for i in range(72)]
    long = [{"role": "user", "content": "Summarise this dialogue in one sentence.\n\n" + "\n".join(lines)}]
    fmt = {"type": "json_schema", "json_schema": {"name": "Facts", "schema": Facts.model_json_schema(),
                                                  "strict": False}}

    def free(i: int) -> list[dict]:  # a different first token each time defeats the prompt cache
        return [{"role": "user", "content": f"({i}) Write about 150 words on why people keep diaries."}]

    t0 = time.perf_counter()
    with LocalLLM(args.model, n_ctx=args.n_ctx, parallel=args.parallel, threads=args.threads) as llm:
        print(f"model {llm.model}: ready in {time.perf_counter() - t0:.1f} s (threads {llm.threads}, "
              f"parallel {llm.parallel}, n_ctx/slot {llm.n_ctx}), RSS {_rss_mb():.0f} MB", flush=True)
        raw = openai.OpenAI(base_url=llm.base_url, api_key=llm.api_key or "not-needed", timeout=900)
        client = LLMClient(local_settings(llm))

        t = time.perf_counter()
        facts = client.structured(extract, Facts, stage="bench")
        u = client.ledger["bench"]
        print(f"LLMClient.structured(Facts): {u.calls} call(s), {u.prompt_tokens} prompt + "
              f"{u.completion_tokens} reply tokens in {time.perf_counter() - t:.1f} s, "
              f"{len(facts.facts)} facts", flush=True)
        print(facts.model_dump_json(), flush=True)

        def one(label: str, messages: list[dict], **kwargs) -> None:
            t = time.perf_counter()
            r = raw.chat.completions.create(model=llm.model, messages=messages, temperature=0, **kwargs)
            dt = time.perf_counter() - t
            tm = (r.model_extra or {}).get("timings") or {}
            print(f"{label:12s}: {tm.get('prompt_n')} prompt tok at {tm.get('prompt_per_second', 0):.1f} tok/s, "
                  f"{r.usage.completion_tokens} reply tok at {tm.get('predicted_per_second', 0):.1f} tok/s "
                  f"({r.choices[0].finish_reason}); {dt:.1f} s in all", flush=True)

        for i in range(args.repeat):
            one("free text", free(i), max_tokens=128)
            one("json schema", [{"role": "user", "content": f"({i}) " + extract[0]["content"]}],
                response_format=fmt, max_tokens=128)
        one("long prompt", long, max_tokens=16)
        if args.concurrent > 1:
            done: list[float] = []

            def worker(i: int) -> None:
                t = time.perf_counter()
                raw.chat.completions.create(model=llm.model, messages=free(100 + i), temperature=0, max_tokens=128)
                done.append(time.perf_counter() - t)

            t = time.perf_counter()
            pool = [threading.Thread(target=worker, args=(i,)) for i in range(args.concurrent)]
            for th in pool:
                th.start()
            for th in pool:
                th.join()
            wall = time.perf_counter() - t
            print(f"{args.concurrent} concurrent 128-token replies on {args.parallel} slot(s): wall {wall:.1f} s "
                  f"({args.concurrent * 128 / wall:.1f} tok/s in all), each {', '.join(f'{d:.1f}' for d in sorted(done))} s")
        print(f"RSS at the end {_rss_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=DEFAULT_MODEL, help=f"one of {', '.join(MODELS)} or a .gguf path")
    ap.add_argument("--n-ctx", type=int, default=8192)
    ap.add_argument("--parallel", type=int, default=1)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--concurrent", type=int, default=2, help="then N requests at once")
    bench(ap.parse_args())


if __name__ == "__main__":
    main()
