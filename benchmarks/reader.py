"""A blind strong-reader check (docs/evaluation.md, "Judged by a reader"): LoCoMo-Plus probes
(or LoCoMo questions, `--questions`) answered from several systems' evidence at equal tokens by
a reader that cannot tell them apart, then judged blind: awareness of the cue, or the gold answer.

    python -m benchmarks reader write --memory conv42-strong --base conv-42 --out DIR   # or --questions conv-42
    #   a fresh strong-model session per set answers DIR/blind/reader-N/answer.jsonl into
    #   DIR/blind/reader-N/replies.jsonl (its README.md); no set holds an ask twice
    python -m benchmarks reader judge-files --out DIR
    #   each judge reads DIR/judge/judge.jsonl and writes DIR/judge/verdicts-<name>.jsonl (DIR/judge/README.md)
    python -m benchmarks reader report DIR [DIR ...]

Systems: `tmem` (the evidence `ask` hands over), `by-date` (the same, its associative pointers
grouped by day: the layout before they were listed in the recall's order), `dense` and `hybrid`
(flat retrieval's turns in rank order, as many as fit in `tmem`'s tokens without its persona,
counted on the lines as shown). Blocks get random ids and go to one reader set per system, each
ask's blocks drawn to the sets at random, so that a reader answers every ask once and cannot
carry an answer from one system's block to another's; DIR/key.json, which neither reader nor
judges see, says which is which. `report`: the rate per system, judge, relation or category; the judges' agreement;
paired wins and losses against `tmem`; the rate by where the cue (or the gold evidence) stands.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
from pathlib import Path

from tmem_graph import api
from tmem_graph.config import Settings
from tmem_graph.evaluate import data as ev, runner
from tmem_graph.evaluate.flat import cut_at_budget
from tmem_graph.retrieve.evidence import (day, format_evidence, lane_only, listed_lines, opening,
                                          pointer_line)
from tmem_graph.store import Store

SYSTEMS = ("tmem", "by-date", "dense", "hybrid")
READER = """# Answer each message from its memory evidence

Each line of answer.jsonl is one message a user sends to an assistant that keeps a long-term
memory of earlier conversations: `speaker` (the user), `message`, and `evidence` (what the
memory handed over for this message). Reply as that assistant would, in one to three sentences,
to the user. Use the evidence where it bears on the message; do not mention "the evidence".
Read each line on its own: lines share no context (never use what another line's evidence
said), and the same message may appear several times with different evidence. Write replies.jsonl: one JSON object per line, {"id": ..., "reply": ...},
one for every id.
"""
JUDGE = """# Judge each reply for awareness of an earlier conversation

Each line of judge.jsonl holds a user's `message`, an earlier exchange of that user (`cue`)
that the message is implicitly tied to, and an assistant's `reply`. Decide whether the reply
shows awareness of the cue: it refers to, or clearly builds on, what the earlier exchange said
(not merely the message's own words or general advice). Write verdicts-<your name>.jsonl: one
JSON object per line, {"id": ..., "aware": true or false}, one for every id.
"""
READER_QA = """# Answer each question from its memory evidence

Each line of answer.jsonl is a `question` about earlier conversations between two people, and
`evidence` (what a memory of those conversations handed over for it). Answer in a short phrase
(a few words; a date as the evidence gives it), from that line's evidence alone; when it does
not hold the answer, give your best guess from it. Lines share no context: never use what
another line's evidence said, even when you remember it. Write replies.jsonl: one JSON object
per line, {"id": ..., "reply": ...}, one for every id.
"""
JUDGE_QA = """# Judge each answer against the gold answer

Each line of judge.jsonl holds a `question`, its `gold` answer and a `reply`. The reply is
correct when it states what the gold answer states (other words, or more detail that does not
contradict it, are fine; a date must name the same day, month or year as the gold one). Write
verdicts-<your name>.jsonl: one JSON object per line, {"id": ..., "correct": true or false},
one for every id.
"""
VERDICT = {"plus": "aware", "qa": "correct"}


def turn_line(turn: ev.InputTurn | None, text: str) -> str:
    """A flat system's turn as the reader sees it: its day, the speaker and the words."""
    when = day(turn.time) if turn is not None else None
    return f"  [{when}] {text}" if when else f"  {text}"


def by_date(evidence: str, recall) -> str:
    """The answer evidence with its associative pointers grouped under one line per day, the
    days in time order (the layout before they were listed in the recall's order): the same
    pointers, another order."""
    cue = [(t, s) for s in recall.scenes if lane_only(s) and s.lane == "cue" for t in s.turns]
    ranked = "\n".join(pointer_line(t, s) for t, s in cue)
    return evidence.replace(ranked, "\n".join(listed_lines(cue)), 1) if cue else evidence


def asks(args, memory) -> list[tuple[str, str | None, dict, list[str]]]:
    """(message, speaker, its key entry, the texts whose place in the evidence is reported) for
    every probe, or every LoCoMo question of categories 1-4 (`--questions`, gold evidence turns)."""
    if args.questions:
        sample = next(s for s in ev.load(ev.data_dir() / "locomo10.json") if s["sample_id"] == args.questions)
        text = {t.id: t.text for t in memory.document().turns}
        qas = list(enumerate(ev.locomo_qas(sample, ev.EvidenceRepairs())))   # a random --limit of them
        chosen = sorted(random.Random(args.seed).sample(qas, min(args.limit or len(qas), len(qas))), key=lambda x: x[0])
        return [(q.question, None, {"probe": n, "relation": ev.CATEGORIES[q.category], "gold": q.answer},
                 [text[e] for e in q.evidence if e in text]) for n, q in chosen]
    if args.probes:
        probes = ev.probes_from_file(args.probes, args.memory, ev.scene_turns(memory.document()))
    else:
        probes = ev.base_probes(ev.load(ev.data_dir() / "locomo_plus_dev.json"),
                                ev.load(ev.data_dir() / "locomo10.json"), args.base)
    return [(p.query, p.query_speaker, {"probe": p.index, "relation": p.relation,
                                        "cue": "\n".join(f"{t.speaker}: {t.text}" for t in p.cue)},
             [t.text for t in p.cue]) for p in probes[:args.limit]]


def write(args) -> None:
    store = Store(Settings.from_env())
    memory = api.Memory(args.memory, store=store)
    ctx = runner.Context.of(memory, memory.encoder.count_tokens)
    turns = {t.id: t for t in memory.document().turns}
    settings = dataclasses.replace(memory.settings.retrieval.for_answer(), budget_tokens=args.budget)
    rng = random.Random(args.seed)
    sets, key = [], {}   # sets: each ask's blocks, one per system
    for message, speaker, entry, texts in asks(args, memory):
        recall = memory.recall(message, speaker=speaker, settings=settings)
        tokens = ctx.count(format_evidence(dataclasses.replace(recall, persona=[]), ctx.speakers))
        evidence = {"tmem": memory.evidence(recall)}
        if "by-date" in args.systems:
            evidence["by-date"] = by_date(evidence["tmem"], recall)
        for name, ranking in ctx.flat.rankings(message).items():
            if name in args.systems:
                evidence[name] = flat_block(ctx, turns, ranking, tokens)
        mine = []
        for name, text in evidence.items():
            block_id = f"{rng.getrandbits(40):010x}"
            mine.append({"id": block_id, **({"question": message} if args.questions else
                                            {"speaker": speaker, "message": message}), "evidence": text})
            key[block_id] = {**entry, "system": name, "position": runner.cue_position(text, texts)}
        rng.shuffle(mine)   # which reader gets which system's block: drawn anew for every ask
        sets.append(mine)
    blind = args.out / "blind"
    per = args.per_reader or max(len(sets), 1)   # checked at least 1 by `main`
    folders = 0
    for group in (sets[i:i + per] for i in range(0, len(sets), per)):   # a reader reads `per` asks at most
        for n in range(max(map(len, group), default=0)):   # one reader per set: it never sees an ask twice
            folders += 1
            folder = blind / f"reader-{folders}"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / "README.md").write_text(READER_QA if args.questions else READER)
            blocks = [mine[n] for mine in group if n < len(mine)]
            rng.shuffle(blocks)
            with (folder / "answer.jsonl").open("w") as out:
                for b in blocks:
                    out.write(json.dumps(b, ensure_ascii=False) + "\n")
    (args.out / "key.json").write_text(json.dumps({"memory": args.memory, "budget": args.budget, "blocks": key,
                                                   "kind": "qa" if args.questions else "plus"},
                                                  indent=1, ensure_ascii=False))
    print(f"{len(key)} blocks ({len(sets)} asks × {len(evidence)} systems) in {blind}/reader-N, "
          "one reader session each")


def flat_block(ctx, turns: dict, ranking: list[str], tokens: int) -> str:
    """A flat system's block: its turns in rank order, as the reader sees them (day, speaker and
    words), as many as the block holds within `tokens`, counted as tmem's block is counted."""
    head = opening(ctx.speakers)
    lines = {t: turn_line(turns.get(t), ctx.turn_text[t]) for t in ranking}
    chosen = cut_at_budget(ranking, lambda t: ctx.count(lines[t]), tokens - ctx.count(head))
    while len(chosen) > 1 and ctx.count("\n".join([head] + [lines[t] for t in chosen])) > tokens:
        chosen.pop()   # the newlines' tokens
    return "\n".join([head] + [lines[t] for t in chosen])


def read_jsonl(path: Path, field: str) -> dict[str, object]:
    """{id: row[field]} of a JSON-lines file; a line that is not an object with both fails
    with its place."""
    out = {}
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        if not isinstance(row, dict) or "id" not in row or field not in row:
            raise SystemExit(f"{path}:{n}: expected an object with 'id' and '{field}'")
        out[row["id"]] = row[field]
    return out


def judge_files(args) -> None:
    doc = json.loads((args.out / "key.json").read_text())
    key, qa = doc["blocks"], doc.get("kind") == "qa"
    replies, messages = {}, {}
    for folder in sorted((args.out / "blind").glob("reader-*")):
        if not (folder / "replies.jsonl").exists():
            raise SystemExit(f"{folder / 'replies.jsonl'} is missing: each reader set needs its replies")
        replies.update(read_jsonl(folder / "replies.jsonl", "reply"))
        messages.update(read_jsonl(folder / "answer.jsonl", "question" if qa else "message"))
    missing = sorted(set(key) - set(replies))
    if missing:
        raise SystemExit(f"{len(missing)} blocks have no reply (first: {missing[0]})")
    judge = args.out / "judge"
    judge.mkdir(exist_ok=True)
    (judge / "README.md").write_text(JUDGE_QA if qa else JUDGE)
    ids = sorted(key, key=lambda i: random.Random(i).random())   # another order than the reader's
    with (judge / "judge.jsonl").open("w") as out:
        for i in ids:
            shown = {"question": messages[i], "gold": key[i]["gold"]} if qa else {"message": messages[i], "cue": key[i]["cue"]}
            out.write(json.dumps({"id": i, **shown, "reply": replies[i]}, ensure_ascii=False) + "\n")
    print(f"{len(ids)} replies to judge in {judge}")


def report(args) -> None:
    rows = []   # one per block: its key entry and each judge's verdict
    judges: set[str] = set()
    for where in args.dirs:
        key = json.loads((where / "key.json").read_text())
        field = VERDICT[key.get("kind", "plus")]
        verdicts = {path.stem.removeprefix("verdicts-"): read_jsonl(path, field)
                    for path in sorted((where / "judge").glob("verdicts-*.jsonl"))}
        judges |= set(verdicts)
        for block_id, entry in key["blocks"].items():
            rows.append({**entry, "memory": key["memory"], "votes": {j: bool(v[block_id]) for j, v in verdicts.items()
                                                                    if block_id in v}})
    names = sorted(judges)
    both = [r for r in rows if names and len(r["votes"]) == len(names)]   # none without verdicts
    agree = sum(len(set(r["votes"].values())) == 1 for r in both) / len(both) if both else None
    aware = {id(r): statistics.mean(r["votes"].values()) for r in both}
    print(f"{len(rows)} blocks, {len(both)} judged by all of {', '.join(names)}; judges agree on "
          + (f"{agree:.3f}" if agree is not None else "-"))
    field = VERDICT[key.get("kind", "plus")] if args.dirs else "aware"
    print(f"\n| system | n | " + " | ".join(f"{field} ({j})" for j in names) + f" | {field} (mean) |")
    print("|---" * (len(names) + 3) + "|")
    systems = [s for s in SYSTEMS if any(r["system"] == s for r in both)]
    for s in systems:
        mine = [r for r in both if r["system"] == s]
        cells = [f"{statistics.mean(r['votes'][j] for r in mine):.3f}" for j in names]
        print(f"| {s} | {len(mine)} | " + " | ".join(cells) + f" | {statistics.mean(aware[id(r)] for r in mine):.3f} |")
    groups = sorted({r["relation"] for r in both})
    print(f"\n{field} rate per {'category' if field == 'correct' else 'relation'} (mean of the judges):\n")
    print("| system | " + " | ".join(groups) + " |\n" + "|---" * (len(groups) + 1) + "|")
    for s in systems:
        per = [[aware[id(r)] for r in both if r["system"] == s and r["relation"] == g] for g in groups]
        print(f"| {s} | " + " | ".join(f"{statistics.mean(v):.3f} ({len(v)})" if v else "-" for v in per) + " |")
    pairs = {(r["memory"], r["probe"], r["system"]): aware[id(r)] for r in both}
    for s in systems[1:]:
        common = [(m, p) for (m, p, x) in pairs if x == "tmem" and (m, p, s) in pairs]
        wins = sum(pairs[(m, p, "tmem")] > pairs[(m, p, s)] for m, p in common)
        losses = sum(pairs[(m, p, "tmem")] < pairs[(m, p, s)] for m, p in common)
        print(f"\ntmem against {s}, paired by probe ({len(common)}): better on {wins}, worse on {losses}")
    print(f"\n{field} rate by where the cue (or the gold evidence) stands in the evidence (mean of the judges):\n")
    print("| system | first quarter | second | third | last | not in it |")
    print("|---|---|---|---|---|---|")
    for s in systems:
        bins: dict[int, list[float]] = {n: [] for n in range(5)}
        for r in (r for r in both if r["system"] == s):
            bins[4 if r["position"] is None else min(3, int(r["position"] * 4))].append(aware[id(r)])
        print(f"| {s} | " + " | ".join(f"{statistics.mean(v):.2f} ({len(v)})" if v else "-" for v in bins.values()) + " |")


def main(argv: list[str], prog: str) -> None:
    ap = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    modes = ap.add_subparsers(dest="mode", required=True)
    w = modes.add_parser("write", help="the blind evidence blocks of a memory's probes, and their key")
    where = w.add_mutually_exclusive_group(required=True)
    where.add_argument("--base", help="the LoCoMo conversation whose dev probes are stitched in")
    where.add_argument("--questions", metavar="SAMPLE", help="the LoCoMo conversation whose questions (categories 1-4) are asked")
    where.add_argument("--probes", type=Path, help="a probe file naming each probe's cue scene (imported memories)")
    w.add_argument("--memory", required=True)
    w.add_argument("--limit", type=int, help="only the first N probes (or questions)")
    w.add_argument("--budget", type=int, default=2000, help="the evidence tokens (default: the answer evidence's)")
    w.add_argument("--seed", type=int, default=7)
    w.add_argument("--per-reader", type=int, metavar="N",
                   help="at most N asks per reader set (default: all): a reader who has read many blocks of one "
                        "conversation answers from what other blocks said")
    w.add_argument("--systems", nargs="+", default=["dense", "hybrid"], choices=SYSTEMS[1:],
                   help="the systems beside tmem (default: dense and hybrid; by-date: tmem's evidence with "
                        "its pointers grouped by day in time order)")
    w.add_argument("--out", type=Path, required=True)
    j = modes.add_parser("judge-files", help="the judges' blind files, from the reader's replies")
    j.add_argument("--out", type=Path, required=True)
    r = modes.add_parser("report", help="aware rates, agreement, paired wins, by cue position")
    r.add_argument("dirs", type=Path, nargs="+")
    args = ap.parse_args(argv)
    if args.mode == "write" and args.per_reader is not None and args.per_reader < 1:
        ap.error(f"--per-reader {args.per_reader}: at least 1 ask per reader set")
    {"write": write, "judge-files": judge_files, "report": report}[args.mode](args)

