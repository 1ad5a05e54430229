"""Settings, read explicitly from the environment (never at import time)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from .errors import ConfigError

DEFAULT_URI = "bolt://127.0.0.1:7687"
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
FUSIONS = ("lanes", "rrf", "rrf_tail", "score")
CUE_FUSIONS = ("strongest", "rrf")


@dataclass(frozen=True)
class RetrievalSettings:
    """Budgets and gates of the retrieval cascade (paper defaults, τ calibrated per encoder)."""

    k_topics: int = 15
    k_scenes: int = 5
    k_items: int = 15
    r_trigger_items: int = 10
    tau: float = 0.35         # TrigRecall gate, calibrated for all-MiniLM-L6-v2 (docs/retrieval.md)
    k0: int = 60
    cue_k0: int = 30          # SceneCue fuses its three channels with k0 = 30 (reference code)
    cue_top: int = 10         # scenes that SceneCue adds to the pool
    candidates: int = 50      # depth of each channel's ranking before fusion
    cue_in_fusion: bool = True  # SceneCue / TrigRecall rankings join the final fusion of their layer
    fusion: str = "lanes"     # final fusion of the scene and item layers, one of FUSIONS (docs/retrieval.md)
    associative_share: float = 0.4   # share of a layer's budget the associative lane keeps ("lanes")
    cue_fusion: str = "strongest"    # how SceneCue fuses its channels, one of CUE_FUSIONS

    def __post_init__(self) -> None:
        if self.fusion not in FUSIONS:
            raise ConfigError(f"fusion {self.fusion!r}: choose from {', '.join(FUSIONS)}")
        if self.cue_fusion not in CUE_FUSIONS:
            raise ConfigError(f"cue_fusion {self.cue_fusion!r}: choose from {', '.join(CUE_FUSIONS)}")
        if not 0.0 <= self.associative_share <= 1.0:
            raise ConfigError(f"associative_share {self.associative_share}: must lie in [0, 1]")

    @classmethod
    def legacy(cls, **changes) -> "RetrievalSettings":
        """The fusion before lanes (RRF everywhere, SceneCue RRF k0 = 30), for comparison."""
        return cls(**{"fusion": "rrf", "cue_fusion": "rrf", **changes})


@dataclass(frozen=True)
class Settings:
    uri: str = DEFAULT_URI
    user: str | None = None
    password: str | None = None
    database: str | None = None
    encoder: str = DEFAULT_ENCODER
    encode_batch: int = 64
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None, **overrides) -> "Settings":
        """Settings from `NEO4J_*` and `TMEM_*` variables, then explicit overrides (None = unset)."""
        env = os.environ if env is None else env
        values = {
            "uri": env.get("NEO4J_URI") or DEFAULT_URI,
            "user": env.get("NEO4J_USER") or env.get("NEO4J_USERNAME"),
            "password": env.get("NEO4J_PASSWORD"),
            "database": env.get("NEO4J_DATABASE"),
            "encoder": env.get("TMEM_ENCODER") or DEFAULT_ENCODER,
        }
        if env.get("TMEM_ENCODE_BATCH"):
            values["encode_batch"] = _positive_int("TMEM_ENCODE_BATCH", env["TMEM_ENCODE_BATCH"])
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def with_retrieval(self, **changes) -> "Settings":
        """A copy with some retrieval settings changed."""
        return replace(self, retrieval=replace(self.retrieval, **changes))


def _positive_int(name: str, raw: str) -> int:
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name}: {raw!r} is not an integer") from None
    if value <= 0:
        raise ConfigError(f"{name}: must be positive, not {value}")
    return value
