"""The configured LLM: an OpenAI-compatible endpoint, or the fully local in-process model
(`TMEM_LLM_MODEL=local` or `local:<name>`), with the persistent response cache."""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Iterator

from .cache import ResponseCache
from .client import LLMClient, LLMSettings


def cache_path() -> Path | None:
    """`$TMEM_LLM_CACHE` (`off` disables it), else `<data dir>/llm-cache.sqlite`."""
    from ..server import default_data_dir

    value = os.environ.get("TMEM_LLM_CACHE")
    if value and value.lower() in ("off", "0", "none"):
        return None
    return Path(value).expanduser() if value else default_data_dir() / "llm-cache.sqlite"


@contextmanager
def open_llm(settings: LLMSettings | None = None) -> Iterator[LLMClient]:
    """An LLM client for the settings (TMEM_LLM_* by default); starts the local model if asked."""
    settings = settings or LLMSettings.from_env()
    path = cache_path()
    cache = ResponseCache(path) if path else None
    try:
        if settings.model and settings.model.split(":")[0] == "local":
            from ..errors import ConfigError
            from .local import DEFAULT_MODEL, LocalLLM

            if settings.stage_models:
                raise ConfigError(f"TMEM_LLM_MODEL_{settings.stage_models[0][0].upper()}: per-stage models "
                                  "need an endpoint serving several models; the local model is one model")

            # a small model at temperature 0 sometimes repeats itself until the cap: keep it low
            cap = int(os.environ.get("TMEM_LLM_MAX_TOKENS") or 1024)
            with LocalLLM(settings.model.partition(":")[2] or DEFAULT_MODEL, api_key=True,
                          max_tokens=cap) as local:
                yield LLMClient(replace(settings, base_url=local.base_url, model=local.model,
                                        api_key=local.api_key, timeout_s=max(settings.timeout_s, 600.0)),
                                cache=cache)
        else:
            yield LLMClient(settings, cache=cache)
    finally:
        if cache is not None:
            cache.close()
