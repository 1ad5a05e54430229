"""The live commands: `tmem add` (turns as they happen, recallable at once) and `tmem build`
(what is due of one memory, or of every memory, once or as a worker)."""

from __future__ import annotations

import signal
import sys
import threading
from datetime import datetime
from pathlib import Path

import click

from .. import api
from .common import echo_json, friendly, store_of


def progress_bars():
    """A progress callback that draws one bar per construction stage on stderr."""
    bars: dict[str, object] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if stage not in bars or done == 0:
            bars[stage] = click.progressbar(length=max(total, 1), label=f"{stage:<15}", file=sys.stderr,
                                            show_pos=True)
            bars[stage].__enter__()
        bar = bars[stage]
        bar.update(done - bar.pos)
        if done >= total:
            bar.__exit__(None, None, None)

    return progress


def report_line(report) -> str:
    """One line saying what a build (or an ingest's build) wrote."""
    return (f"{report.memory_id}: +{report.new_scenes} scenes, {report.touched_topics} topics touched "
            f"({report.new_topics} new), +{report.new_items} items, +{report.new_trigger_views} trigger views; "
            f"{report.pending_turns} turns wait for their scene")


@click.command("add")
@click.argument("memory_id")
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False, allow_dash=True))
@click.option("--speaker", help="One turn: who speaks (with --text).")
@click.option("--text", help="One turn: what is said (with --speaker).")
@click.option("--time", "when", help="One turn: ISO 8601 date-time (default: now).")
@click.option("--session", type=int, help="One turn: session number.")
@click.option("--id", "turn_id", help="One turn: its id (unique within the memory).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_context
@friendly
def add_cmd(ctx, memory_id, file, speaker, text, when, session, turn_id, as_json) -> None:
    """Add turns to a memory (created if absent), recallable at once; nothing is built.

    FILE holds turns as `tmem ingest` reads them (JSON Lines or a JSON array; `-` is stdin);
    or give one turn with --speaker and --text. Run `tmem build` for scenes and the rest.
    """
    from ..construct.inputs import generic_turns, read_conversation, single_turn

    one = any(v is not None for v in (speaker, text, when, session, turn_id))
    if file is not None and one:
        raise click.UsageError("give a FILE or --speaker/--text, not both")
    if file is None and not one:
        raise click.UsageError("give a FILE of turns, or one turn with --speaker and --text")
    if one:
        if not speaker or not text:
            raise click.UsageError("one turn needs both --speaker and --text")
        turns = [single_turn(speaker, text, when or datetime.now().isoformat(timespec="seconds"), session,
                             turn_id)]
    elif str(file) == "-":
        turns = generic_turns(sys.stdin.read(), where="stdin")
    else:
        turns = read_conversation(file, "turns")
    report = api.Memory(memory_id, store=store_of(ctx)).add(turns)
    if as_json:
        echo_json({"memory_id": memory_id, "added": report.added, "skipped": report.skipped,
                   "created": report.created})
    else:
        click.echo(f"{memory_id}: +{len(report.added)} turns ({report.skipped} already there)")


@click.command("build")
@click.argument("memory_id", required=False)
@click.option("--flush", is_flag=True, help="Close every turn added so far into scenes (the conversation ended).")
@click.option("--all", "every", is_flag=True, help="Build every memory that has work due.")
@click.option("--watch", type=click.FloatRange(0.1, 3600), metavar="SECONDS",
              help="With --all: keep building as work arrives, looking again every SECONDS (a worker).")
@click.option("--flush-after", type=click.FloatRange(0.1), metavar="MINUTES",
              help="With --all: flush a memory no turn was added to for MINUTES (wall-clock time).")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True,
              help="LLM calls in flight at once for independent work.")
@click.pass_context
@friendly
def build_cmd(ctx, memory_id, flush, every, watch, flush_after, concurrency) -> None:
    """Build what is due of a memory's added turns with the configured LLM (TMEM_LLM_*):
    scenes whose event has closed, then their topics, items, triggers and personas."""
    if every == bool(memory_id):
        raise click.UsageError("give a MEMORY_ID or --all")
    if (watch or flush_after) and not every:
        raise click.UsageError("--watch and --flush-after go with --all")
    if flush and every:
        raise click.UsageError("--flush goes with one MEMORY_ID (with --all, use --flush-after)")
    store = store_of(ctx)
    if memory_id:
        report = api.Memory(memory_id, store=store).build(flush=flush, progress=progress_bars())
        click.echo(report_line(report))
        return
    stop = threading.Event()
    if watch:
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
    for done in api.build_due(store=store, watch_s=watch, flush_after_s=flush_after and flush_after * 60,
                              concurrency=concurrency, stop=stop):
        for report in done.built:
            click.echo(report_line(report))
        for m in done.busy:
            click.echo(f"{m}: another builder holds it; left to that one", err=True)
