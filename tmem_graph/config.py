"""Every setting of the library, and the only place that reads the environment (never at
import time: each `from_env` or function below reads it when called). The local launchers in
`tmem_graph.local` read their own process settings (Java, Maven, threads) themselves.

- `Settings`: Neo4j connection, encoder, `RetrievalSettings` (budgets, gates, fusion);
- `LLMSettings`: the OpenAI-compatible endpoint and per-stage models;
- `default_data_dir`, `llm_cache_path`, `local_max_tokens`, `benchmark_data_dir_override`:
  where things live on disk and the local model's reply cap;
- `quiet_model_libraries`: the environment the encoder's libraries read when imported.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

from .errors import ConfigError

DEFAULT_URI = "bolt://127.0.0.1:7687"
DEFAULT_ENCODER = "all-MiniLM-L6-v2"
FUSIONS = ("lanes", "joint", "rrf", "rrf_tail", "score")
MAX_BUDGET = 10_000   # the largest budget or depth a recall accepts (queries stay bounded)
CUE_FUSIONS = ("strongest", "rrf")
# how a scene the Horizon family's search reached is scored: by its best view, or by the mean of
# all its Horizon views (docs/design-and-evidence.mds Horizon views vote")
HORIZON_VIEWS = ("best", "mean")
# with the mean, the Horizon family lists the memory's scenes by the mean cosine of all their Horizon
# views (one search of their Horizon vectors, store/scene_horizon), at most this many multiples of
# `candidates` (200 scenes by default, as deep as the Scene-trigger views' list; every scene of a
# LoCoMo-sized memory; 1,000 cost a 10,000-item memory ~8 ms a recall: docs/design-and-evidence.md)
HORIZON_MEAN_DEPTH = 4
# the associative lane's order in the final scene fusion: SceneCue's, the Horizon family's own, an
# RRF (k0 = cue_k0) of the Horizon family's order and SceneCue's, and of those and the scene
# vector's (the pool by the cosine of a scene's title, summary and narrative), or the Horizon
# family's scores and the scene vector's fused as SceneCue fuses its channels (`strongest`: a
# scene ranked by the list where it stands out most)
ASSOCIATIVE_ORDERS = ("scenecue", "horizon", "horizon+scenecue", "horizon+scenecue+dense", "strongest(horizon,dense)")
MAX_BUDGET_TOKENS = 100_000   # the largest evidence budget a recall accepts
# with a token budget, the cascade picks one scene per this many tokens (at least kS; chosen on the
# budget curve of the whole of conv-26, docs/evaluation.md "The whole conversation")
SCENE_TOKENS = 250
ITEM_TOKENS = 100     # ... and one item per this many tokens (at least kI); the packer then fills the budget
# ... and the associative pass one scene per this many tokens of its share (`opening_tokens`; chosen
# leave-one-memory-out, every fold 25 of 10-40: docs/design-and-evidence.md)
OPENING_TOKENS = 25
# ... and the turn lane asks for one turn per this many tokens of the budget (at least `candidates`),
# so that it can fill the whole budget on its own (a LoCoMo turn costs about 30 tokens)
LANE_TOKENS = 25
# the weak-match threshold per encoder (each scores on its own scale), chosen leave-one-memory-out
# on the tuning memories traced with it (docs/design-and-evidence.md); an encoder not named
# here gets the default's
WEAK_MATCH = {"all-MiniLM-L6-v2": 0.76, "all-mpnet-base-v2": 0.74}


@dataclass(frozen=True)
class RetrievalSettings:
    """Budgets and gates of the retrieval cascade (paper defaults, τ calibrated per encoder)."""

    k_topics: int = 15
    k_scenes: int = 5
    k_items: int = 15
    k_recent: int = 6         # turns no scene holds yet handed over (channel `recent`, docs/live.md)
    r_trigger_items: int = 10
    tau: float = 0.35         # TrigRecall gate, calibrated for all-MiniLM-L6-v2 (docs/design-and-evidence.md)
    k0: int = 60
    cue_k0: int = 30          # SceneCue fuses its three channels with k0 = 30 (reference code)
    cue_top: int = 10         # scenes that SceneCue adds to the pool
    candidates: int = 50      # depth of each channel's ranking before fusion
    item_search: int = 0      # items found by BM25 and dense search over the whole memory that join the
                              # item pool beside the chosen scenes' items and TrigRecall's (0: the paper's pool)
    cue_in_fusion: bool = True  # SceneCue / TrigRecall rankings join the final fusion of their layer
    fusion: str = "lanes"     # final fusion of the scene and item layers, one of FUSIONS (docs/design-and-evidence.md)
    associative_share: float = 0.4   # share of a layer's budget the associative lane keeps ("lanes")
    scene_associative_share: float | None = None   # the scene layer's own share (None: associative_share)
    associative_first: bool = False  # the scenes' associative lane takes the first place ("lanes"; weak default)
    cue_fusion: str = "strongest"    # how SceneCue fuses its channels, one of CUE_FUSIONS
    horizon_views: str = "mean"      # a scene's Horizon score: its views' mean or its best view, one of HORIZON_VIEWS
    budget_tokens: int | None = None  # one evidence budget the packer fills (retrieve/pack.py); None: kS, kI
    # the evidence budget of what an answer model reads (`ask`, `tmem eval`) when `budget_tokens`
    # is not set: packed evidence is the default answer evidence (docs/design-and-evidence.md); None: kS, kI
    answer_budget_tokens: int | None = 2000
    lane_share: float = 0.4   # with a budget, the share the turn lane fills after the scenes and items (0: no lane)
    cue_share: float = 0.0    # with a budget, the share spent on pointers to the associative list's first scenes
                              # (`cue_from`), each by its best turn alone (docs/design-and-evidence.md; 0: none)
    cue_from: str = "strongest(horizon,dense)"   # the associative pass's list, one of ASSOCIATIVE_ORDERS:
                                # the Horizon family's and the scene vector's scores by the strongest rule
                                # (default), "horizon" (the Horizon family's order), "scenecue"
                                # (SceneCue's) or an RRF of those (and the scene vector's)
    lane_dense_weight: float = 1.0  # the turn lane's RRF weight of the passage cosine against BM25's 1
    # the turn lane's RRF k0: each list's own first turns lead (60, flat hybrid's, flattens them);
    # chosen leave-one-memory-out, four folds of six 5, two 10 (docs/design-and-evidence.mds order")
    lane_k0: int = 5
    joint_k0: int = 5         # the "joint" fusion: RRF with this k0 of the descriptive and the associative order
    # with a budget, the associative pass may open one scene of its list per this many tokens of
    # its share: how far down the list it reaches. A pointer, one turn under its day's line, costs
    # 32-37 tokens on LoCoMo's dialogue, so the pass reaches further than its share holds and
    # opens what fits in the listing order (`weak_associative_order`)
    opening_tokens: int = OPENING_TOKENS
    # a query whose nearest turn scores below `weak_match` (passage cosine on Neo4j's [0, 1]
    # scale) is a weak match: similarity found nothing close, so the triggers get more say: the
    # lanes fusion's associative share becomes `weak_associative_share`, and with a budget the
    # evidence goes to the associative list's pointers (one turn of each of its first scenes)
    # and to the turns nearest it, with the weak shares (docs/design-and-evidence.md; 0: never)
    weak_match: float = 0.76
    # ... and no turn holds `weak_words` of the query's word weight (its terms' IDF on the
    # memory's turns, `lexical.Bm25.held`): a query that shares its rare words with a turn is
    # answered by that turn, not by a latent arc (docs/design-and-evidence.md;
    # 0: words never make a match strong)
    weak_words: float = 0.38
    weak_associative_share: float = 0.8
    # ... and a weak match's recall without a budget gives this share of its kS scene places to
    # the associative lane (1: all of them; its items keep `weak_associative_share`). Packed, the
    # pointers hold the associative scenes, and the scenes keep `weak_associative_share`
    # (docs/design-and-evidence.mds scenes")
    weak_listed_share: float = 1.0
    weak_associative_first: bool = True
    weak_cue_share: float = 0.9
    weak_lane_share: float = 0.0
    weak_lane_dense_weight: float = 100.0
    associative_order: str = "scenecue"   # the associative lane's order (one of ASSOCIATIVE_ORDERS) ...
    weak_associative_order: str = "strongest(horizon,dense)"   # ... and a weak match's, which also lists
                                                             # the packed pointers (docs/design-and-evidence.md)

    def __post_init__(self) -> None:
        for name in ("k_topics", "k_scenes", "k_items", "k_recent", "r_trigger_items", "cue_top", "item_search"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_BUDGET:
                raise ConfigError(f"{name} {value!r}: must be an integer from 0 to {MAX_BUDGET}")
        for name in ("k0", "cue_k0", "lane_k0", "candidates", "joint_k0", "opening_tokens"):  # a depth of 0 is refused by Neo4j
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_BUDGET:
                raise ConfigError(f"{name} {value!r}: must be an integer from 1 to {MAX_BUDGET}")
        if not -1.0 <= self.tau <= 1.0:
            raise ConfigError(f"tau {self.tau}: a cosine gate must lie in [-1, 1]")
        if self.fusion not in FUSIONS:
            raise ConfigError(f"fusion {self.fusion!r}: choose from {', '.join(FUSIONS)}")
        if self.cue_fusion not in CUE_FUSIONS:
            raise ConfigError(f"cue_fusion {self.cue_fusion!r}: choose from {', '.join(CUE_FUSIONS)}")
        if self.horizon_views not in HORIZON_VIEWS:
            raise ConfigError(f"horizon_views {self.horizon_views!r}: choose from {', '.join(HORIZON_VIEWS)}")
        if self.budget_tokens is not None and (isinstance(self.budget_tokens, bool)
                                               or not isinstance(self.budget_tokens, int)
                                               or not 1 <= self.budget_tokens <= MAX_BUDGET_TOKENS):
            raise ConfigError(f"budget_tokens {self.budget_tokens!r}: must be an integer from 1 to {MAX_BUDGET_TOKENS}")
        if self.answer_budget_tokens is not None and (isinstance(self.answer_budget_tokens, bool)
                                                      or not isinstance(self.answer_budget_tokens, int)
                                                      or not 1 <= self.answer_budget_tokens <= MAX_BUDGET_TOKENS):
            raise ConfigError(f"answer_budget_tokens {self.answer_budget_tokens!r}: must be an integer from 1 to "
                              f"{MAX_BUDGET_TOKENS}, or None (kS whole scenes and kI items)")
        shares = {"associative_share": self.associative_share}
        if self.scene_associative_share is not None:   # None: the scene layer takes associative_share
            shares["scene_associative_share"] = self.scene_associative_share
        for name, value in shares.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= 1.0:
                raise ConfigError(f"{name} {value!r}: must lie in [0, 1]")
        if isinstance(self.lane_share, bool) or not isinstance(self.lane_share, (int, float)) \
                or not 0.0 <= self.lane_share < 1.0:
            raise ConfigError(f"lane_share {self.lane_share!r}: must lie in [0, 1) (0: no turn lane)")
        if isinstance(self.lane_dense_weight, bool) or not isinstance(self.lane_dense_weight, (int, float)) \
                or not 0.0 <= self.lane_dense_weight <= 100.0:
            raise ConfigError(f"lane_dense_weight {self.lane_dense_weight!r}: must lie in [0, 100]")
        if isinstance(self.weak_match, bool) or not isinstance(self.weak_match, (int, float)) \
                or not 0.0 <= self.weak_match <= 1.0:
            raise ConfigError(f"weak_match {self.weak_match!r}: a score on [0, 1] (0: never)")
        if isinstance(self.weak_words, bool) or not isinstance(self.weak_words, (int, float)) \
                or not 0.0 <= self.weak_words <= 1.0:
            raise ConfigError(f"weak_words {self.weak_words!r}: a share on [0, 1] (0: words never make a match strong)")
        if self.weak_match > 0:   # the weak shares are checked as settings of their own, budget or not
            try:
                replace(self, budget_tokens=1, weak_match=0.0, associative_share=self.weak_associative_share,
                        scene_associative_share=self.weak_listed_share, cue_share=self.weak_cue_share,
                        lane_share=self.weak_lane_share, lane_dense_weight=self.weak_lane_dense_weight)
            except ConfigError as exc:
                raise ConfigError(f"the weak-match settings (weak_*): {exc}") from None
        for name in ("associative_first", "weak_associative_first", "cue_in_fusion"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} {getattr(self, name)!r}: must be true or false")
        for name in ("associative_order", "weak_associative_order"):
            if getattr(self, name) not in ASSOCIATIVE_ORDERS:
                raise ConfigError(f"{name} {getattr(self, name)!r}: choose from {', '.join(ASSOCIATIVE_ORDERS)}")
        if self.cue_from not in ASSOCIATIVE_ORDERS:
            raise ConfigError(f"cue_from {self.cue_from!r}: choose from {', '.join(ASSOCIATIVE_ORDERS)}")
        if isinstance(self.cue_share, bool) or not isinstance(self.cue_share, (int, float)) \
                or not 0.0 <= self.cue_share < 1.0 or self.cue_share + self.lane_share >= 1.0:
            raise ConfigError(f"cue_share {self.cue_share!r}: must lie in [0, 1) and leave room for the scenes "
                              f"beside lane_share {self.lane_share!r} (their sum under 1)")

    def for_budget(self) -> "RetrievalSettings":
        """The settings the cascade runs with before packing: with a token budget, deep enough
        to fill it (one scene per SCENE_TOKENS, one item per ITEM_TOKENS, at least kS and kI)."""
        if self.budget_tokens is None:
            return self
        return replace(self, k_scenes=min(MAX_BUDGET, max(self.k_scenes, self.budget_tokens // SCENE_TOKENS)),
                       k_items=min(MAX_BUDGET, max(self.k_items, self.budget_tokens // ITEM_TOKENS)))

    def for_answer(self) -> "RetrievalSettings":
        """The settings of the evidence an answer model reads: these, packed to
        `answer_budget_tokens` when no `budget_tokens` is set."""
        if self.budget_tokens is not None or self.answer_budget_tokens is None:
            return self
        return replace(self, budget_tokens=self.answer_budget_tokens)

    def split_for(self, match: float | None, words: float | None = None) -> "RetrievalSettings":
        """The settings a recall runs with once the score of its nearest turn (`match`) and the
        share of the query's word weight its nearest turn in words holds (`words`) are known: a
        weak match (`weak`), `weak_associative_share` takes the place of `associative_share`,
        without a budget `weak_listed_share` that of the scene layer's share and
        `weak_associative_order` and `weak_associative_first` those of
        `associative_order` and `associative_first` (packed, the scenes are listed in that
        recall's order, `Recall.ranked`), and with a budget, the weak shares that of
        `cue_share`, `lane_share` and `lane_dense_weight`; otherwise these settings."""
        if not self.weak(match, words):
            return self
        changes = {"associative_share": self.weak_associative_share, "weak_match": 0.0}
        if self.budget_tokens is None:   # packed, SceneCue's order measured better (docs/design-and-evidence.md)
            changes.update(associative_order=self.weak_associative_order,
                           associative_first=self.weak_associative_first,
                           scene_associative_share=self.weak_listed_share)
        else:
            changes.update(cue_share=self.weak_cue_share, lane_share=self.weak_lane_share,
                           lane_dense_weight=self.weak_lane_dense_weight)
        return replace(self, **changes)

    def weak(self, match: float | None, words: float | None = None) -> bool:
        """Whether a recall is a weak match: its nearest turn scores under `weak_match`, and no
        turn holds `weak_words` of the query's word weight (unknown: not held)."""
        if match is None or match >= self.weak_match:
            return False
        return not (self.weak_words > 0 and words is not None and words >= self.weak_words)

    def lane_depth(self) -> int:
        """How many turns each list of the turn lane asks for: enough to fill the budget alone."""
        if self.budget_tokens is None:
            return self.candidates
        return min(MAX_BUDGET, max(self.candidates, self.budget_tokens // LANE_TOKENS))

    def cue_scenes(self) -> int:
        """How many scenes of the `cue_from` list the associative pass may open (0 without a budget)."""
        if self.budget_tokens is None:
            return 0
        return min(MAX_BUDGET, int(self.budget_tokens * self.cue_share) // self.opening_tokens)

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
    write_batch: int = 500   # rows per write query (an import of a new memory: per transaction)
    scene_idle_s: float | None = 3600.0   # a pause this long (conversation time) closes a scene; None: never
    retrieval: RetrievalSettings = field(default_factory=RetrievalSettings)

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides) -> "Settings":
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
        if env.get("TMEM_WRITE_BATCH"):
            values["write_batch"] = _positive_int("TMEM_WRITE_BATCH", env["TMEM_WRITE_BATCH"])
        if env.get("TMEM_SCENE_IDLE_MINUTES"):
            raw = env["TMEM_SCENE_IDLE_MINUTES"]
            values["scene_idle_s"] = None if raw.lower() == "off" else 60.0 * _positive_int("TMEM_SCENE_IDLE_MINUTES", raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        if "retrieval" not in values and values["encoder"] in WEAK_MATCH:   # each encoder's own scale
            values["retrieval"] = RetrievalSettings(weak_match=WEAK_MATCH[values["encoder"]])
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


# --------------------------------------------------------------------------------------------
# The LLM
# --------------------------------------------------------------------------------------------

STAGES = ("segment", "scene", "topic", "items", "item_triggers", "scene_triggers", "persona", "answer", "judge")


@dataclass(frozen=True)
class LLMSettings:
    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    temperature: float = 0.0
    timeout_s: float = 120.0
    retries: int = 3
    stage_models: tuple[tuple[str, str], ...] = ()  # (stage, model) pairs overriding `model`

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> "LLMSettings":
        """From TMEM_LLM_BASE_URL, TMEM_LLM_API_KEY (or OPENAI_API_KEY), TMEM_LLM_MODEL, and
        TMEM_LLM_MODEL_<STAGE> (e.g. TMEM_LLM_MODEL_ANSWER) for a model of the same endpoint
        used by one stage only."""
        env = os.environ if env is None else env
        unknown = [k for k in env if k.startswith("TMEM_LLM_MODEL_") and k[15:].lower() not in STAGES]
        if unknown:
            raise ConfigError(f"{unknown[0]}: no such stage; per-stage models are TMEM_LLM_MODEL_<STAGE> "
                              f"with STAGE one of {', '.join(s.upper() for s in STAGES)}")
        overrides = tuple((s, env[f"TMEM_LLM_MODEL_{s.upper()}"]) for s in STAGES
                          if env.get(f"TMEM_LLM_MODEL_{s.upper()}"))
        return cls(base_url=env.get("TMEM_LLM_BASE_URL") or env.get("OPENAI_BASE_URL"),
                   api_key=env.get("TMEM_LLM_API_KEY") or env.get("OPENAI_API_KEY"),
                   model=env.get("TMEM_LLM_MODEL"), stage_models=overrides)

    def model_for(self, stage: str) -> str | None:
        """The model that answers `stage`: its override, else the default model."""
        return dict(self.stage_models).get(stage, self.model)

    @property
    def is_local(self) -> bool:
        """`local` or `local:<name>`: the in-process model of `tmem_graph.local`."""
        return bool(self.model) and self.model.split(":")[0] == "local"


def llm_cache_path(env: Mapping[str, str] | None = None) -> Path | None:
    """`$TMEM_LLM_CACHE` (`off` disables it), else `<data dir>/llm-cache.sqlite`."""
    env = os.environ if env is None else env
    value = env.get("TMEM_LLM_CACHE")
    if value and value.lower() in ("off", "0", "none"):
        return None
    return Path(value).expanduser() if value else default_data_dir(env) / "llm-cache.sqlite"


def local_max_tokens(env: Mapping[str, str] | None = None) -> int:
    """`$TMEM_LLM_MAX_TOKENS`, else 1024: the local model's reply cap (a small model at
    temperature 0 sometimes repeats itself until the cap, so it is kept low)."""
    env = os.environ if env is None else env
    raw = env.get("TMEM_LLM_MAX_TOKENS")
    return _positive_int("TMEM_LLM_MAX_TOKENS", raw) if raw else 1024


# --------------------------------------------------------------------------------------------
# Places on disk, and the encoder libraries' environment
# --------------------------------------------------------------------------------------------


def default_data_dir(env: Mapping[str, str] | None = None) -> Path:
    """`$TMEM_HOME`, else `$XDG_DATA_HOME/tmem-graph`, else `~/.local/share/tmem-graph`."""
    env = os.environ if env is None else env
    if env.get("TMEM_HOME"):
        return Path(env["TMEM_HOME"]).expanduser()
    if env.get("XDG_DATA_HOME"):
        return Path(env["XDG_DATA_HOME"]).expanduser() / "tmem-graph"
    return Path.home() / ".local" / "share" / "tmem-graph"


def serve_token(env: Mapping[str, str] | None = None) -> str | None:
    """`$TMEM_SERVE_TOKEN`: the bearer token `tmem serve` requires of its callers (None: none)."""
    env = os.environ if env is None else env
    return env.get("TMEM_SERVE_TOKEN") or None


def benchmark_data_dir_override(env: Mapping[str, str] | None = None) -> Path | None:
    """`$TMEM_DATA_DIR`: where LoCoMo and LoCoMo-Plus are, when not in the usual places."""
    env = os.environ if env is None else env
    return Path(env["TMEM_DATA_DIR"]) if env.get("TMEM_DATA_DIR") else None


def quiet_model_libraries(offline: bool) -> None:
    """Set, unless already set, what tokenizers, transformers and the hub read when imported:
    no fork warnings or progress bars, and with `offline` no network at all."""
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    if offline:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
