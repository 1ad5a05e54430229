"""Tuning memories of the strong kind: scenes and triggers written by a strong LLM writer for a
LoCoMo conversation and the LoCoMo-Plus dev cues stitched into it, kept as a fixture.

    # 1. the writer's input: every session of the base and every cue as its own session,
    #    turns by id, the probes' trigger queries left out (the writer never sees them)
    python -m benchmarks.strong_memory input --base conv-42 -o work/conv42-strong
    # 2. the writer reads work/conv42-strong/input/*.txt and INSTRUCTIONS.md and writes one
    #    JSON list of scenes per input file into work/conv42-strong/scenes/
    # 3. the fixture: every turn in exactly one scene, every scene complete, texts left out
    python -m benchmarks.strong_memory assemble --base conv-42 --dir work/conv42-strong \\
        -o fixtures/conv42-strong.json
    python -m benchmarks.fixture import fixtures/conv42-strong.json
    tmem eval locomo-plus --memory conv42-strong --base conv-42

A scene the writer returns is {"turn_ids", "title", "summary", "triggers": {"scene":
{"situation", "object", "event", "emotion"}, "horizon": {channel: sentence}}}; the horizon
channels are those of the project's scene-trigger prompt (tmem_graph/llm/prompts/scene_triggers.py),
whose wording INSTRUCTIONS.md repeats. Scene ids are given here: `<base>/S<session>#<n>` for the
base's scenes, `cue<index>` for a cue's (its probe's index in locomo_plus_dev.json).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tmem_graph import api
from tmem_graph.construct.inputs import InputTurn, locomo_turns
from tmem_graph.errors import TmemError, ValidationError
from tmem_graph.evaluate.data import base_probes, data_dir, load
from tmem_graph.evaluate.fixtures import strip
from tmem_graph.llm.prompts.scene_card import SceneCard
from tmem_graph.llm.prompts.scene_triggers import HORIZON_CHANNELS, SceneTriggersOut

SCENE_FIELDS = ("situation", "object", "event", "emotion")


def conversation(base: str) -> tuple[list[str], list[InputTurn], dict[str, int]]:
    """The speakers, every turn (the base's sessions, then each cue as its own session) and,
    for each cue turn id, its probe's index."""
    root = data_dir()
    samples = load(root / "locomo10.json")
    turns = locomo_turns(samples, base)
    probes = base_probes(load(root / "locomo_plus_dev.json"), samples, base)
    cue_of = {}
    for probe in probes:
        turns += probe.cue
        cue_of.update({t.id: probe.index for t in probe.cue})
    conv = next(s for s in samples if s["sample_id"] == base)["conversation"]
    return [conv["speaker_a"], conv["speaker_b"]], turns, cue_of


def instructions(speakers: list[str]) -> str:
    """What the writer is asked, in the words of the project's construction prompts."""
    channels = "\n".join(f"- `{k}`: {v}" for k, v in HORIZON_CHANNELS.items())
    card = SceneCard.model_fields
    trig = SceneTriggersOut.model_fields
    return f"""# Writing the scenes of a memory

A conversation between {speakers[0]} and {speakers[1]}, session by session, is in `input/`.
Each line is `[turn id] Speaker: text`; each session starts with its date. For every file
`input/<name>.txt` write `scenes/<name>.json`: a JSON list of the scenes of that file.

1. **Segment** each session into scenes. A scene is one coherent event or exchange: it closes
   when the event the speakers are dealing with closes and a different matter begins. A new
   session always starts a new scene; within a session, a short digression or a pause does not
   close the scene. Greetings belong to the matter that follows them; thanks and farewells to
   the matter before them. Do not over-split: a scene usually has 3 to 20 turns, and many
   sessions are one or two scenes. Every turn belongs to exactly one scene, scenes hold
   consecutive turns of one session, in order. In `cues.txt` every session is one scene.
2. **Describe** each scene so that it can be found and understood later without the dialogue.
   Use names, not pronouns; keep concrete details (dates, places, numbers, titles, feelings).
   `title`: {card['title'].description}. `summary`: {card['summary'].description}.
3. **Scene trigger**: describe the scene abstractly in four sentences: `situation`
   ({trig['situation'].description}), `object` ({trig['object'].description}), `event`
   ({trig['event'].description}), `emotion` ({trig['emotion'].description}).
4. **Horizon**: look ahead. For each channel below, write one sentence (under 35 words) about
   a FUTURE situation in which this scene will matter, in words that a later message could
   use: a different, later situation (what the speaker will be doing, planning, avoiding or
   choosing then) that reuses few of the scene's words; `null` when the scene gives no signal
   for a channel.
{channels}

Each scene, in the order of its turns:

```json
{{"turn_ids": ["D1:1", "D1:2"], "title": "...", "summary": "...",
  "triggers": {{"scene": {{"situation": "...", "object": "...", "event": "...", "emotion": "..."}},
               "horizon": {{"personal_arc": "...", "avoidance_habit": "...", "goal_arc": "...",
                           "belief_in_action": "...", "legacy_anchor": "..."}}}}}}
```

Write every scene from the dialogue alone; nothing else about the conversation or any later
question is to be looked up. Check your files with
`python -m benchmarks.strong_memory check --dir <this folder>`.
"""


def write_input(base: str, out: Path) -> None:
    speakers, turns, cue_of = conversation(base)
    (out / "input").mkdir(parents=True, exist_ok=True)
    (out / "scenes").mkdir(exist_ok=True)
    files: dict[str, list[str]] = {}
    last_session = None
    for t in turns:
        name = "cues" if t.id in cue_of else f"session-{t.session:02d}"
        lines = files.setdefault(name, [])
        if t.session != last_session:
            lines.append(f"\n## Session {t.session} ({t.time[:10]})" if t.time else f"\n## Session {t.session}")
            last_session = t.session
        lines.append(f"[{t.id}] {t.speaker}: {t.text}")
    for name, lines in files.items():
        (out / "input" / f"{name}.txt").write_text("\n".join(lines).lstrip() + "\n", encoding="utf-8")
    (out / "INSTRUCTIONS.md").write_text(instructions(speakers), encoding="utf-8")
    (out / "base").write_text(base + "\n", encoding="utf-8")
    print(f"{out}: {len(files)} input files, {len(turns)} turns ({len(cue_of)} in cues)")


def scenes_of(base: str, folder: Path) -> tuple[list[dict], list[str]]:
    """The memory's scenes from the writer's files, with ids; and every problem found."""
    _, turns, cue_of = conversation(base)
    order = {t.id: n for n, t in enumerate(turns)}
    session = {t.id: t.session for t in turns}
    problems: list[str] = []
    seen: dict[str, str] = {}
    scenes: list[dict] = []
    counters: dict[int, int] = {}
    files = sorted((folder / "scenes").glob("*.json"))
    for path in files:
        try:
            raw = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            problems.append(f"{path.name}: not JSON ({exc})")
            continue
        if not isinstance(raw, list):
            problems.append(f"{path.name}: expected a JSON list of scenes")
            continue
        for n, scene in enumerate(raw):
            where = f"{path.name}[{n}]"
            ids = scene.get("turn_ids") if isinstance(scene, dict) else None
            if not isinstance(ids, list) or not ids:
                problems.append(f"{where}: turn_ids missing or empty")
                continue
            unknown = [i for i in ids if i not in order]
            if unknown:
                problems.append(f"{where}: unknown turn ids {unknown[:5]}")
                continue
            if len({session[i] for i in ids}) != 1:
                problems.append(f"{where}: turns of more than one session")
            positions = [order[i] for i in ids]
            if positions != list(range(positions[0], positions[0] + len(ids))):
                problems.append(f"{where}: turns not consecutive and in order")
            for i in ids:
                if i in seen:
                    problems.append(f"{where}: turn {i} is also in {seen[i]}")
                seen[i] = where
            problems += [f"{where}: {p}" for p in scene_problems(scene)]
            first = ids[0]
            if first in cue_of:
                sid = f"cue{cue_of[first]}"
            else:
                counters[session[first]] = counters.get(session[first], 0) + 1
                sid = f"{base}/S{session[first]}#{counters[session[first]]}"
            horizon = scene["triggers"]["horizon"] if isinstance(scene.get("triggers"), dict) else {}
            scenes.append({"id": sid, "title": scene.get("title"), "summary": scene.get("summary"),
                           "turn_ids": ids, "triggers": {
                               "scene": {k: scene["triggers"]["scene"].get(k) for k in SCENE_FIELDS}
                               if isinstance(scene.get("triggers"), dict)
                               and isinstance(scene["triggers"].get("scene"), dict) else {},
                               "horizon": [{"channel": c, "text": horizon[c].strip()} for c in HORIZON_CHANNELS
                                           if isinstance(horizon, dict) and isinstance(horizon.get(c), str)
                                           and horizon[c].strip()]}})
    missing = [t.id for t in turns if t.id not in seen]
    if missing:
        problems.append(f"{len(missing)} turns in no scene yet, first {missing[:5]}")
    scenes.sort(key=lambda s: order[s["turn_ids"][0]])
    return scenes, problems


def scene_problems(scene: dict) -> list[str]:
    out = [f"{k} missing or empty" for k in ("title", "summary")
           if not isinstance(scene.get(k), str) or not scene[k].strip()]
    triggers = scene.get("triggers")
    if not isinstance(triggers, dict) or not isinstance(triggers.get("scene"), dict):
        return out + ["triggers.scene missing"]
    out += [f"triggers.scene.{k} missing or empty" for k in SCENE_FIELDS
            if not isinstance(triggers["scene"].get(k), str) or not triggers["scene"][k].strip()]
    horizon = triggers.get("horizon")
    if not isinstance(horizon, dict):
        return out + ["triggers.horizon must be an object {channel: sentence or null}"]
    out += [f"triggers.horizon: unknown channel {k!r}" for k in horizon if k not in HORIZON_CHANNELS]
    return out


def assemble(base: str, folder: Path, memory_id: str, output: Path) -> None:
    scenes, problems = scenes_of(base, folder)
    if problems:
        raise ValidationError(problems)
    speakers, turns, _ = conversation(base)
    document = {"format": "tmem-memory/1", "memory_id": memory_id, "speakers": speakers,
                "turns": [{"id": t.id, "speaker": t.speaker, "text": t.text, "time": t.time, "session": t.session}
                          for t in turns],
                "scenes": scenes, "topics": [], "items": [], "personas": []}
    fixture, stripped = strip(document, base, base)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(api.dumps(fixture), encoding="utf-8")
    print(f"{output}: {len(turns)} turns ({stripped} texts left to the data folder), {len(scenes)} scenes")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    i = sub.add_parser("input", help="write the writer's input and instructions")
    i.add_argument("--base", required=True, help="the LoCoMo conversation (conv-42, ...)")
    i.add_argument("-o", "--output", type=Path, required=True)
    c = sub.add_parser("check", help="check the writer's scenes so far")
    c.add_argument("--dir", type=Path, required=True)
    a = sub.add_parser("assemble", help="write the fixture")
    a.add_argument("--base", required=True)
    a.add_argument("--dir", type=Path, required=True)
    a.add_argument("--memory", help="memory id (default: <base without dash>-strong)")
    a.add_argument("-o", "--output", type=Path, required=True)
    args = ap.parse_args()
    try:
        if args.command == "input":
            write_input(args.base, args.output)
        elif args.command == "check":
            base = (args.dir / "base").read_text(encoding="utf-8").strip()
            scenes, problems = scenes_of(base, args.dir)
            print(f"{len(scenes)} scenes")
            print("\n".join(problems) if problems else "ok: every turn in exactly one complete scene")
        else:
            assemble(args.base, args.dir, args.memory or f"{args.base.replace('-', '')}-strong", args.output)
    except TmemError as exc:
        raise SystemExit(f"error: {exc}") from None


if __name__ == "__main__":
    main()
