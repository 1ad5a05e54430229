"""Reading text and JSON files with errors a user can act on, and ISO dates: shared by the
memory format, the construction inputs and the evaluation data."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from .errors import ValidationError


def is_iso_datetime(value: str) -> bool:
    """True if `value` parses as an ISO 8601 date or date-time."""
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return True


def read_text(path: str | Path) -> str:
    """A UTF-8 text file's content; a missing or unreadable file is a ValidationError."""
    p = Path(path)
    try:
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
