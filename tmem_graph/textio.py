"""Reading text and JSON files with errors a user can act on, ISO dates, and the checks every
decoded input goes through before anything else sees it (`value_problems`): shared by the
memory format, the construction inputs, recall queries and the evaluation data."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import ValidationError

MAX_DEPTH = 32           # nesting an input may have (a memory document needs 5)
INT64 = (-2**63, 2**63 - 1)   # what Neo4j stores as an integer


def is_iso_datetime(value: str) -> bool:
    """True if `value` parses as an ISO 8601 date or date-time."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def read_text(path: str | Path) -> str:
    """A UTF-8 text file's content; a missing, unreadable or non-regular file (a directory, a
    FIFO that would block, a device) is a ValidationError."""
    p = Path(path)
    try:
        if p.exists() and not p.is_file():
            raise ValidationError([f"{p}: not a regular file"])
        return p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ValidationError([f"{p}: no such file"]) from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:  # ValueError: e.g. a NUL in the path
        raise ValidationError([f"{p}: cannot be read ({exc})"]) from None


def parse_json(raw: str, where: str | Path) -> Any:
    """Decoded JSON; a syntax error is a ValidationError naming `where`, line and column."""
    try:
        return json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValidationError([f"{where}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"]) from None
    except RecursionError:
        raise ValidationError([f"{where}: JSON nested too deeply to read (an input needs at most "
                               f"{MAX_DEPTH} levels)"]) from None
    except ValueError as exc:  # e.g. an integer of more digits than Python converts
        raise ValidationError([f"{where}: cannot be read as JSON ({exc})"]) from None


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text (a lone surrogate, which UTF-8 cannot encode), or None."""
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid Unicode text (a lone surrogate at character {exc.start})"
    return None


def value_problems(data: Any, where: str = "") -> list[str]:
    """Every value of a decoded input that nothing downstream could store, with its path
    (`turns[3].text: not valid Unicode text …`): texts UTF-8 cannot encode, integers outside
    64 bits, nesting deeper than `MAX_DEPTH`. Checked before any other rule, so that the
    other checks, the LLM and the database only ever see storable values. Iterative, and a
    path is spelled out only for a value that has a problem."""
    problems: list[str] = []
    # (value, depth, its path as a chain: (parent chain, key) or None for the root)
    stack: list[tuple[Any, int, tuple | None]] = [(data, 0, None)]

    def spell(chain: tuple | None) -> str:
        keys = []
        while chain is not None:
            chain, key = chain
            keys.append(key)
        path = where
        for key in reversed(keys):
            if isinstance(key, int):
                path += f"[{key}]"
            else:
                shown = key if len(key) <= 60 else key[:57] + "..."
                path = f"{path}.{shown}" if path else shown
        return path or "value"

    while stack:
        value, depth, chain = stack.pop()
        if isinstance(value, str):
            why = text_problem(value)
            if why:
                problems.append(f"{spell(chain)}: {why}")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not INT64[0] <= value <= INT64[1]:
                problems.append(f"{spell(chain)}: {value} does not fit in a 64-bit integer")
        elif isinstance(value, (list, dict)):
            if depth >= MAX_DEPTH:
                problems.append(f"{spell(chain)}: nested deeper than {MAX_DEPTH} levels")
                continue
            if isinstance(value, dict):
                bad = [key for key in value if not key.isascii() and text_problem(key)]
                problems += [f"{spell(chain)}: a key that is {text_problem(key)}" for key in bad]
                items = [(k, v) for k, v in value.items() if k not in bad] if bad else value.items()
                stack.extend((child, depth + 1, (chain, key)) for key, child in reversed(list(items)))
            else:
                stack.extend((child, depth + 1, (chain, n)) for n, child in reversed(list(enumerate(value))))
    return problems
