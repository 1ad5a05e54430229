"""Named sets of switched-off cascade components: the paper's ablations, as data.

Each component of `results.ABLATIONS` alone, in that order, then every trigger family at once
(`triggers.TRIGGER_ABLATIONS`); "full" switches nothing off. `EVAL_SETS`, what the evaluation
reports, adds the project's own components beyond the paper's table, one at a time.
"""

from __future__ import annotations

from ..triggers import TRIGGER_ABLATIONS
from .results import ABLATIONS

ABLATION_SETS: list[tuple[str, tuple[str, ...]]] = [
    ("full", ()),
    *((f"w/o {name}", (name,)) for name in ABLATIONS),  # the order of the paper's table
    ("w/o all triggers", TRIGGER_ABLATIONS),
]

EVAL_SETS: list[tuple[str, tuple[str, ...]]] = ABLATION_SETS + [
    ("w/o turns", ("turns",)),   # the turn channel and the packer's turn lane (docs/design-and-evidence.md)
]
