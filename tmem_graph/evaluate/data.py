"""The benchmark data: LoCoMo QAs with repaired evidence ids, and LoCoMo-Plus probes
stitched into their base conversations (shared/data/README.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from ..construct.inputs import InputTurn, locomo_turns
from ..config import benchmark_data_dir_override
from ..errors import ValidationError
from ..textio import parse_json, read_text

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "several": 3, "few": 3}
UNITS = {"day": 1, "week": 7, "month": 30, "year": 365}


def data_dir() -> Path:
    """`$TMEM_DATA_DIR`, else `../shared/data` beside this checkout, else `/work/shared/data`
    (where these machines keep it)."""
    override = benchmark_data_dir_override()
    if override:
        return override
    candidates = [Path(__file__).resolve().parents[3] / "shared" / "data", Path("/work/shared/data")]
    for candidate in candidates:
        if (candidate / "locomo10.json").is_file():
            return candidate
    raise ValidationError([f"no benchmark data found (looked in {', '.join(map(str, candidates))}); "
                           "set TMEM_DATA_DIR or pass --data"])


def load(path: Path) -> list:
    data = parse_json(read_text(path), path)
    if not isinstance(data, list):
        raise ValidationError([f"{path}: expected a JSON list"])
    return data


@dataclass
class QA:
    question: str
    category: int
    evidence: list[str]
    answer: str | None = None


@dataclass
class EvidenceRepairs:
    repaired: int = 0
    dropped: int = 0
    skipped_questions: int = 0
    examples: list[str] = field(default_factory=list)


def repair_evidence(raw: list, repairs: EvidenceRepairs) -> list[str]:
    """Evidence ids as `D<session>:<turn>`: lists split ("D8:6; D9:17", "D9:1 D4:4"),
    "D:11:26" → "D11:26", "D30:05" → "D30:5"; unparseable ids (e.g. "D") dropped. Counted."""
    out: list[str] = []
    for entry in raw:
        parts = [p for p in re.split(r"[;,\s]+", str(entry)) if p]
        changed = len(parts) != 1
        for part in parts:
            m = re.fullmatch(r"D:?(\d+):(\d+)", part)
            if not m:
                repairs.dropped += 1
                repairs.examples.append(f"dropped {entry!r}")
                continue
            fixed = f"D{int(m.group(1))}:{int(m.group(2))}"
            if fixed != part or changed:
                repairs.repaired += 1
                repairs.examples.append(f"{entry!r} -> {fixed}")
                changed = False
            if fixed not in out:
                out.append(fixed)
    return out


def locomo_qas(sample: dict, repairs: EvidenceRepairs) -> list[QA]:
    """The category 1-4 QAs of a sample with usable evidence (the others are counted)."""
    qas = []
    for q in sample.get("qa", []):
        if q.get("category") not in CATEGORIES:
            continue
        evidence = repair_evidence(q.get("evidence") or [], repairs)
        if not evidence:
            repairs.skipped_questions += 1
            continue
        qas.append(QA(q["question"], q["category"], evidence, str(q.get("answer")) if "answer" in q else None))
    return qas


def first_sessions(turns: list, sessions: int | None) -> list:
    """The turns of sessions 1..`sessions` (all turns when None)."""
    return [t for t in turns if sessions is None or (t.session is not None and t.session <= sessions)]


def within_sessions(evidence: list[str], sessions: int | None) -> bool:
    """Whether every `D<session>:<turn>` id lies in sessions 1..`sessions` (always when None)."""
    return sessions is None or all(int(e[1:].split(":")[0]) <= sessions for e in evidence)


def build_steps(sample: dict, sessions: int | None = None, probes: list["Probe"] = (),
                per_step: int = 5) -> list[tuple[str, list[InputTurn]]]:
    """The incremental ingests that build a conversation the way an assistant meets it: one per
    session in order (sessions 1..`sessions`), then the cue dialogues of `probes`, `per_step`
    probes per ingest in probe order. `tmem eval --build` and benchmarks/local_build.py both
    build this way, so a run stopped midway keeps every finished step and their memories agree."""
    turns = first_sessions(locomo_turns(sample, None), sessions)
    steps = [(f"session {n}", [t for t in turns if t.session == n]) for n in sorted({t.session for t in turns})]
    for start in range(0, len(probes), per_step):
        chunk = probes[start:start + per_step]
        steps.append((f"locomo-plus cues of probes {start + 1}-{start + len(chunk)} of {len(probes)}",
                       [t for p in chunk for t in p.cue]))
    return steps


def gap_days(text: str) -> int:
    """Days in a LoCoMo-Plus `time_gap` ("about two months later", "a year after")."""
    m = re.search(r"(a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|several)\s+"
                  r"(day|week|month|year)s?", text.lower())
    if not m:
        raise ValidationError([f"time_gap {text!r}: no '<number> <unit>' in it"])
    return NUMBERS[m.group(1).split()[-1]] * UNITS[m.group(2)]


@dataclass
class Probe:
    index: int
    relation: str
    base: str
    cue: list[InputTurn]
    query: str
    query_speaker: str
    query_time: str


def stitch(probe: dict, samples: list[dict]) -> Probe:
    """A probe placed in its base conversation `locomo10[index % 10]`: A/B mapped to the two
    speakers, the query a week after the last session, the cue `time_gap` before the query,
    the cue its own session (numbered after the base's, distinct for every probe of that base)
    with ids `P<index>:<n>`."""
    base = samples[probe["index"] % len(samples)]
    conv = base["conversation"]
    speakers = {"A": conv["speaker_a"], "B": conv["speaker_b"]}
    last = max(locomo_turns(base, None), key=lambda t: t.time or "")
    query_time = datetime.fromisoformat(last.time) + timedelta(days=7)
    cue_time = query_time - timedelta(days=gap_days(probe["time_gap"]))
    sessions = [int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k)]
    # its own session after the base's; probes sharing a base (index i, i+10, ...) get distinct ones
    session = max(sessions) + 1 + probe["index"] // len(samples)
    cue = []
    for n, line in enumerate(l for l in probe["cue_dialogue"].splitlines() if l.strip()):
        who, _, text = line.partition(":")
        cue.append(InputTurn(speakers[who.strip()], text.strip(),
                             (cue_time + timedelta(seconds=30 * n)).isoformat(), session,
                             f"P{probe['index']}:{n + 1}"))
    who, _, text = probe["trigger_query"].partition(":")
    return Probe(probe["index"], probe["relation_type"], base["sample_id"], cue, text.strip(),
                 speakers[who.strip()], query_time.isoformat())


def base_probes(dev: list[dict], samples: list[dict], base: str) -> list[Probe]:
    """The LoCoMo-Plus dev probes whose base conversation is the sample `base` (`index % 10`),
    each stitched into it, in file order."""
    position = next((n for n, s in enumerate(samples) if s.get("sample_id") == base), None)
    if position is None:
        raise ValidationError([f"no LoCoMo sample {base!r} to stitch LoCoMo-Plus probes into"])
    return [stitch(p, samples) for p in dev if p["index"] % len(samples) == position]


RELATIONS = ("causal", "state", "goal", "value")


def scene_turns(doc) -> dict[str, list[InputTurn]]:
    """Each scene of a memory document (`Memory.document()`) with its turns, as `probes_from_file` needs them."""
    turns = {t.id: InputTurn(t.speaker, t.text, t.time, None, t.id) for t in doc.turns}
    return {s.id: [turns[t] for t in s.turn_ids] for s in doc.scenes}


def probes_from_file(path: Path, memory_id: str, scene_turns: dict[str, list[InputTurn]]) -> list[Probe]:
    """Probes of an imported memory from a probe file (shared/data/strong-triggers): a JSON list
    of {memory_id, query, speaker, cue_scene, relation_type}; the entries of `memory_id` (an
    entry without memory_id belongs to every memory), each cue the turns of its named scene.
    Every problem is reported with the entry's position; none of them is skipped silently."""
    entries = load(path)
    problems: list[str] = []
    probes: list[Probe] = []
    for n, entry in enumerate(entries):
        where = f"{path}[{n}]"
        if not isinstance(entry, dict):
            problems.append(f"{where}: expected an object")
            continue
        if entry.get("memory_id", memory_id) != memory_id:
            continue
        missing = [k for k in ("query", "cue_scene") if not isinstance(entry.get(k), str) or not entry[k].strip()]
        if missing:
            problems.append(f"{where}: missing or empty {', '.join(missing)}")
            continue
        relation = entry.get("relation_type", "causal")
        if relation not in RELATIONS:
            problems.append(f"{where}: relation_type {relation!r} is not one of {', '.join(RELATIONS)}")
            continue
        if entry["cue_scene"] not in scene_turns:
            problems.append(f"{where}: memory {memory_id!r} has no scene {entry['cue_scene']!r}")
            continue
        speaker = entry.get("speaker")
        probes.append(Probe(n, relation, memory_id, list(scene_turns[entry["cue_scene"]]), entry["query"].strip(),
                            speaker if isinstance(speaker, str) and speaker.strip() else None, ""))
    if problems:
        raise ValidationError(problems)
    if not probes:
        raise ValidationError([f"{path}: no probe of memory {memory_id!r} in it"])
    return probes
