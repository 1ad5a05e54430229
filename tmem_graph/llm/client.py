"""The only importer of `openai`: chat calls against any OpenAI-compatible endpoint
(OpenAI, vLLM, Ollama, llama.cpp servers), optionally with a JSON-schema response format
validated with pydantic, bounded retries, and a usage ledger."""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Type, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from ..config import LLMSettings
from ..errors import InvalidReply, LLMError, LLMNotConfigured
from .cache import ResponseCache, cache_key

T = TypeVar("T", bound=BaseModel)
log = logging.getLogger(__name__)
RETRY_TEMPERATURE = 0.5  # an invalid reply at temperature 0 would come back identical


def _label(stage: str, what: str) -> str:
    """How errors name a call: the stage, then the object when there is one."""
    return f"{stage} {what}" if what else stage


@dataclass
class Usage:
    cached: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


@dataclass
class LLMClient:
    """Chat completions with retries; `ledger` sums usage per stage name."""

    settings: LLMSettings
    ledger: dict[str, Usage] = field(default_factory=dict)
    cache: ResponseCache | None = None

    def __post_init__(self) -> None:
        if not self.settings.model:
            raise LLMNotConfigured("no LLM configured: set TMEM_LLM_MODEL (and TMEM_LLM_BASE_URL for a "
                              "non-OpenAI endpoint, TMEM_LLM_API_KEY if it needs a key)")
        self._client = openai.OpenAI(base_url=self.settings.base_url,
                                     api_key=self.settings.api_key or "not-needed",
                                     timeout=self.settings.timeout_s, max_retries=0)
        self._lock = threading.Lock()

    def chat(self, messages: list[dict], stage: str, what: str = "") -> str:
        """The assistant's text reply to `messages`."""
        key = cache_key(self.settings.model_for(stage), messages, None)
        cached = self._cached(key, stage)
        if cached is not None:
            return cached
        text, _ = self._call(messages, stage, what, response_format=None)
        if self.cache is not None:
            self.cache.put(key, text)
        return text

    def structured(self, messages: list[dict], schema: Type[T], stage: str, what: str = "",
                   check: Callable[[T], str | None] | None = None, cut_is_final: bool = False) -> T:
        """A reply constrained to `schema`'s JSON schema and validated with it.

        `check` may reject a well-formed reply (return a reason); it is retried like an invalid
        one. Only accepted replies are cached. With `cut_is_final`, an invalid reply cut at the
        token cap raises `InvalidReply` at once instead of being retried: for a caller
        that can split the request, a retry of the same long answer is minutes spent for little.
        """
        json_schema = schema.model_json_schema()
        fmt = {"type": "json_schema", "json_schema": {"name": schema.__name__, "schema": json_schema,
                                                      "strict": False}}
        key = cache_key(self.settings.model_for(stage), messages, json_schema)
        cached = self._cached(key, stage)
        if cached is not None:
            return schema.model_validate_json(cached)
        last = ""
        for attempt in range(self.settings.retries + 1):
            text, finish = self._call(messages, stage, what, response_format=fmt, retry=attempt > 0)
            try:
                value = schema.model_validate_json(text)
            except (ValidationError, ValueError) as exc:
                last = str(exc).splitlines()[0]
                cut = finish == "length"
                log.info("%s %s: invalid reply (%s%s), attempt %d", stage, what, last,
                         ", cut at the token cap" if cut else "", attempt + 1)
                if cut and cut_is_final:
                    raise InvalidReply(f"{_label(stage, what)}: the {schema.__name__} reply was cut at "
                                       f"the token cap ({last})")
                continue
            reason = check(value) if check else None
            if reason:
                last = reason
                log.info("%s %s: reply rejected (%s), attempt %d", stage, what, reason, attempt + 1)
                continue
            if self.cache is not None:
                self.cache.put(key, text)
            return value
        raise InvalidReply(f"{_label(stage, what)}: no valid {schema.__name__} reply after "
                           f"{self.settings.retries + 1} attempts ({last})")

    def _cached(self, key: str, stage: str) -> str | None:
        text = self.cache.get(key) if self.cache is not None else None
        if text is not None:
            with self._lock:
                self.ledger.setdefault(stage, Usage()).cached += 1
        return text

    def _call(self, messages: list[dict], stage: str, what: str, response_format,
              retry: bool = False) -> tuple[str, str | None]:
        """One reply and its finish reason; `retry` (after an invalid one) samples at a higher
        temperature at least."""
        temperature = max(self.settings.temperature, RETRY_TEMPERATURE) if retry else self.settings.temperature
        kwargs = {"model": self.settings.model_for(stage), "messages": messages, "temperature": temperature}
        if response_format is not None:
            kwargs["response_format"] = response_format
        error = ""
        for attempt in range(self.settings.retries + 1):
            t0 = time.perf_counter()
            try:
                reply = self._client.chat.completions.create(**kwargs)
            except (openai.APIConnectionError, openai.APITimeoutError, openai.RateLimitError,
                    openai.InternalServerError) as exc:
                error = f"{type(exc).__name__}: {exc}"
                time.sleep(min(8.0, 0.5 * 2 ** attempt))
                continue
            except openai.APIStatusError as exc:  # 4xx other than 429: retrying will not help
                raise LLMError(f"{_label(stage, what)}: the LLM endpoint refused the "
                               f"request ({exc.status_code}: {exc.message})") from None
            seconds = time.perf_counter() - t0
            self._record(stage, reply, seconds)
            content = reply.choices[0].message.content if reply.choices else None
            finish = reply.choices[0].finish_reason if reply.choices else None
            log.info("%s %s: %.1f s, %s prompt + %s completion tokens, %s", stage, what, seconds,
                     reply.usage.prompt_tokens if reply.usage else "?",
                     reply.usage.completion_tokens if reply.usage else "?", finish or "no choices")
            if content:
                return content, finish
            error = "empty reply"
        raise LLMError(f"{_label(stage, what)}: no usable reply from "
                       f"{self.settings.base_url or 'OpenAI'} after {self.settings.retries + 1} "
                       f"attempts ({error})")

    def _record(self, stage: str, reply, seconds: float) -> None:
        with self._lock:
            usage = self.ledger.setdefault(stage, Usage())
            usage.calls += 1
            usage.seconds += seconds
            if reply.usage is not None:
                usage.prompt_tokens += reply.usage.prompt_tokens or 0
                usage.completion_tokens += reply.usage.completion_tokens or 0


def ledger_json(ledger: dict[str, Usage]) -> str:
    """The ledger as a JSON string (stored on the Memory node)."""
    return json.dumps({k: vars(v) for k, v in ledger.items()})
