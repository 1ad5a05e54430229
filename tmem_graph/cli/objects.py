"""The commands on one memory's objects: list, get, delete, update, history (docs/api.md)."""

from __future__ import annotations

import getpass

import click

from .. import api
from ..objects import DEFAULT_LIMIT, MAX_LIMIT
from .common import echo_json, friendly, store_of

KINDS = click.Choice(["turns", "scenes", "items"])


@click.command("list")
@click.argument("memory_id")
@click.argument("kind", type=KINDS)
@click.option("--after", metavar="CURSOR", help="The page after this cursor (the `next` of the page before).")
@click.option("--limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT, show_default=True,
              help="At most this many objects.")
@click.option("--json", "as_json", is_flag=True, help="Print the page as JSON (objects and the next cursor).")
@click.pass_context
@friendly
def list_cmd(ctx, memory_id, kind, after, limit, as_json) -> None:
    """List a memory's turns, scenes or items in their order, a page at a time."""
    page = api.Memory(memory_id, store=store_of(ctx)).list(kind, after=after, limit=limit)
    if as_json:
        echo_json(page)
        return
    if not page["objects"]:
        click.echo(f"no {page['kind']}" + (" after that cursor" if after else ""))
    for o in page["objects"]:
        click.echo(f"{o['id']}\t{describe(page['kind'][:-1], o)}")
    if page["next"]:
        click.echo(f"(more follow: tmem list {memory_id} {page['kind']} --limit {limit} --after {page['next']})",
                   err=True)


@click.command("get")
@click.argument("memory_id")
@click.argument("kind", type=click.Choice(["turn", "scene", "item"]))
@click.argument("object_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the object with its triggers, sources and neighbours.")
@click.pass_context
@friendly
def get_cmd(ctx, memory_id, kind, object_id, as_json) -> None:
    """Show one turn, scene or item with its triggers, sources and neighbours."""
    got = api.Memory(memory_id, store=store_of(ctx)).get(kind, object_id)
    if as_json:
        echo_json(got)
        return
    o, sources = got["object"], got["sources"]
    lines = [f"{kind} {o['id']}: {describe(kind, o)}"]
    if kind == "scene" and (o["summary"] or o["narrative"]):
        lines.append(f"  {o['summary'] or o['narrative']}")
    for v in got["triggers"]:
        lines.append(f"  trigger {v['family']}/{v['channel']}: {v['text']}")
    for t in sources.get("turns", []):
        lines.append(f"  turn {t['id']} {t['speaker']}: {t['text']}")
    for s in sources.get("scenes", []):
        lines.append(f"  from scene {s['id']}: {s['title'] or '(untitled)'}")
    if sources.get("topics"):
        lines.append(f"  topics: {', '.join(t['id'] for t in sources['topics'])}")
    lines += [f"  {name}: {value}" for name, value in got["neighbours"].items()
              if value and not isinstance(value, list)]
    if got["neighbours"].get("items"):
        lines.append(f"  items of the same scenes: {', '.join(got['neighbours']['items'])}")
    if got.get("derived", {}).get("items"):
        lines.append(f"  items resting on it: {', '.join(got['derived']['items'])}")
    click.echo("\n".join(lines))


def describe(kind: str, o: dict) -> str:
    """One line of an object: a turn's speaker and text, a scene's title, an item's text."""
    when = f" ({o['time']})" if o.get("time") else ""
    if kind == "turn":
        where = "pending" if o["pending"] else f"scene {o['scene_id']}"
        return f"{o['speaker']}: {o['text']}{when} [{where}]"
    if kind == "scene":
        return (f"{o['title'] or '(untitled)'}{when} [{len(o['turn_ids'])} turns; "
                f"topics {', '.join(o['topic_ids']) or 'none'}{'; stale' if o['stale'] else ''}]")
    return f"{o['text']}{when} [{o['kind']}; scenes {', '.join(o['scene_ids'])}{'; stale' if o['stale'] else ''}]"


def _by(value: str | None) -> str:
    """Who asked for an edit, for its history: --by, else `cli:<login name>`."""
    if value:
        return value
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


BY = click.option("--by", metavar="NAME", help="Who asks, kept in the history (default cli:<login name>).")


@click.command("delete")
@click.argument("memory_id")
@click.argument("kind", type=click.Choice(["turn", "item"]))
@click.argument("object_id", metavar="ID")
@BY
@click.option("--json", "as_json", is_flag=True, help="Print what was deleted and marked stale as JSON.")
@click.pass_context
@friendly
def delete_cmd(ctx, memory_id, kind, object_id, by, as_json) -> None:
    """Delete one turn (and what rests on it alone) or one item, for good."""
    done = api.Memory(memory_id, store=store_of(ctx)).delete(kind, object_id, by=_by(by))
    if as_json:
        echo_json(done)
        return
    gone = ", ".join(f"{len(v)} {k}" for k, v in done["deleted"].items() if isinstance(v, list) and v)
    click.echo(f"deleted {kind} {object_id} ({gone}; {done['deleted']['triggers']} trigger views)")
    for what, ids in done.get("stale", {}).items():
        if ids:
            click.echo(f"  stale {what} (rewritten by the next build with an LLM): {', '.join(ids)}")


@click.command("update")
@click.argument("memory_id")
@click.argument("kind", type=click.Choice(["item"]))
@click.argument("object_id", metavar="ID")
@click.option("--text", required=True, help="The corrected text.")
@BY
@click.option("--json", "as_json", is_flag=True, help="Print the item after the correction as JSON.")
@click.pass_context
@friendly
def update_cmd(ctx, memory_id, kind, object_id, text, by, as_json) -> None:
    """Correct one item's text: its triggers are rewritten with the configured LLM, or marked stale."""
    done = api.Memory(memory_id, store=store_of(ctx)).update(kind, object_id, text, by=_by(by))
    if as_json:
        echo_json(done)
        return
    click.echo(f"item {object_id}: {done['object']['text']} [triggers {done['triggers']}]")


@click.command("history")
@click.argument("memory_id")
@click.argument("kind", type=click.Choice(["turn", "scene", "item"]))
@click.argument("object_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print how it was written and every edit as JSON.")
@click.pass_context
@friendly
def history_cmd(ctx, memory_id, kind, object_id, as_json) -> None:
    """How one turn, scene or item was written, and every edit of it since."""
    got = api.Memory(memory_id, store=store_of(ctx)).history(kind, object_id)
    if as_json:
        echo_json(got)
        return
    w = got["written"]
    lines = [f"{kind} {object_id}: " + (f"written {w['at']} by {w['by']}" if w else "deleted")]
    if w and w.get("turn_ids"):
        lines.append(f"  from turns {', '.join(w['turn_ids'])}")
    for c in got["changes"]:
        lines.append(f"  #{c['seq']} {c['at']} {c['op']}" + (f" by {c['by']}" if c["by"] else ""))
    click.echo("\n".join(lines))


COMMANDS = (list_cmd, get_cmd, delete_cmd, update_cmd, history_cmd)
