"""Deterministic synthetic `tmem-memory/1` documents of any size, for tests and benchmarks.

Texts are varied sentences built from small vocabularies so that encoders and BM25 see
realistic, non-identical inputs; the structure follows the paper's proportions (a scene
has ~10 turns, a topic ~3 scenes, items carry one Entity/Bridge trigger = 3 views, scenes a
4-attribute Scene trigger and a few Horizon projections).
"""

from __future__ import annotations

import random

PEOPLE = ["Ana", "Ben", "Chloé", "Dev", "Eitan", "Fatima", "Goro", "Hana", "Ivan", "Jo"]
PLACES = ["Lisbon", "the lake", "the office", "Kyoto", "the gym", "a bakery", "the park",
          "the museum", "grandma's house", "the clinic", "a jazz bar", "the station"]
# Deliberately disjoint from the hand-written test memory (examples/team-dinner.json), which
# tests graft onto these documents as the needles among synthetic hay.
THINGS = ["a guitar", "a new job", "a chess tournament", "sourdough bread", "a vintage camera",
          "a wedding", "a book club", "a broken bike", "pottery class", "a camping trip",
          "a promotion", "a leaking roof", "a tax return", "a painting", "a road trip", "a sailing course"]
FEELINGS = ["excited", "anxious", "proud", "tired", "relieved", "nostalgic", "curious", "upset"]
VERBS = ["talked about", "planned", "worried about", "celebrated", "asked advice on",
         "remembered", "complained about", "made progress on"]
CHANNELS = ["goal_arc", "avoidance_habit", "relationship_arc", "risk", "care_arc"]


def _sentence(rng: random.Random, speaker: str) -> str:
    return (f"{speaker} {rng.choice(VERBS)} {rng.choice(THINGS)} near {rng.choice(PLACES)} "
            f"and felt {rng.choice(FEELINGS)} about {rng.choice(THINGS)}.")


def synthetic_memory(memory_id: str, n_items: int, n_scenes: int | None = None,
                     turns_per_scene: int = 10, views_per_item: int = 3, horizon_per_scene: int = 4,
                     seed: int = 7) -> dict:
    """A valid document with `n_items` items and about `views_per_item` views per item."""
    rng = random.Random(seed)
    n_scenes = n_scenes or max(1, n_items // 8)
    speakers = PEOPLE[:2]
    turns, scenes, items = [], [], []
    for s in range(n_scenes):
        day = f"2023-{1 + s * 12 // n_scenes:02d}-{1 + s % 28:02d}T{8 + s % 12:02d}:00:00"
        ids = []
        for k in range(turns_per_scene):
            tid = f"D{s + 1}:{k + 1}"
            speaker = speakers[k % 2]
            turns.append({"id": tid, "speaker": speaker, "text": _sentence(rng, speaker),
                          "time": day, "session": s + 1})
            ids.append(tid)
        scenes.append({
            "id": f"s{s + 1}", "title": f"{speakers[0]} and {rng.choice(THINGS)}",
            "summary": _sentence(rng, speakers[s % 2]), "narrative": _sentence(rng, speakers[0]) * 2,
            "turn_ids": ids, "time": day,
            "triggers": {
                "scene": {"situation": f"being {rng.choice(FEELINGS)} at {rng.choice(PLACES)}",
                          "object": rng.choice(THINGS), "event": f"{rng.choice(VERBS)} {rng.choice(THINGS)}",
                          "emotion": rng.choice(FEELINGS)},
                "horizon": [{"channel": CHANNELS[h % len(CHANNELS)],
                             "text": f"later {rng.choice(VERBS)} {rng.choice(THINGS)} at {rng.choice(PLACES)}"}
                            for h in range(horizon_per_scene)],
            },
        })
    triggers_per_item = max(1, round(views_per_item / 3))
    for i in range(n_items):
        s = i % n_scenes
        connected = n_scenes > 1 and i % 5 == 4
        scene_ids = [f"s{s + 1}", f"s{(s + 1) % n_scenes + 1}"] if connected else [f"s{s + 1}"]
        items.append({
            "id": f"i{i + 1}", "kind": "connected" if connected else "atomic",
            "text": _sentence(rng, rng.choice(speakers)), "scene_ids": scene_ids,
            "triggers": [{"concept": rng.choice(THINGS), "bridge": f"when {rng.choice(VERBS)} "
                          f"{rng.choice(THINGS)} at {rng.choice(PLACES)}",
                          "rationale": f"because of {rng.choice(THINGS)}"}
                         for _ in range(triggers_per_item)],
        })
    topics = [{"id": f"t{t + 1}", "title": f"{rng.choice(THINGS)} and {rng.choice(PLACES)}",
               "keywords": rng.sample(THINGS, 3), "scene_ids": [f"s{k + 1}" for k in range(t * 3, min(n_scenes, t * 3 + 3))]}
              for t in range((n_scenes + 2) // 3)]
    personas = [{"speaker": p, "summary": f"{p} likes {rng.choice(THINGS)} and {rng.choice(PLACES)}."}
                for p in speakers]
    return {"format": "tmem-memory/1", "memory_id": memory_id, "speakers": speakers, "turns": turns,
            "scenes": scenes, "topics": topics, "items": items, "personas": personas}


def graft(base: dict, extra: dict, prefix: str) -> dict:
    """`base` with every object of `extra` added, ids prefixed with `prefix` (a new document)."""
    p = lambda ids: [prefix + i for i in ids]  # noqa: E731
    out = {**base, "speakers": list(dict.fromkeys(base["speakers"] + extra["speakers"]))}
    out["turns"] = base["turns"] + [{**t, "id": prefix + t["id"]} for t in extra["turns"]]
    out["scenes"] = base["scenes"] + [{**s, "id": prefix + s["id"], "turn_ids": p(s["turn_ids"])}
                                      for s in extra["scenes"]]
    out["topics"] = base["topics"] + [{**t, "id": prefix + t["id"], "scene_ids": p(t["scene_ids"])}
                                      for t in extra["topics"]]
    out["items"] = base["items"] + [{**i, "id": prefix + i["id"], "scene_ids": p(i["scene_ids"])}
                                    for i in extra["items"]]
    known = {x["speaker"] for x in base["personas"]}
    out["personas"] = base["personas"] + [x for x in extra["personas"] if x["speaker"] not in known]
    return out
