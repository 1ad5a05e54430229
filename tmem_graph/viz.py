"""The memory as a networkx graph, rendered by pyvis into one self-contained HTML page.

Topics, scenes, items and trigger views are distinct shapes and colours (a trigger view
takes its family's colour from `triggers.FAMILIES`); edges are
HAS_SCENE, HAS_ITEM, TRIGGERS and NEXT. A recall can be highlighted: the recalled scenes and
items and the trigger views that reached them. The page loads vis-network inline and
fetches nothing from the network (memories are private and machines may be offline).
"""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx

from .errors import OutputError, UsageError
from .model import MemoryDoc, trigger_views_of_item, trigger_views_of_scene
from .retrieve.results import Recall
from .triggers import FAMILIES, ITEM, SCENE_FAMILIES, family_of_credit

STYLE = {
    "topic": {"shape": "box", "color": "#f4a259"},
    "scene": {"shape": "ellipse", "color": "#5b8e7d"},
    "item": {"shape": "dot", "color": "#8cb369", "size": 12},
    "trigger": {"shape": "triangle", "color": "#bcb8b1", "size": 8},
}
HIGHLIGHT = "#d1495b"


def memory_graph(memory: MemoryDoc) -> nx.DiGraph:
    """Every topic, scene, item and trigger view as a node, with the graph's edges."""
    g = nx.DiGraph(memory_id=memory.memory_id)
    turns = {t.id: t for t in memory.turns}
    for t in memory.topics:
        g.add_node(f"topic:{t.id}", kind="topic", label=t.title or t.id,
                   title=f"Topic {t.id}: {t.title or ''}\nkeywords: {', '.join(t.keywords)}")
    for s in memory.scenes:
        dialogue = "\n".join(f"{turns[x].speaker}: {turns[x].text}" for x in s.turn_ids[:6])
        g.add_node(f"scene:{s.id}", kind="scene", label=(s.title or s.id)[:40],
                   title=f"Scene {s.id} ({s.time or 'no time'})\n{s.title or ''}\n{s.summary or ''}\n\n{dialogue}")
        for v in trigger_views_of_scene(s):
            g.add_node(f"trigger:{v.id}", kind="trigger", family=v.family, channel=v.channel, host=s.id,
                       label=v.channel, title=f"{v.family} trigger ({v.channel}) of scene {s.id}\n{v.text}")
            g.add_edge(f"trigger:{v.id}", f"scene:{s.id}", type="TRIGGERS")
    for a, b in zip(memory.scenes, memory.scenes[1:]):
        g.add_edge(f"scene:{a.id}", f"scene:{b.id}", type="NEXT")
    for t in memory.topics:
        for s in t.scene_ids:
            g.add_edge(f"topic:{t.id}", f"scene:{s}", type="HAS_SCENE")
    for i in memory.items:
        g.add_node(f"item:{i.id}", kind="item", label=i.text[:40],
                   title=f"{i.kind} item {i.id} ({i.time or 'no time'})\n{i.text}")
        for s in i.scene_ids:
            g.add_edge(f"scene:{s}", f"item:{i.id}", type="HAS_ITEM")
        for v in trigger_views_of_item(i):
            g.add_node(f"trigger:{v.id}", kind="trigger", family=v.family, channel=v.channel, host=i.id,
                       label=v.channel, title=f"item trigger ({v.channel}) of item {i.id}\n{v.text}")
            g.add_edge(f"trigger:{v.id}", f"item:{i.id}", type="TRIGGERS")
    return g


def restrict(g: nx.DiGraph, topic: str | None = None, scene: str | None = None, hops: int = 1) -> nx.DiGraph:
    """The part of the graph around one topic, or within `hops` of one scene."""
    if topic:
        root = f"topic:{topic}"
        if root not in g:
            raise UsageError(f"no topic {topic!r} in memory {g.graph['memory_id']!r}")
        scenes = set(g.successors(root))
        keep = {root} | scenes
        for s in scenes:
            keep |= {n for n in g.successors(s) if g.nodes[n]["kind"] == "item"}
        keep |= {n for n in g if g.nodes[n]["kind"] == "trigger" and next(iter(g.successors(n))) in keep}
        return g.subgraph(keep).copy()
    if scene:
        root = f"scene:{scene}"
        if root not in g:
            raise UsageError(f"no scene {scene!r} in memory {g.graph['memory_id']!r}")
        keep = set(nx.ego_graph(g.to_undirected(as_view=True), root, radius=hops))
        return g.subgraph(keep).copy()
    return g


def highlight(g: nx.DiGraph, recall: Recall) -> set[str]:
    """Mark the recalled scenes and items and the trigger views that reached them; return them."""
    marked = set()
    for s in recall.scenes:
        marked.add(f"scene:{s.id}")
        families = {fam.key for fam in SCENE_FAMILIES if fam.channel in s.via}
        marked |= {n for n in g.predecessors(f"scene:{s.id}") if g.nodes[n].get("family") in families} \
            if f"scene:{s.id}" in g else set()
    for i in recall.items:
        marked.add(f"item:{i.id}")
        channels = {found[1] for found in map(family_of_credit, i.via) if found and found[0] is ITEM}
        if f"item:{i.id}" in g:
            marked |= {n for n in g.predecessors(f"item:{i.id}") if g.nodes[n].get("channel") in channels
                       and g.nodes[n].get("family") == ITEM.key}
    for n in marked & set(g):
        g.nodes[n]["highlight"] = True
    return marked & set(g)


def cap(g: nx.DiGraph, max_nodes: int) -> tuple[nx.DiGraph, str | None]:
    """Drop unhighlighted trigger views when the graph is too big; refuse if still too big."""
    if g.number_of_nodes() <= max_nodes:
        return g, None
    keep = [n for n, d in g.nodes(data=True) if d["kind"] != "trigger" or d.get("highlight")]
    if len(keep) > max_nodes:
        raise UsageError(f"the graph has {len(keep)} nodes without its trigger views, more than "
                        f"--max-nodes {max_nodes}; show one topic (--topic) or scene (--scene), or raise --max-nodes")
    dropped = g.number_of_nodes() - len(keep)
    return g.subgraph(keep).copy(), f"{dropped} trigger views left out to stay under {max_nodes} nodes"


def render_html(g: nx.DiGraph, heading: str = "") -> str:
    """A self-contained HTML page of the graph (vis-network inline, no network access)."""
    from pyvis.network import Network

    net = Network(height="900px", width="100%", directed=True, cdn_resources="in_line", heading="")
    for n, d in g.nodes(data=True):
        style = dict(STYLE[d["kind"]])
        if d["kind"] == "trigger" and d.get("family") in FAMILIES:  # each family its colour
            style["color"] = FAMILIES[d["family"]].colour
        if d.get("highlight"):
            style.update(color={"background": style["color"], "border": HIGHLIGHT}, borderWidth=4)
        net.add_node(n, label=d["label"], title=d["title"], **style)
    for a, b, d in g.edges(data=True):
        net.add_edge(a, b, title=d["type"], label="" if d["type"] != "NEXT" else "next",
                     color="#999999" if d["type"] != "TRIGGERS" else "#cccccc")
    big = g.number_of_nodes() > 400
    net.set_options('{"physics": {"solver": "barnesHut", "barnesHut": {"gravitationalConstant": -8000, '
                    '"springLength": 120}, "stabilization": {"iterations": %d}}, '
                    '"interaction": {"hover": true, "tooltipDelay": 100}}' % (150 if big else 400))
    html = net.generate_html()
    html = re.sub(r"<!--\s*<link[^>]*node_modules.*?-->", "", html, flags=re.S)
    html = re.sub(r"<link[^>]*href=\"https?://[^\"]*\"[^>]*/?>", "", html, flags=re.S)
    html = re.sub(r"<script[^>]*src=\"https?://[^\"]*\"[^>]*>\s*</script>", "", html, flags=re.S)
    if heading:
        html = html.replace("<body>", f"<body><h3 style=\"font-family:sans-serif\">{_escape(heading)}</h3>", 1)
    return html


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def write_html(g: nx.DiGraph, path: Path, heading: str = "") -> None:
    try:
        path.write_text(render_html(g, heading), encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"{path}: cannot write ({exc.strerror})") from None
