"""The MCP face of the service (official `mcp` SDK): tools named and shaped as agents know
them from other memory servers, with bounded budgets, results that carry `via`, and errors an
agent can read (`ToolError` with the library's one-line message; anything else is hidden).
Each tool acts as its caller may: over streamable HTTP with the scope of the request's token,
over stdio with the server's."""

from __future__ import annotations

import functools
from typing import Annotated, Any, Callable, Literal

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import TmemError, public
from .access import CALLER, Scope
from .bodies import Id, Text, TurnIn, problem
from ..objects import MAX_LIMIT
from .service import LIST_DEFAULT, LIST_MAX, MCP_MAX_K, MCP_MAX_TOKENS, OBJECTS_DEFAULT, Budgets, Service

MemoryId = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$",
                                description="The memory's id (letters, digits, - _ . :), e.g. the user's or the conversation's.")]
K = Annotated[int, Field(ge=0, le=MCP_MAX_K)]
Speakers = Annotated[list[Text] | None, Field(min_length=1, max_length=50, description=(
    "Only evidence from these speakers' turns."))]
Moment = Annotated[Text | None, Field(max_length=64, description=(
    "An ISO 8601 date or date-time bounding the turns handed over (since: from it on; until: up to it, "
    "a date meaning the whole day)."))]


INSTRUCTIONS = (
    "Long-term memory of conversations (T-Mem on Neo4j). Before answering, call search_memory with "
    "the user's message to get what the memory holds about it: scenes of earlier conversations "
    "(with their turns), distilled items, the turns of the last minutes not yet organised ('recent'), "
    "and the speakers' personas; every result says in 'via' why it came back. After each exchange, "
    "call add_memory with its turns. Memories build themselves in the background.")


def _tool_errors(fn: Callable) -> Callable:
    """A library error reaches the agent as a ToolError with its one-line message."""
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except TmemError as exc:
            raise ToolError(public(exc).splitlines()[0] if str(exc) else type(exc).__name__) from None
    return wrapper


def one_line(tool: str, exc: ValidationError) -> str:
    """Every problem of a tool call's arguments on one line, each naming its field (no input
    values, no documentation links)."""
    return f"{tool}: " + "; ".join(problem(e) for e in exc.errors())


def strict(arguments: type[BaseModel]) -> type[BaseModel]:
    """A tool's argument model that coerces nothing: "2", true or 2.0 are not an integer, a JSON
    text is not the list it spells (the SDK's own model takes all three)."""
    return type(arguments.__name__, (arguments,), {"model_config": ConfigDict(strict=True)})


class _Server(MCPServer):
    """The SDK's server, with arguments checked as a memory service should: an argument the tool
    does not take is refused (the SDK ignores it), a value of another type than declared is
    refused (the SDK coerces it), and a schema error is one line naming the field (the SDK
    passes pydantic's multi-line text with a URL)."""

    _parameters: dict[str, set[str]] | None = None
    _strict: dict[str, type[BaseModel]] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any], context=None):
        if self._parameters is None:
            self._parameters = {t.name: set(t.input_schema.get("properties", {})) for t in await self.list_tools()}
            self._strict = {t.name: strict(t.fn_metadata.arg_model) for t in self._tool_manager.list_tools()}
        allowed = self._parameters.get(name)
        if allowed is not None:
            unknown = sorted(set(arguments) - allowed)
            if unknown:
                raise ToolError(f"{name}: unknown argument{'s' if len(unknown) > 1 else ''} "
                                f"{', '.join(map(repr, unknown))}; it takes {', '.join(sorted(allowed)) or 'none'}")
            try:
                self._strict[name].model_validate(arguments)
            except ValidationError as exc:
                raise ToolError(one_line(name, exc)) from exc
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                raise ToolError(one_line(name, exc.__cause__)) from exc.__cause__
            raise


def build_mcp(service: Service) -> MCPServer:
    """The MCP server of one service; tools are plain functions (run in worker threads)."""
    server = _Server("tmem-graph", instructions=INSTRUCTIONS, log_level="WARNING")
    read_only = ToolAnnotations(read_only_hint=True, destructive_hint=False)

    def caller(ctx: Context) -> Scope:
        """Over HTTP, the scope the gate found for the request's token; over stdio, the server's."""
        request = ctx.request_context.request
        return service.access.anonymous if request is None else request.scope[CALLER]

    @server.tool(name="add_memory", description=(
        "Add the turns of a conversation to a memory as they happen (created if absent). They are "
        "searchable at once; scenes, items and triggers are built from them in the background. "
        "Turns already held (same speaker, time and text) are skipped, so a retry adds nothing twice."))
    @_tool_errors
    def add_memory(ctx: Context, memory_id: MemoryId,
                   turns: Annotated[list[TurnIn], Field(min_length=1, max_length=100)]) -> dict[str, Any]:
        return service.add(caller(ctx), memory_id, [t.model_dump(exclude_none=True) for t in turns])

    @server.tool(name="search_memory", annotations=read_only, description=(
        "Recall what a memory holds that matters for a query: scenes (with their turns), items, recent "
        "turns not yet built into scenes, and personas. Each scene, item and turn has 'via' (the channels "
        "that found it: topic, bm25, dense, dialogue, scene_trigger, horizon, entity, bridge, joint, "
        "scene, recent) and 'score'. Budgets are capped at 20 to keep the answer small."))
    @_tool_errors
    def search_memory(ctx: Context, memory_id: MemoryId,
                      query: Annotated[Text, Field(min_length=1, max_length=4000, description="The user's message or a question.")],
                      speaker: Annotated[Text | None, Field(description="Only this speaker's persona.")] = None,
                      k_scenes: Annotated[K, Field(description="Scenes to return.")] = 5,
                      k_items: Annotated[K, Field(description="Items to return.")] = 10,
                      k_recent: Annotated[K, Field(description="Recent (unbuilt) turns to return.")] = 6,
                      budget_tokens: Annotated[int | None, Field(ge=100, le=MCP_MAX_TOKENS, description=(
                          "Pack the evidence to this many tokens instead: the best turns of the scenes, "
                          "the turns nearest the query and, when nothing resembles it closely, the "
                          "memories its triggers anticipated."))] = None,
                      speakers: Speakers = None, since: Moment = None, until: Moment = None) -> dict[str, Any]:
        result = service.recall(caller(ctx), memory_id, query, speaker=speaker,
                                budgets=Budgets(k_scenes, k_items, k_recent, budget_tokens),
                                cap=MCP_MAX_K, token_cap=MCP_MAX_TOKENS,
                                only={"speakers": speakers, "since": since, "until": until})
        for scene in result["scenes"]:
            scene.pop("narrative", None)   # the turns are the evidence; the narrative repeats them
        return result

    @server.tool(name="ask_memory", annotations=read_only, description=(
        "Answer a question from a memory with the server's LLM: the answer, the ids of the turns it "
        "rests on, and the evidence it used."))
    @_tool_errors
    def ask_memory(ctx: Context, memory_id: MemoryId,
                   question: Annotated[Text, Field(min_length=1, max_length=4000)],
                   speakers: Speakers = None, since: Moment = None, until: Moment = None) -> dict[str, Any]:
        answer = service.ask(caller(ctx), memory_id, question,
                             only={"speakers": speakers, "since": since, "until": until})
        return {"memory_id": memory_id, "question": question, "answer": answer["answer"],
                "cites": answer["cites"], "evidence": answer["evidence"]}

    @server.tool(name="list_memories", annotations=read_only, description=(
        "The memories this server holds that you may use, with their object counts, in id order, "
        f"a page at a time (`limit`, default {LIST_DEFAULT}); pass the answer's `next` as `after` for the next page."))
    @_tool_errors
    def list_memories(ctx: Context, limit: Annotated[int, Field(ge=1, le=LIST_MAX)] = LIST_DEFAULT,
                      after: Annotated[Text | None, Field(max_length=128)] = None) -> dict[str, Any]:
        return service.list_memories(caller(ctx), after, limit)

    @server.tool(name="list_objects", annotations=read_only, description=(
        "A page of a memory's turns, scenes or items in their order (what was said, the scenes it was "
        f"organised into, the facts distilled from them); `limit` default {OBJECTS_DEFAULT}, pass the "
        "answer's `next` as `after` for the next page."))
    @_tool_errors
    def list_objects(ctx: Context, memory_id: MemoryId, kind: Literal["turns", "scenes", "items"],
                     limit: Annotated[int, Field(ge=1, le=MAX_LIMIT)] = OBJECTS_DEFAULT,
                     after: Annotated[Text | None, Field(max_length=512)] = None) -> dict[str, Any]:
        return service.list_objects(caller(ctx), memory_id, kind, after, limit)

    @server.tool(name="get_object", annotations=read_only, description=(
        "One turn, scene or item of a memory by its id, with the trigger views written for it, its "
        "sources (an item's scenes and turns, a scene's turns) and its neighbours."))
    @_tool_errors
    def get_object(ctx: Context, memory_id: MemoryId, kind: Literal["turn", "scene", "item"],
                   id: Annotated[Id, Field(min_length=1, max_length=256)]) -> dict[str, Any]:
        return service.get_object(caller(ctx), memory_id, kind, id)

    @server.tool(name="get_history", annotations=read_only, description=(
        "How one turn, scene or item of a memory was written (when, by an import or a build, from which "
        "turns) and every edit of it since (deleted, corrected: when, by whom, before and after)."))
    @_tool_errors
    def get_history(ctx: Context, memory_id: MemoryId, kind: Literal["turn", "scene", "item"],
                    id: Annotated[Id, Field(min_length=1, max_length=256)]) -> dict[str, Any]:
        return service.history(caller(ctx), memory_id, kind, id)

    @server.tool(name="delete_object", annotations=ToolAnnotations(destructive_hint=True), description=(
        "Delete one turn or one item of a memory, for good (only when the user asked to forget it). A "
        "turn's delete also removes the items distilled from it alone and a scene left with no turn; "
        "what else rested on it is marked stale. The history keeps what was deleted."))
    @_tool_errors
    def delete_object(ctx: Context, memory_id: MemoryId, kind: Literal["turn", "item"],
                      id: Annotated[Id, Field(min_length=1, max_length=256)]) -> dict[str, Any]:
        return service.delete_object(caller(ctx), memory_id, kind, id)

    @server.tool(name="update_object", annotations=ToolAnnotations(destructive_hint=True), description=(
        "Correct one item's text (a fact the memory got wrong). Its triggers are rewritten by the "
        "server's LLM, or, without one, kept and the item marked stale until the next build."))
    @_tool_errors
    def update_object(ctx: Context, memory_id: MemoryId, kind: Literal["item"],
                      id: Annotated[Id, Field(min_length=1, max_length=256)],
                      text: Annotated[Text, Field(min_length=1, max_length=32768)]) -> dict[str, Any]:
        return service.update_object(caller(ctx), memory_id, kind, id, text)

    @server.tool(name="get_memory_stats", annotations=read_only, description=(
        "A memory's counts (turns, turns waiting for their scene, scenes, topics, items, triggers, "
        "personas), its encoder, and its construction cost."))
    @_tool_errors
    def get_memory_stats(ctx: Context, memory_id: MemoryId) -> dict[str, Any]:
        return service.stats(caller(ctx), memory_id)

    @server.tool(name="delete_memory", annotations=ToolAnnotations(destructive_hint=True), description=(
        "Delete a memory and everything in it, for good. Only when the user asked for it: pass the "
        "memory's id again as 'confirm'."))
    @_tool_errors
    def delete_memory(ctx: Context, memory_id: MemoryId,
                      confirm: Annotated[Text, Field(description="The memory's id again, to confirm.")]) -> dict[str, Any]:
        if confirm != memory_id:
            raise ToolError(f"not deleted: 'confirm' must repeat the memory id {memory_id!r}")
        return service.delete(caller(ctx), memory_id)

    return server
