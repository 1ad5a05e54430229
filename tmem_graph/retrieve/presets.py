"""Named sets of switched-off cascade components: the paper's ablations, as data.

Each component of `results.ABLATIONS` alone, in that order, then every trigger family at once
(`triggers.TRIGGER_ABLATIONS`); "full" switches nothing off.
"""

from __future__ import annotations

from ..triggers import TRIGGER_ABLATIONS
from .results import ABLATIONS

ABLATION_SETS: list[tuple[str, tuple[str, ...]]] = [
    ("full", ()),
    *((f"w/o {name}", (name,)) for name in ABLATIONS),  # the order of the paper's table
    ("w/o all triggers", TRIGGER_ABLATIONS),
]
