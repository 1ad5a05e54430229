"""The shapes the service takes and answers, as pydantic models: requests are validated with
them (a field a route or tool does not take is refused, a value of the wrong type is not
coerced); answers are declared with them in OpenAPI but not re-validated at run time (the
integration tests check every answer they see against the document). Also the one-line
rendering of a schema problem that HTTP and MCP share."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticCustomError

from ..format import FORMAT, MAX_NAME_CHARS, MAX_TEXT_BYTES
from ..textio import text_problem

# -- problems ----------------------------------------------------------------------------------


def where(loc: tuple | list) -> str:
    """A pydantic error location as a path: ("turns", 0, "text") -> turns[0].text."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def problem(error: dict) -> str:
    """One pydantic error on one line, naming its field (no input value, no documentation link)."""
    if error["type"] == "json_invalid":   # its location ends with the offset, not a field
        return f"body: invalid JSON at character {error['loc'][-1]} ({error.get('ctx', {}).get('error', '')})"
    if error["type"] == "string_unicode":   # pydantic's own check of a string it measures
        return f"{where(error['loc'])}: not valid Unicode text (a lone surrogate)"
    return f"{where(error['loc'])}: {error['msg']}" if error["loc"] else error["msg"]


# -- what a caller sends ---------------------------------------------------------------------------

def _text(value: str) -> str:
    """`value` if UTF-8 can encode it (no lone surrogate), so that it can be stored and answered."""
    if problem := text_problem(value):
        raise PydanticCustomError("text", problem)
    return value


def _id(value: str) -> str:
    """`value` if it is text without a NUL character (an id is named in paths and logs)."""
    if "\x00" in _text(value):
        raise PydanticCustomError("text", "holds a NUL character")
    return value


Text = Annotated[str, AfterValidator(_text)]   # every string a caller sends, HTTP or MCP
Id = Annotated[str, AfterValidator(_id)]


# -- requests ----------------------------------------------------------------------------------

class Body(BaseModel):
    """A request body: a field the route does not take is refused (400 naming it), not ignored,
    and a value of another type than declared is refused, not coerced ("2", true or 2.0 for an
    integer, "yes" for a boolean)."""
    model_config = ConfigDict(extra="forbid", strict=True)


class TurnIn(Body):
    """One turn as an agent adds it (MCP `add_memory`); the library checks the rest (empty
    text, the time's format) with messages of its own."""
    speaker: Text = Field(min_length=1, max_length=MAX_NAME_CHARS,
                         description="Who said it, e.g. the user's name or 'Assistant'.")
    text: Text = Field(min_length=1, max_length=MAX_TEXT_BYTES, description="What was said, verbatim.")
    time: Text | None = Field(default=None, description="When, ISO 8601 (e.g. 2026-12-01T19:04:00); default: unknown.")


class TurnRecord(TurnIn):
    """One turn of the turn-list format (shared/spec/cli.md, `tmem ingest --format turns`)."""
    session: int | None = Field(default=None, description="The conversation's session number.")
    id: Id | None = Field(default=None, description="An id unique within the memory (default: assigned).")


# -- answers -----------------------------------------------------------------------------------

class Out(BaseModel):
    """An answer: every field it carries is declared (additionalProperties false)."""
    model_config = ConfigDict(extra="forbid")


class Error(Out):
    error: str = Field(description="One line that says what is wrong or what to do.")


class Problems(Out):
    error: str = Field(description="Every problem, joined on one line.")
    problems: list[str] = Field(description="One line per problem, each naming its field (body.query: Field required).")


class Health(Out):
    ok: bool = Field(description="Whether the database answered just now.")
    worker: str = Field(description="The build worker: starting, running, off, retrying after an error, stopped: why.")
    error: str | None = Field(None, description="Present when ok is false.")


class Counts(Out):
    turns: int
    pending_turns: int = Field(description="Turns no scene holds yet.")
    scenes: int
    topics: int
    items: int
    triggers: int
    personas: int


class MemorySummary(Counts):
    id: str
    encoder: str
    dim: int
    created_at: str


class ObjectPage(Out):
    """A page of a memory's turns, scenes or items (docs/api.md, "list")."""
    memory_id: str
    kind: Literal["turns", "scenes", "items"]
    objects: list[dict[str, Any]] = Field(description="each turn, scene or item as docs/api.md shows it")
    next: str | None = Field(description="`after` for the next page; null on the last page")


class ObjectDetail(Out):
    """One turn, scene or item with its trigger views, sources and neighbours (docs/api.md, "get")."""
    memory_id: str
    kind: Literal["turn", "scene", "item"]
    object: dict[str, Any]
    triggers: list[dict[str, Any]]
    sources: dict[str, Any]
    neighbours: dict[str, Any]
    derived: dict[str, Any] | None = Field(default=None, description="turns and scenes: the items resting on them")


class ObjectDeleted(Out):
    """What deleting one turn or item removed, and what it left stale (docs/api.md, "delete")."""
    memory_id: str
    kind: Literal["turn", "item"]
    id: str
    deleted: dict[str, Any] = Field(description="ids deleted per kind (turns, items, scenes, topics) and the trigger views' count")
    stale: dict[str, list[str]] | None = Field(default=None, description="a turn's delete: the items and scenes marked stale")
    change: int = Field(description="the number of the history entry it left")


class ObjectUpdated(Out):
    """An item after its text was corrected (docs/api.md, "update")."""
    memory_id: str
    kind: Literal["item"]
    id: str
    object: dict[str, Any]
    triggers: Literal["rewritten", "stale"] = Field(description="rewritten by the LLM, or kept and marked stale (no LLM)")
    change: int


class History(Out):
    """How one turn, scene or item was written and every edit of it since (docs/api.md, "history")."""
    memory_id: str
    kind: Literal["turn", "scene", "item"]
    id: str
    written: dict[str, Any] | None = Field(description="when and by what it was written; null once deleted")
    changes: list[dict[str, Any]] = Field(description="[{seq, at, op, by, before, after}], oldest first")


class MemoryList(Out):
    memories: list[MemorySummary]
    next: str | None = Field(description="`after` for the next page; null on the last page")


class StageCost(Out):
    calls: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float


class Stats(Counts):
    memory_id: str
    encoder: str
    dim: int
    created_at: str
    trigger_families: dict[str, int] = Field(description="Triggers per family (item, scene, horizon).")
    writer: str | None = Field(description="The writer holding the memory's lease; null when free.")
    ledger: dict[str, StageCost] | None = Field(description="LLM calls and tokens per construction stage.")


class Added(Out):
    memory_id: str
    added: list[str] = Field(description="The ids of the turns added, in order.")
    skipped: int = Field(description="Turns already held (the same id, or the same speaker, time and text).")
    created: bool = Field(description="Whether this add created the memory.")


class Built(Out):
    memory_id: str
    new_scenes: int
    new_items: int
    new_topics: int
    pending_turns: int


class Flushed(Out):
    memory_id: str
    flush: str


class Deleted(Out):
    memory_id: str
    deleted_nodes: int


class Imported(Counts):
    memory_id: str
    warnings: list[str] = Field(description="Unknown keys the document carried (ignored).")
    trigger_families: dict[str, int]


class Turn(Out):
    id: str
    speaker: str
    text: str
    time: str | None


class RecentTurn(Turn):
    score: float
    via: list[str] = Field(description='["recent"]: a turn no scene holds yet.')
    ranks: dict[str, int]
    seq: int = Field(description="Its place in the conversation.")


class SceneHit(Out):
    id: str
    title: str | None
    time: str | None
    score: float
    via: list[str] = Field(description="Every channel that put it in the candidate pool (docs/service.md, MCP).")
    ranks: dict[str, int] = Field(description="Its 1-based position in each ranking that held it.")
    turns: list[Turn]
    summary: str | None
    narrative: str | None
    lane: str | None
    excerpt: bool = Field(description="Packed to a token budget: turns holds only the turns handed over.")


class ItemHit(Out):
    id: str
    text: str
    kind: Literal["atomic", "connected"]
    scene_ids: list[str]
    score: float
    via: list[str]
    ranks: dict[str, int]
    time: str | None
    lane: str | None
    turn_ids: list[str] = Field(description="The turns it was distilled from ([]: unknown).")


class Persona(Out):
    speaker: str
    summary: str


class Recalled(Out):
    """The `tmem recall --json` object (shared/spec/cli.md)."""
    memory_id: str
    query: str
    scenes: list[SceneHit] = Field(description="Best first.")
    items: list[ItemHit] = Field(description="Best first.")
    recent: list[RecentTurn] = Field(description="Turns no scene holds yet that match, best first.")
    persona: list[Persona]
    timings_ms: dict[str, float]
    filter: dict[str, Any] | None = Field(None, description="The filter applied (speakers, since, until), when one was asked.")


class Answer(Out):
    memory_id: str
    question: str
    answer: str
    kept_in_mind: str | None = Field(description="What the answer kept in mind among what the triggers reached.")
    cites: list[str] = Field(description="The ids of the turns the answer rests on.")
    recall: Recalled
    evidence: str = Field(description="The evidence the LLM was given.")
    timings_ms: dict[str, float]


# -- the tmem-memory/1 document (shared/spec/memory-format.md): unknown keys are ignored with a
# warning, so every object of it takes more than it declares

class Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class DocTurn(Open):
    id: str
    speaker: str
    text: str
    time: str | None = None
    session: int | None = None


class SceneTrigger(Open):
    situation: str | None = None
    object: str | None = None
    event: str | None = None
    emotion: str | None = None


class Horizon(Open):
    channel: str
    text: str


class SceneTriggers(Open):
    scene: SceneTrigger | None = None
    horizon: list[Horizon] = []


class DocScene(Open):
    id: str
    turn_ids: list[str] = Field(min_length=1)
    title: str | None = None
    summary: str | None = None
    narrative: str | None = None
    time: str | None = None
    triggers: SceneTriggers | None = None


class DocTopic(Open):
    id: str
    scene_ids: list[str] = Field(min_length=1)
    title: str | None = None
    summary: str | None = None
    keywords: list[str] = []


class ItemTrigger(Open):
    concept: str | None = None
    bridge: str | None = None
    rationale: str | None = None


class DocItem(Open):
    id: str
    kind: Literal["atomic", "connected"]
    text: str
    scene_ids: list[str] = Field(min_length=1)
    time: str | None = None
    triggers: list[ItemTrigger] = []
    turn_ids: list[str] = []


class DocPersona(Open):
    speaker: str
    summary: str


class MemoryDocument(Open):
    """A whole memory, `tmem-memory/1` (shared/spec/memory-format.md)."""
    format: Literal[FORMAT]
    memory_id: str
    speakers: list[str]
    turns: list[DocTurn]
    scenes: list[DocScene] = []
    topics: list[DocTopic] = []
    items: list[DocItem] = []
    personas: list[DocPersona] = []


def body_of(model: type[BaseModel]) -> dict[str, Any]:
    """An OpenAPI request body of `model`, for a route that reads its body itself."""
    return {"requestBody": {"required": True, "content": {"application/json": {
        "schema": {"$ref": f"#/components/schemas/{model.__name__}"}}}}}
