"""The benchmark kit: `python -m benchmarks COMMAND [options]` (`COMMAND --help` for its options).

Every command prints Markdown tables; those that take `--out` also write everything they
measured there as JSON. Run them from the repository's root, against the server of NEO4J_URI.
"""

from __future__ import annotations

import importlib
import sys

# command: (module, what it measures)
COMMANDS = {
    "recall-quality": ("quality", "LoCoMo evidence recall per evidence budget: cascade, ablations, flat baselines"),
    "latency": ("latency", "warm Memory.recall per configuration, optionally beside an older checkout"),
    "scale": ("scale", "recall as a memory grows: synthetic memories, HTTP and fresh recall, query parts"),
    "import": ("importing", "import throughput of a large synthetic memory, and its replacement"),
    "service": ("service", "warm recall through `tmem serve`, then concurrent clients while turns are added"),
    "reader": ("reader", "a blind strong-reader check of the evidence (write, judge-files, report)"),
    "index-recall": ("index_recall", "how much of the exact rankings the index searches return"),
    "fixture": ("fixture", "export an evaluation memory as a fixture, or import fixtures"),
    "rescore": ("rescore", "import the committed fixtures and re-run what docs/evaluation.md reports"),
}


def usage() -> str:
    width = max(map(len, COMMANDS))
    return (__doc__.split("\n\n")[0] + "\n\ncommands:\n"
            + "\n".join(f"  {name:{width}}  {what}" for name, (_, what) in COMMANDS.items()))


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        raise SystemExit(0 if argv else 2)
    if argv[0] not in COMMANDS:
        raise SystemExit(f"unknown command {argv[0]!r}\n\n{usage()}")
    module = importlib.import_module(f"benchmarks.{COMMANDS[argv[0]][0]}")
    module.main(argv[1:], prog=f"python -m benchmarks {argv[0]}")


if __name__ == "__main__":
    main()
