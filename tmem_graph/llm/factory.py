"""The configured LLM: an OpenAI-compatible endpoint, or the fully local model
(`TMEM_LLM_MODEL=local` or `local:<name>`), with the persistent response cache.

The local model is a runtime outside the core (`tmem_graph.local`): it registers itself here
(`tmem_graph.local.enable_local_llm()`, which the CLI calls), so the core never imports it.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator

from ..config import LLMSettings, llm_cache_path, local_max_tokens
from ..errors import ConfigError
from .cache import ResponseCache

if TYPE_CHECKING:  # the client (and `openai`) is imported when an LLM is opened, not before
    from .client import LLMClient

# (model name, reply cap) -> a context manager yielding the running server's LLMSettings
LocalRuntime = Callable[[str, int], ContextManager[LLMSettings]]
_local_runtime: list[LocalRuntime] = []


def register_local_runtime(runtime: LocalRuntime) -> None:
    """Serve `TMEM_LLM_MODEL=local[:<name>]` with `runtime` from now on."""
    _local_runtime[:] = [runtime]


@contextmanager
def open_llm(settings: LLMSettings | None = None) -> Iterator[LLMClient]:
    """An LLM client for the settings (TMEM_LLM_* by default); starts the local model if asked."""
    from .client import LLMClient

    settings = settings or LLMSettings.from_env()
    path = llm_cache_path()
    cache = ResponseCache(path) if path else None
    try:
        if settings.is_local:
            if settings.stage_models:
                raise ConfigError(f"TMEM_LLM_MODEL_{settings.stage_models[0][0].upper()}: per-stage models "
                                  "need an endpoint serving several models; the local model is one model")
            if not _local_runtime:
                raise ConfigError("TMEM_LLM_MODEL=local: the local model is not enabled in this program; "
                                  "call tmem_graph.local.enable_local_llm() first (the tmem CLI does)")
            with _local_runtime[0](settings.model.partition(":")[2], local_max_tokens()) as served:
                yield LLMClient(replace(settings, base_url=served.base_url, model=served.model,
                                        api_key=served.api_key, timeout_s=max(settings.timeout_s, 600.0)),
                                cache=cache)
        else:
            yield LLMClient(settings, cache=cache)
    finally:
        if cache is not None:
            cache.close()
