"""The commands on one memory's objects: list, get (docs/api.md)."""

from __future__ import annotations

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
                f"topics {', '.join(o['topic_ids']) or 'none'}]")
    return f"{o['text']}{when} [{o['kind']}; scenes {', '.join(o['scene_ids'])}]"


COMMANDS = (list_cmd, get_cmd)
