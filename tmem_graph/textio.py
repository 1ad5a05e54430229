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
    except (OSError, UnicodeDecodeError) as exc:
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


def text_problem(value: str) -> str | None:
    """Why `value` cannot be stored as text (a lone surrogate, which UTF-8 cannot encode), or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"not valid Unicode text (a lone surrogate at character {exc.start})"
    return None


def value_problems(data: Any, where: str = "") -> list[str]:
    """Every value of a decoded input that nothing downstream could store, with its path
    (`turns[3].text: not valid Unicode text …`): texts UTF-8 cannot encode, integers outside
    64 bits, nesting deeper than `MAX_DEPTH`. Checked before any other rule, so that the
    other checks, the LLM and the database only ever see storable values."""
    problems: list[str] = []
    stack = [(where, data, 0)]
    while stack:
        path, value, depth = stack.pop()
        if isinstance(value, str):
            why = text_problem(value)
            if why:
                problems.append(f"{path or 'value'}: {why}")
        elif isinstance(value, bool):
            continue
        elif isinstance(value, int):
            if not INT64[0] <= value <= INT64[1]:
                problems.append(f"{path or 'value'}: {value} does not fit in a 64-bit integer")
        elif isinstance(value, (list, dict)):
            if depth >= MAX_DEPTH:
                problems.append(f"{path or 'value'}: nested deeper than {MAX_DEPTH} levels")
                continue
            pairs = value.items() if isinstance(value, dict) else enumerate(value)
            for key, child in reversed(list(pairs)):
                if isinstance(key, str) and text_problem(key):
                    problems.append(f"{path or 'value'}: a key that is {text_problem(key)}")
                    continue
                sub = f"{path}[{key}]" if isinstance(value, list) else (f"{path}.{key}" if path else str(key))
                stack.append((sub, child, depth + 1))
    return problems
