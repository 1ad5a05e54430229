"""The shapes the service takes, as pydantic models: requests are validated with them (a field
a route or tool does not take is refused, a value of the wrong type is not coerced); and the
one-line rendering of a schema problem that HTTP and MCP share."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..format import MAX_NAME_CHARS, MAX_TEXT_BYTES

# -- problems ----------------------------------------------------------------------------------


def where(loc: tuple | list) -> str:
    """A pydantic error location as a path: ("turns", 0, "text") -> turns[0].text."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def problem(error: dict) -> str:
    """One pydantic error on one line, naming its field (no input value, no documentation link)."""
    if error["type"] == "json_invalid":   # its location ends with the offset, not a field
        return f"body: invalid JSON at character {error['loc'][-1]} ({error.get('ctx', {}).get('error', '')})"
    return f"{where(error['loc'])}: {error['msg']}" if error["loc"] else error["msg"]


# -- requests ----------------------------------------------------------------------------------

class Body(BaseModel):
    """A request body: a field the route does not take is refused (400 naming it), not ignored."""
    model_config = ConfigDict(extra="forbid")


class TurnIn(Body):
    """One turn as an agent adds it (MCP `add_memory`); the library checks the rest (empty
    text, the time's format) with messages of its own."""
    model_config = ConfigDict(extra="forbid", strict=True)
    speaker: str = Field(min_length=1, max_length=MAX_NAME_CHARS,
                         description="Who said it, e.g. the user's name or 'Assistant'.")
    text: str = Field(min_length=1, max_length=MAX_TEXT_BYTES, description="What was said, verbatim.")
    time: str | None = Field(default=None, description="When, ISO 8601 (e.g. 2026-12-01T19:04:00); default: unknown.")


class TurnRecord(TurnIn):
    """One turn of the turn-list format (shared/spec/cli.md, `tmem ingest --format turns`)."""
    session: int | None = Field(default=None, description="The conversation's session number.")
    id: str | None = Field(default=None, description="An id unique within the memory (default: assigned).")
