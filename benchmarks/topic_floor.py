"""How many topics a memory's scenes fall into at each TOPIC_FLOOR, if the model always joins
the nearest topic offered (the 1.5B model's habit): the worst case the floor alone must hold.

    python -m benchmarks.topic_floor c26s5-after [--floor 0.45 --floor 0.55 …] [--raw]
    python -m benchmarks.topic_floor conv30-full --sessions 7     # the scenes of sessions 1-7 only
    TMEM_LLM_MODEL=local python -m benchmarks.topic_floor conv30-full --sessions 7 --llm

It replays `stages.assign_topics`'s nearness (each scene's title and summary, the speakers'
names set aside unless `--raw`, against a topic's last TOPIC_MEMBERS scenes) in arrival order
with no LLM, and prints per floor the topic count, topics per 10 scenes and the largest topic's
share of scenes, the figures `tmem eval construction` targets (docs/construction.md).
With `--llm` the configured LLM assigns the same scene cards at today's TOPIC_FLOOR, the real
stage (`stages.assign_topics`, its second topic included), session by session as build rounds.
"""

from __future__ import annotations

import argparse
import itertools
import statistics

from tmem_graph import api
from tmem_graph.construct import stages
from tmem_graph.encode import get_encoder
from tmem_graph.errors import TmemError

FLOORS = (0.45, 0.5, 0.55, 0.575, 0.6, 0.65)


def greedy_topics(vectors: list[list[float]], floor: float) -> list[list[int]]:
    """Scenes (by index) grouped as a model that always accepts the nearest topic would group them."""
    topics: list[list[int]] = []
    for n, v in enumerate(vectors):
        scored = [(max(stages._dot(v, vectors[m]) for m in t[-stages.TOPIC_MEMBERS:]), k)
                  for k, t in enumerate(topics)]
        best = max(scored, default=(-1.0, -1))
        if best[0] >= floor:
            topics[best[1]].append(n)
        else:
            topics.append([n])
    return topics


def assign_with_llm(scenes: list, session: dict, encoder, names: list[str]) -> None:
    """The build's topic stage on these scene cards with the configured LLM, one round per
    session; prints the topics after each."""
    from tmem_graph.llm.factory import open_llm
    from tmem_graph.local import enable_local_llm

    enable_local_llm()
    topics: list = []
    fresh = itertools.count(1)
    by_id = {s.id: s for s in scenes}
    seen = 0
    with open_llm() as llm:
        for number, group in itertools.groupby(scenes, key=lambda s: session[s.turn_ids[0]]):
            group = list(group)
            seen += len(group)
            stages.assign_topics(group, topics, llm, lambda: f"t{next(fresh)}", encoder, by_id, names)
            sizes = sorted((len(t.scene_ids) for t in topics), reverse=True)
            print(f"after session {number}: {seen} scenes, {len(topics)} topics, largest {sizes[0]} "
                  f"= {sizes[0] / seen:.3f} of the scenes; sizes {' '.join(map(str, sizes))}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("memory")
    ap.add_argument("--floor", type=float, action="append", help=f"floors to try (default {FLOORS})")
    ap.add_argument("--raw", action="store_true", help="keep the speakers' names in the lines")
    ap.add_argument("--encoder", default=None, help="encoder name (default: the memory's)")
    ap.add_argument("--sessions", type=int, default=None,
                    help="only the scenes whose first turn is of these first sessions (as a build up to them)")
    ap.add_argument("--llm", action="store_true",
                    help="assign them with the configured LLM (TMEM_LLM_MODEL) at today's floor instead")
    args = ap.parse_args()

    try:
        memory = api.Memory(args.memory)
        doc = memory.export()
    except TmemError as exc:
        raise SystemExit(f"error: {exc}") from None
    names = [] if args.raw else sorted({t["speaker"] for t in doc["turns"]})
    session = {t["id"]: None if t.get("session") is None else int(t["session"]) for t in doc["turns"]}
    kept = [s for s in doc["scenes"] if args.sessions is None
            or (session.get(s["turn_ids"][0]) is not None and session[s["turn_ids"][0]] <= args.sessions)]
    scenes = [stages.Scene(s["id"], s["turn_ids"], s.get("title"), s.get("summary")) for s in kept]
    if len(scenes) < 2:
        raise SystemExit(f"error: memory {args.memory!r} has {len(scenes)} scene(s); topics need at least 2")
    encoder = get_encoder(args.encoder) if args.encoder else memory.encoder
    if args.llm:
        assign_with_llm(scenes, session, encoder, names)
        return
    vectors = encoder.encode([stages._scene_line(s, names) for s in scenes])
    nearest = [max(stages._dot(v, w) for w in vectors[:n]) for n, v in enumerate(vectors) if n]
    print(f"{args.memory}: {len(scenes)} scenes, names aside: {', '.join(names) or 'none'}; "
          f"cosine with the nearest earlier scene, median {statistics.median(nearest):.3f}")
    print("| floor | topics | topics per 10 scenes | largest share | sizes |")
    print("|---|---|---|---|---|")
    for floor in args.floor or FLOORS:
        topics = greedy_topics(vectors, floor)
        sizes = sorted((len(t) for t in topics), reverse=True)
        print(f"| {floor:.3f} | {len(topics)} | {10 * len(topics) / len(scenes):.1f} | "
              f"{sizes[0] / len(scenes):.2f} | {' '.join(map(str, sizes[:10]))} |")


if __name__ == "__main__":
    main()
