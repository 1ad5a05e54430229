"""The commands on memories: import, ingest, export, list, stats, drop, recall, ask, viz."""

from __future__ import annotations

from pathlib import Path

import click

from .. import api
from ..config import CUE_FUSIONS, FUSIONS, MAX_BUDGET_TOKENS
from ..errors import OutputError
from ..llm.prompts.answer import PROMPTS as ANSWER_STYLES
from ..retrieve.evidence import day
from ..retrieve.results import COMPONENTS
from .common import echo_json, friendly, settings_of, store_of
from .live import progress_bars


# -- memories --------------------------------------------------------------------------------
@click.command("import")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--replace", is_flag=True, help="Overwrite a memory with the same id.")
@click.pass_context
@friendly
def import_cmd(ctx, file, replace) -> None:
    """Load a tmem-memory/1 document, all or nothing; print the memory id."""
    memory, warnings = api.import_memory(file, replace=replace, store=store_of(ctx))
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    click.echo(memory.id)


@click.command("ingest")
@click.argument("file", type=click.Path(path_type=Path, dir_okay=False))
@click.option("--memory", "memory_id", required=True, help="The memory to build or extend.")
@click.option("--format", "fmt", type=click.Choice(["locomo", "turns"]),
              help="Input format (guessed from the file when absent).")
@click.option("--sample", help="LoCoMo sample id (e.g. conv-26) when the file holds several.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="LLM calls in flight at once for independent work.")
@click.pass_context
@friendly
def ingest_cmd(ctx, file, memory_id, fmt, sample, concurrency) -> None:
    """Build or extend a memory from a conversation with the configured LLM (TMEM_LLM_*)."""
    report = api.ingest(memory_id, file, fmt=fmt, sample=sample, store=store_of(ctx),
                        concurrency=concurrency, progress=progress_bars())
    if report.new_turns == 0 and report.new_scenes == 0:
        click.echo(f"{memory_id}: nothing new ({report.skipped_turns} turns already in the memory)")
        return
    click.echo(f"{memory_id}: +{report.new_turns} turns ({report.skipped_turns} already there), "
               f"+{report.new_scenes} scenes, {report.touched_topics} topics touched "
               f"({report.new_topics} new), +{report.new_items} items, +{report.new_trigger_views} trigger views")


@click.command("export")
@click.argument("memory_id")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False),
              help="Write to this file instead of stdout.")
@click.pass_context
@friendly
def export_cmd(ctx, memory_id, output) -> None:
    """Write a memory as a tmem-memory/1 document."""
    text = api.dumps(api.Memory(memory_id, store=store_of(ctx)).export())
    if output:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise OutputError(f"{output}: cannot write ({exc.strerror})") from None
    else:
        click.echo(text, nl=False)


@click.command("memories")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--limit", type=click.IntRange(min=1), help="At most this many memories (a page).")
@click.option("--after", metavar="MEMORY_ID", help="Only memories whose ids sort after this one (the next page).")
@click.pass_context
@friendly
def memories_cmd(ctx, as_json, limit, after) -> None:
    """List memories in id order with their object counts."""
    rows = api.list_memories(store=store_of(ctx), after=after, limit=limit)
    if as_json:
        echo_json(rows)
        return
    if not rows:
        click.echo("no memories" if after is None else f"no memories after {after!r}")
    for r in rows:
        waiting = f" ({r['pending_turns']} wait for their scene)" if r["pending_turns"] else ""
        click.echo(f"{r['id']}\t{r['turns']} turns{waiting}, {r['scenes']} scenes, {r['topics']} topics, "
                   f"{r['items']} items, {r['triggers']} triggers, {r['personas']} personas")
    if limit is not None and len(rows) == limit:
        click.echo(f"(more may follow: tmem memories --limit {limit} --after {rows[-1]['id']})", err=True)


@click.command("stats")
@click.argument("memory_id")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.pass_context
@friendly
def stats_cmd(ctx, memory_id, as_json) -> None:
    """Counts of a memory's objects and its construction cost ledger."""
    stats = api.Memory(memory_id, store=store_of(ctx)).stats()
    if as_json:
        echo_json(stats)
        return
    click.echo(f"memory {stats['memory_id']} (encoder {stats['encoder']}, {stats['dim']}-d, "
               f"created {stats['created_at']})")
    for key in ("turns", "scenes", "topics", "items", "triggers", "personas"):
        click.echo(f"  {key:<9}{stats[key]}")
        if key == "turns" and stats["pending_turns"]:
            click.echo(f"    {stats['pending_turns']} wait for their scene (recalled as recent; `tmem build`)")
    for family, n in stats["trigger_families"].items():
        click.echo(f"    {family:<9}{n}")
    ledger = stats.get("ledger")
    if ledger:
        click.echo("  construction cost:")
        for stage, row in ledger.items():
            click.echo(f"    {stage:<15}{row.get('calls', 0)} calls, {row.get('prompt_tokens', 0)} "
                       f"prompt + {row.get('completion_tokens', 0)} completion tokens, "
                       f"{row.get('seconds', 0):.1f} s")


@click.command("drop")
@click.argument("memory_id")
@click.option("--yes", is_flag=True, help="Confirm the deletion.")
@click.pass_context
@friendly
def drop_cmd(ctx, memory_id, yes) -> None:
    """Delete one memory and nothing else."""
    if not yes:
        raise click.UsageError("dropping a memory deletes it for good; add --yes to confirm")
    deleted = api.Memory(memory_id, store=store_of(ctx)).drop()
    click.echo(f"dropped {memory_id} ({deleted} nodes)")


# -- recall ----------------------------------------------------------------------------------
def _without(value: str | None) -> list[str]:
    return [w for w in (value or "").split(",") if w.strip()]


FUSION_HELP = ("Final fusion of scenes and items: lanes (default: descriptive and associative lanes "
               "share the budget), rrf (the fusion before lanes), rrf_tail, score; see docs/design-and-evidence.md.")
SHARE_HELP = "Share of kS and kI the associative lane keeps with --fusion lanes (default 0.4)."
BUDGET_HELP = ("One evidence budget in tokens: the packer fills it from the ranked scenes (their best turns "
               "with their neighbours), items and recent turns (default: kS whole scenes and kI items).")
CUE_FUSION_HELP = ("How SceneCue fuses dialogue, Scene trigger and Horizon: strongest (default: best "
                   "standard score) or rrf (k0 = 30, the reference code).")


def FILTERS(fn):
    """The recall filters (docs/api.md, "Recall filters"), as options of recall and ask."""
    fn = click.option("--until", metavar="TIME", help="Only turns up to this ISO 8601 date (the whole day) "
                      "or date-time.")(fn)
    fn = click.option("--since", metavar="TIME", help="Only turns from this ISO 8601 date or date-time on.")(fn)
    return click.option("--from-speaker", multiple=True, metavar="NAME",
                        help="Only evidence from this speaker's turns (repeatable).")(fn)


@click.command("recall")
@click.argument("memory_id")
@click.argument("query")
@click.option("--speaker", help="Who asks: their persona is attached (default: every speaker's).")
@click.option("--without", help="Comma list of components to switch off: " + ", ".join(COMPONENTS) + ".")
@click.option("--k-topics", type=int, help="Topics kept by the prefilter (kT).")
@click.option("--k-scenes", type=int, help="Scenes returned (kS).")
@click.option("--k-items", type=int, help="Items returned (kI).")
@click.option("--r-triggers", type=int, help="Item triggers TrigRecall considers (R).")
@click.option("--tau", type=float, help="TrigRecall's cosine gate.")
@click.option("--fusion", type=click.Choice(FUSIONS), help=FUSION_HELP)
@click.option("--associative-share", type=click.FloatRange(0, 1), help=SHARE_HELP)
@click.option("--cue-fusion", type=click.Choice(CUE_FUSIONS), help=CUE_FUSION_HELP)
@click.option("--budget-tokens", type=click.IntRange(1, MAX_BUDGET_TOKENS), help=BUDGET_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the JSON object of the CLI contract.")
@click.option("--trace", is_flag=True, help="With --json: add every list the final fusions saw, whole, with "
              "its scores and positions, the candidate pools and the turn lane (key \"trace\").")
@FILTERS
@click.pass_context
@friendly
def recall_cmd(ctx, memory_id, query, speaker, without, k_topics, k_scenes, k_items, r_triggers, tau,
               fusion, associative_share, cue_fusion, budget_tokens, as_json, trace, from_speaker, since,
               until) -> None:
    """Recall evidence for QUERY from a memory, and show why each piece came back."""
    overrides = {"k_topics": k_topics, "k_scenes": k_scenes, "k_items": k_items,
                 "r_trigger_items": r_triggers, "tau": tau}
    for name, value in overrides.items():
        if value is not None and value < 0:
            raise click.BadParameter(f"{name} must not be negative")
    overrides.update(fusion=fusion, associative_share=associative_share, cue_fusion=cue_fusion,
                     budget_tokens=budget_tokens)
    settings = settings_of(ctx).with_retrieval(**{k: v for k, v in overrides.items() if v is not None})
    if trace and not as_json:
        raise click.UsageError("--trace needs --json (the trace is a JSON object)")
    result = api.Memory(memory_id, store=store_of(ctx)).recall(
        query, speaker=speaker, without=_without(without), settings=settings.retrieval, trace=trace,
        speakers=list(from_speaker) or None, since=since, until=until)
    if as_json:
        echo_json(result.to_json())
        return
    click.echo(format_recall(result))


@click.command("ask")
@click.argument("memory_id")
@click.argument("question")
@click.option("--speaker", help="Who asks: their persona is attached (default: every speaker's).")
@click.option("--without", help="Comma list of cascade components to switch off.")
@click.option("--budget-tokens", type=click.IntRange(1, MAX_BUDGET_TOKENS),
              help="The evidence budget in tokens the packer fills for the answer (default 2,000).")
@click.option("--unpacked", is_flag=True, help="Answer from kS whole scenes and kI items instead.")
@click.option("--style", type=click.Choice(list(ANSWER_STYLES)), default="focus", show_default=True,
              help="The answer prompt: focus (what the triggers reached, kept in mind), assistant, locomo "
                   "(the benchmark's).")
@click.option("--json", "as_json", is_flag=True, help="Print the answer with its evidence as JSON.")
@FILTERS
@click.pass_context
@friendly
def ask_cmd(ctx, memory_id, question, speaker, without, budget_tokens, unpacked, style, as_json, from_speaker,
            since, until) -> None:
    """Recall evidence for QUESTION, then answer it with the configured LLM (TMEM_LLM_*)."""
    if unpacked and budget_tokens:
        raise click.UsageError("--unpacked and --budget-tokens exclude each other")
    settings = settings_of(ctx).with_retrieval(budget_tokens=budget_tokens) if budget_tokens else settings_of(ctx)
    if unpacked:
        settings = settings.with_retrieval(answer_budget_tokens=None)
    result = api.Memory(memory_id, store=store_of(ctx)).ask(question, speaker=speaker, without=_without(without),
                                                         settings=settings.retrieval, style=style,
                                                         speakers=list(from_speaker) or None, since=since, until=until)
    if as_json:
        echo_json(result)
        return
    click.echo(format_answer(result))


@click.command("viz")
@click.argument("memory_id")
@click.option("-o", "--output", type=click.Path(path_type=Path, dir_okay=False), required=True,
              help="The HTML file to write.")
@click.option("--topic", help="Show only this topic, its scenes, their items and triggers.")
@click.option("--scene", help="Show only the neighbourhood of this scene.")
@click.option("--hops", type=click.IntRange(1, 5), default=1, show_default=True,
              help="Radius of the --scene neighbourhood.")
@click.option("--query", help="Highlight what a recall of this query returns and the triggers that reached it.")
@click.option("--speaker", help="Who asks (with --query).")
@click.option("--max-nodes", type=click.IntRange(10, 100000), default=2000, show_default=True,
              help="Above this, trigger views are left out; beyond that the page is refused.")
@click.pass_context
@friendly
def viz_cmd(ctx, memory_id, output, topic, scene, hops, query, speaker, max_nodes) -> None:
    """Write the memory graph as a self-contained interactive HTML page (pyvis)."""
    from .. import viz

    memory = api.Memory(memory_id, store=store_of(ctx))
    graph = viz.restrict(viz.memory_graph(memory.document()), topic=topic, scene=scene, hops=hops)
    heading = f"memory {memory_id}"
    if query:
        marked = viz.highlight(graph, memory.recall(query, speaker=speaker))
        heading += f" - recall of: {query} ({len(marked)} highlighted)"
    graph, note = viz.cap(graph, max_nodes)
    if note:
        click.echo(f"note: {note}", err=True)
    viz.write_html(graph, output, heading)
    click.echo(f"wrote {output} ({graph.number_of_nodes()} nodes, {graph.number_of_edges()} edges)")


def format_answer(result: dict) -> str:
    """The answer, the turns it rests on (as the evidence showed them) and the time each step took."""
    turns = {t["id"]: t for s in result["recall"]["scenes"] for t in s["turns"]}
    turns.update({t["id"]: t for t in result["recall"].get("recent", [])})
    lines = [result["answer"]]
    for tid in result["cites"]:
        t = turns.get(tid)
        lines.append(f"  rests on {tid}" + (f" ({day(t.get('time')) or 'time unknown'}) {t['speaker']}: {t['text']}"
                                            if t else " (an item's source turn)"))
    steps = result["timings_ms"]
    recall_ms = sum(v for k, v in steps.items() if k not in ("answer", "total"))
    lines.append(f"  (recall {recall_ms:.0f} ms, answer {steps['answer'] / 1000:.1f} s)")
    return "\n".join(lines)


def format_recall(result) -> str:
    """A human-readable recall: each scene and item with the channels that reached it."""
    lines = [f"query: {result.query}" + (f" (packed to {result.budget_tokens} evidence tokens)"
                                         if result.budget_tokens else "")]
    if result.weak:
        held = (f"; the closest in words holds {result.words:.0%} of its word weight"
                if result.words is not None else "")
        lines.append(f"a weak match (the nearest turn scores {result.match:.3f}{held}): the triggers get more say")
    if result.filter:
        lines.append("only turns " + "; ".join(f"{k} {', '.join(v) if isinstance(v, list) else v}"
                                               for k, v in result.filter.items()))
    for n, s in enumerate(result.scenes, 1):
        ranks = ", ".join(f"{k} #{v}" for k, v in s.ranks.items())
        lines.append(f"scene {n}. [{s.id}] {s.title or '(untitled)'} ({s.time or 'no time'})")
        lane = f"{s.lane} lane; " if s.lane else ""
        excerpt = f"; an excerpt of {len(s.turns)} turns" if s.excerpt else ""
        lines.append(f"   {lane}via {', '.join(s.via)}; ranks: {ranks}{excerpt}")
        for t in s.turns[:3]:
            lines.append(f"     {t['speaker']}: {t['text'][:100]}")
        if len(s.turns) > 3:
            lines.append(f"     … {len(s.turns) - 3} more turns")
    for n, i in enumerate(result.items, 1):
        ranks = ", ".join(f"{k} #{v}" for k, v in i.ranks.items())
        lines.append(f"item {n}. [{i.id}] {i.text}")
        lane = f"{i.lane} lane; " if i.lane else ""
        lines.append(f"   {lane}via {', '.join(i.via)}; ranks: {ranks}")
    for n, t in enumerate(result.recent, 1):
        ranks = ", ".join(f"{k} #{v}" for k, v in t.ranks.items())
        lines.append(f"recent {n}. [{t.id}] {t.speaker}: {t.text[:100]}")
        lines.append(f"   via {', '.join(t.via)}; ranks: {ranks} (no scene holds it yet)")
    for p in result.persona:
        lines.append(f"persona {p['speaker']}: {p['summary']}")
    lines.append(f"({result.timings_ms['total']:.1f} ms, of which encoding {result.timings_ms['encode']:.1f} ms)")
    return "\n".join(lines)


COMMANDS = (import_cmd, ingest_cmd, export_cmd, memories_cmd, stats_cmd, drop_cmd, recall_cmd, ask_cmd, viz_cmd)
