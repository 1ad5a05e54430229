"""Conversation inputs: LoCoMo JSON and the generic turn list (JSON array or JSON Lines).

Everything is validated before any LLM call; a bad record is reported with where it is
(`line 12: "speaker" is missing`, `conv-26 session_3[4]: empty text`).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from ..errors import ValidationError
from ..format import MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_BYTES
from ..textio import is_iso_datetime, parse_json, read_text, value_problems

LOCOMO_TIME = "%I:%M %p on %d %B, %Y"


@dataclass(frozen=True)
class InputTurn:
    speaker: str
    text: str
    time: str | None = None
    session: int | None = None
    id: str | None = None


def read_conversation(path: str | Path, fmt: str | None = None, sample: str | None = None) -> list[InputTurn]:
    """Turns of the conversation in `path` (format guessed when `fmt` is None)."""
    p = Path(path)
    raw = read_text(p)
    fmt = fmt or guess_format(raw)
    if fmt == "locomo":
        return locomo_turns(parse_json(raw, p), sample, where=str(p))
    if fmt == "turns":
        return generic_turns(raw, where=str(p))
    raise ValidationError([f"{p}: unknown format {fmt!r} (use locomo or turns)"])


def guess_format(raw: str) -> str:
    """`locomo` for LoCoMo samples (objects with a `conversation`), else `turns`."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # JSON Lines or broken input: the turns parser reports it
        return "turns"  # JSON Lines (or broken input, which the turns parser reports)
    first = data[0] if isinstance(data, list) and data else data
    return "locomo" if isinstance(first, dict) and "conversation" in first else "turns"


def generic_turns(raw: str, where: str = "input") -> list[InputTurn]:
    """Parse a JSON array of turns or JSON Lines; every record is checked."""
    problems: list[str] = []
    stripped = raw.strip()
    records: list[tuple[str, Any]] = []
    if stripped.startswith("["):
        data = parse_json(stripped, where)
        records = [(f"{where}[{n}]", rec) for n, rec in enumerate(data)]
    else:
        for n, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append((f"{where} line {n}", json.loads(line)))
            except json.JSONDecodeError as exc:
                problems.append(f"{where} line {n}: invalid JSON ({exc.msg})")
            except RecursionError:
                problems.append(f"{where} line {n}: JSON nested too deeply to read")
            except ValueError as exc:  # e.g. an integer of more digits than Python converts
                problems.append(f"{where} line {n}: cannot be read as JSON ({exc})")
    turns = checked_turns(records, problems)
    if not records and not problems:
        problems.append(f"{where}: no turns")
    if problems:
        raise ValidationError(problems)
    return turns


def turn_records(records: list[Any], where: str = "turns") -> list[InputTurn]:
    """Turns given as Python objects (`Memory.add`): dicts of the turn-list format, or
    `InputTurn`s, every one checked; a bad one is an error naming it (`turns[3]: …`)."""
    if not isinstance(records, (list, tuple)):
        raise ValidationError([f"{where}: must be a list of turns, not {type(records).__name__}"])
    problems: list[str] = []
    as_dicts = [dict(vars(r)) if isinstance(r, InputTurn) else dict(r) if isinstance(r, dict) else r
                for r in records]  # copies: the caller's own dicts are left as they were
    for rec in as_dicts:
        if isinstance(rec, dict) and rec.get("id") is None:
            rec.pop("id", None)
    turns = checked_turns([(f"{where}[{n}]", rec) for n, rec in enumerate(as_dicts)], problems)
    if not records:
        problems.append(f"{where}: no turns")
    if problems:
        raise ValidationError(problems)
    return turns


def checked_turns(records: list[tuple[str, Any]], problems: list[str]) -> list[InputTurn]:
    """The valid turns of (where, record) pairs; each problem is appended to `problems`."""
    turns, ids = [], set()
    for at, rec in records:
        unstorable = value_problems(rec, at)
        if unstorable:
            problems += unstorable
            continue
        turn = _check_turn(rec, at, problems)
        if turn is None:
            continue
        if turn.id is not None:
            if turn.id in ids:
                problems.append(f'{at}: duplicate id "{turn.id}"')
            ids.add(turn.id)
        turns.append(turn)
    return turns


def single_turn(speaker: str | None, text: str | None, time: str | None = None, session: int | None = None,
                turn_id: str | None = None) -> InputTurn:
    """One turn given field by field (`tmem add --speaker … --text …`), checked like a file's."""
    record = {k: v for k, v in (("speaker", speaker), ("text", text), ("time", time), ("session", session),
                                ("id", turn_id)) if v is not None}
    return turn_records([record], where="the turn")[0]


def _check_turn(rec: Any, at: str, problems: list[str]) -> InputTurn | None:
    if not isinstance(rec, dict):
        problems.append(f"{at}: must be an object with speaker and text")
        return None
    bad = len(problems)
    speaker, text = rec.get("speaker"), rec.get("text")
    for field, value in (("speaker", speaker), ("text", text)):
        if value is not None and not isinstance(value, str):
            problems.append(f'{at}: "{field}" must be a string, not {type(value).__name__} {value!r:.40}')
    if isinstance(speaker, str) or speaker is None:
        if speaker is None or not speaker.strip():
            problems.append(f'{at}: "speaker" is missing or empty')
        elif len(speaker.strip()) > MAX_NAME_CHARS:
            problems.append(f'{at}: "speaker" is longer than {MAX_NAME_CHARS} characters')
    if text is None or (isinstance(text, str) and not text.strip()):
        problems.append(f'{at}: "text" is missing or empty')
    elif isinstance(text, str) and len(text.encode("utf-8")) > MAX_TEXT_BYTES:
        problems.append(f'{at}: "text" is longer than {MAX_TEXT_BYTES} bytes')
    time = rec.get("time")
    if time is not None and (not isinstance(time, str) or not is_iso_datetime(time)):
        problems.append(f'{at}: "time" {time!r} is not an ISO 8601 date-time')
    session = rec.get("session")
    if session is not None and (not isinstance(session, int) or isinstance(session, bool)):
        problems.append(f'{at}: "session" must be an integer, not {session!r}')
    tid = rec.get("id")
    if tid is not None and (not isinstance(tid, str) or not tid):
        problems.append(f'{at}: "id" must be a non-empty string')
    elif tid is not None and len(tid) > MAX_ID_CHARS:
        problems.append(f'{at}: "id" is longer than {MAX_ID_CHARS} characters')
    if len(problems) > bad:
        return None
    return InputTurn(speaker.strip(), text, time, session, tid)


def locomo_turns(data: Any, sample: str | None, where: str = "input") -> list[InputTurn]:
    """Turns of one LoCoMo sample (`sample`, or the only one), with session times.

    A turn's time is its session's start plus 30 s per turn (LoCoMo gives one time per
    session); a shared photo's caption is kept as `[shared a photo: caption]`.
    """
    samples = data if isinstance(data, list) else [data]
    if not all(isinstance(s, dict) and isinstance(s.get("conversation"), dict) for s in samples):
        raise ValidationError([f"{where}: not LoCoMo data (samples need a 'conversation' object)"])
    if sample is None:
        if len(samples) != 1:
            ids = ", ".join(str(s.get("sample_id")) for s in samples[:12])
            raise ValidationError([f"{where}: {len(samples)} samples; choose one with --sample ({ids})"])
        chosen = samples[0]
    else:
        found = [s for s in samples if s.get("sample_id") == sample]
        if not found:
            raise ValidationError([f"{where}: no sample {sample!r}"])
        chosen = found[0]
    name = chosen.get("sample_id", "sample")
    conv = chosen["conversation"]
    problems: list[str] = value_problems(conv, f"{name}")
    if problems:
        raise ValidationError(problems)
    sessions = sorted((int(m.group(1)), key) for key in conv
                      if (m := re.fullmatch(r"session_(\d+)", key)) and isinstance(conv[key], list))
    turns: list[InputTurn] = []
    for number, key in sessions:
        stamp = conv.get(f"{key}_date_time")
        try:
            start = datetime.strptime(stamp, LOCOMO_TIME) if stamp else None
        except (TypeError, ValueError):
            problems.append(f"{name} {key}_date_time: {stamp!r} does not parse as '{LOCOMO_TIME}'")
            start = None
        for n, rec in enumerate(conv[key]):
            at = f"{name} {key}[{n}]"
            if isinstance(rec, dict) and rec.get("blip_caption") and isinstance(rec.get("text"), str):
                rec = {**rec, "text": f"{rec['text']} [shared a photo: {rec['blip_caption']}]"}
            time = (start + timedelta(seconds=30 * n)).isoformat() if start else None
            turn = _check_turn({"speaker": rec.get("speaker") if isinstance(rec, dict) else None,
                                "text": rec.get("text") if isinstance(rec, dict) else None,
                                "id": rec.get("dia_id") if isinstance(rec, dict) else None},
                               at, problems)
            if turn:
                turns.append(InputTurn(turn.speaker, turn.text, time, number, turn.id))
    if not turns and not problems:
        problems.append(f"{name}: no sessions with turns")
    if problems:
        raise ValidationError(problems)
    return turns
