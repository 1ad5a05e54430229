"""`tmem eval locomo` and `tmem eval locomo-plus`: thin click wrappers over the harness."""

from __future__ import annotations

import contextlib
import sys
from collections import Counter
from pathlib import Path

import click

from .. import api
from .common import echo_json, friendly, store_of
from ..config import CUE_FUSIONS, DEFAULT_ENCODER, FUSIONS, MAX_BUDGET_TOKENS
from ..errors import UsageError


# -- evaluation ------------------------------------------------------------------------------
@click.group("eval")
def eval_group() -> None:
    """Evaluate on LoCoMo and LoCoMo-Plus (LLM-free recall metrics, baselines, ablations)."""


def _budget(ctx: click.Context, param: click.Parameter, value: int | None) -> int | None:
    """Apply a retrieval budget option to the settings every later step uses."""
    if value is not None:
        root = ctx.find_root().obj
        root["settings"] = root["settings"].with_retrieval(**{param.name: value})
    return value


def _unpacked(ctx: click.Context, param: click.Parameter, value: bool) -> bool:
    """--unpacked: the evidence handed over is the recall without a budget."""
    if value:
        root = ctx.find_root().obj
        if root["settings"].retrieval.budget_tokens is not None:
            raise click.UsageError("--unpacked and --budget-tokens exclude each other")
        root["settings"] = root["settings"].with_retrieval(answer_budget_tokens=None)
    return value


def _budgets(memory) -> str:
    r = memory.settings.retrieval.for_answer()
    return f"kT={r.k_topics} kS={r.k_scenes} kI={r.k_items}" + (
        f" budget={r.budget_tokens} tokens (packed)" if r.budget_tokens else "")


def _fusion(memory) -> str:
    r = memory.settings.retrieval.for_answer()
    fusion = f"lanes (associative share {r.associative_share:g})" if r.fusion == "lanes" else r.fusion
    words = f", no turn holding {r.weak_words:g} of its words" if r.weak_words else ""
    weak = (f"; a weak match (nearest turn under {r.weak_match:g}{words}): associative share {r.weak_associative_share:g}"
            + (f", {r.cue_from} pointers {r.weak_cue_share:g}"
               + (f" and the nearest turns {r.weak_lane_share:g}" if r.weak_lane_share else "") + " of the budget"
               if r.budget_tokens else f" (of its scenes' places {r.weak_listed_share:g})")) if r.weak_match else ""
    return f"{fusion}, SceneCue {r.cue_fusion}{weak}"


def _eval_options(fn):
    for decorator in reversed([
        click.option("--memory", "memory_id", required=True, help="The memory to evaluate (built if --build)."),
        click.option("--data", "data_path", type=click.Path(path_type=Path, file_okay=False),
                     help="Folder with locomo10.json and locomo_plus_dev.json (default $TMEM_DATA_DIR or ../shared/data)."),
        click.option("--build", is_flag=True, help="Build or extend the memory first with the configured LLM."),
        click.option("--sessions", type=click.IntRange(min=1),
                     help="Use only the first N sessions of the conversation (build and questions)."),
        click.option("--limit", type=click.IntRange(min=1), help="Evaluate only the first N questions or probes (of each sample)."),
        click.option("--no-ablations", is_flag=True, help="Only the full cascade (and baselines)."),
        click.option("--no-baselines", is_flag=True, help="Skip the flat baselines over turns."),
        click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
                     help="Report folder (default eval-out/<memory>; {sample} becomes 'all')."),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        click.option("--k-topics", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Topic prefilter budget (default 15)."),
        click.option("--k-scenes", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Scenes handed over per question (default 5)."),
        click.option("--k-items", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Items handed over per question (default 15)."),
        click.option("--fusion", type=click.Choice(FUSIONS), callback=_budget, expose_value=False,
                     help="Final fusion of scenes and items (default lanes; rrf = the fusion before lanes)."),
        click.option("--associative-share", type=click.FloatRange(0, 1), callback=_budget, expose_value=False,
                     help="Share of kS and kI the associative lane keeps with --fusion lanes (default 0.4)."),
        click.option("--cue-fusion", type=click.Choice(CUE_FUSIONS), callback=_budget, expose_value=False,
                     help="How SceneCue fuses its channels (default strongest; rrf = the reference code)."),
        click.option("--budget-tokens", type=click.IntRange(1, MAX_BUDGET_TOKENS), callback=_budget,
                     expose_value=False, help="One evidence budget in tokens that the packer fills (docs/design-and-evidence.md; "
                     "default: the answer evidence's, 2,000)."),
        click.option("--unpacked", is_flag=True, callback=_unpacked, expose_value=False,
                     help="Hand over kS whole scenes and kI items (the recall without a budget) instead of "
                          "the packed answer evidence."),
    ]):
        fn = decorator(fn)
    return fn


def _tokenizer_count(memories: dict):
    """Token counter of the memories' encoder (the configured one, checked by `_open`)."""
    return next(iter(memories.values())).encoder.count_tokens


def _samples(root: Path, wanted: tuple[str, ...], option: str) -> tuple[list[dict], list[str]]:
    """All LoCoMo samples in `root` and the ids of the wanted ones, in file order ("all" = every one)."""
    from ..evaluate import data as ev

    path = root / "locomo10.json"
    samples = ev.load(path)
    ids = [s.get("sample_id") for s in samples]
    unknown = [w for w in wanted if w != "all" and w not in ids]
    if unknown:
        raise UsageError(f"{option}: no sample {', '.join(map(repr, unknown))} in {path} "
                        f"(it has {', '.join(map(str, ids))}, or 'all')")
    return samples, [i for i in ids if "all" in wanted or i in wanted]


def _memory_ids(template: str, names: list[str]) -> dict[str, str]:
    """One memory per sample: `{sample}` in the --memory value is replaced by the sample id."""
    from ..format import check_memory_id

    if len(names) > 1 and "{sample}" not in template:
        raise UsageError(f"--memory {template!r}: {len(names)} samples need a memory each; put {{sample}} "
                        "in the id, e.g. --memory 'locomo-{sample}'")
    return {n: check_memory_id(template.replace("{sample}", n), "--memory") for n in names}


def _open(store, memory_ids: dict[str, str]) -> dict[str, "api.Memory"]:
    """The memories to evaluate, each checked (it exists, its encoder is the configured one)."""
    memories = {name: api.Memory(mid, store=store) for name, mid in memory_ids.items()}
    for memory in memories.values():
        memory.encoder  # noqa: B018 - raises MemoryNotFound / EncoderMismatch before any work
    return memories


def _build(memory_id: str, steps: list, store, llm) -> None:
    """Build or extend a memory step by step (data.build_steps); finished steps are kept, so a
    stopped build resumes where it was, and steps already in the memory cost nothing."""
    from ..llm.factory import open_llm

    with contextlib.ExitStack() as stack:
        llm = llm or stack.enter_context(open_llm())
        for n, (name, turns) in enumerate(steps, 1):
            report = api.ingest(memory_id, turns, store=store, llm=llm)
            click.echo(f"{memory_id}: {name} ({n}/{len(steps)}): {report.new_turns} new turns, "
                       f"{report.new_scenes} new scenes", err=True)


def _scope(names: list[str], memory_ids: dict[str, str], template: str, sessions: int | None) -> dict:
    """How a run names what it evaluated: the samples, the memories, the default report folder."""
    one = len(names) == 1
    return {"where": {None: "", 1: "session 1 of "}.get(sessions, f"sessions 1-{sessions} of ")
            + (names[0] if one else f"{len(names)} samples ({', '.join(names)})"),
            "memory": memory_ids[names[0]] if one else template,
            "out": Path("eval-out") / (memory_ids[names[0]] if one else template.replace("{sample}", "all"))}


def _record(result: dict, memories: dict, scope: dict, sessions: int | None, **extra) -> None:
    """What every report records besides the figures: data scope, memories, encoder, budgets, command."""
    first = next(iter(memories.values()))
    result.update(**extra, sessions=sessions, memory_id=scope["memory"],
                  memories={n: m.id for n, m in memories.items()},
                  encoder=", ".join(sorted({m.encoder.name for m in memories.values()})),
                  budgets=_budgets(first), fusion=_fusion(first), command=" ".join(sys.argv))


JUDGE_HELP = ("Also answer with the configured LLM (TMEM_LLM_*) and grade the answers with an LLM judge "
              "(full cascade only); --json then prints {\"recall\": ..., \"judge\": ...}.")


def _judge_llm(ctx: click.Context, judge: bool):
    """The configured LLM for --judge, opened before any work so that a missing one fails at once."""
    if not judge:
        return None
    from ..llm.factory import open_llm

    return ctx.with_resource(open_llm())


def _judge_block(llm, judged: dict, **extra) -> dict:
    """The "judge" entry of the JSON report: the models behind every number, the rows, the usage."""
    usage = {stage: vars(u) for stage, u in llm.ledger.items() if stage in ("answer", "judge")}
    return {"answer_model": llm.settings.model_for("answer"), "judge_model": llm.settings.model_for("judge"),
            "system": "full", **extra, **judged, "usage": usage}


def _publish(result: dict, out: Path, stem: str, header: str, table: str, as_json: bool, plot) -> None:
    """Write the report (`<stem>.md`, `.json`, `.png` under `out`), then print its summary: the
    JSON of the recall (and judge) summary, or the header and the table."""
    from ..evaluate import report

    report.write(out, stem, result, table, header)
    plot(out / f"{stem}.png")
    if as_json:
        echo_json(result["summary"] if "judge" not in result else
                  {"recall": result["summary"], "judge": result["judge"]["summary"]})
    else:
        click.echo(header + "\n\n" + table)
        click.echo(f"\nreport in {out}/{stem}.md, .json, .png")


def _judge_section(header: str, table: str) -> str:
    return f"\n\n## LLM judge\n\n{header}\n\n{table}"


@eval_group.command("locomo")
@click.option("--sample", multiple=True, default=("conv-26",), show_default=True,
              help="LoCoMo sample id; repeat it, or 'all', for several (one memory each: {sample} in --memory).")
@_eval_options
@click.option("--judge", is_flag=True, help=JUDGE_HELP)
@click.option("--judge-runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Independent judge runs per answer (their mean is the accuracy).")
@click.option("--budget", "budget_of", type=click.Choice(["evidence", "context"]), default="evidence",
              show_default=True,
              help="What the baselines' token budget matches: the cascade's evidence (scenes and items) "
                   "or its whole context block (persona included).")
@click.pass_context
@friendly
def eval_locomo(ctx, sample, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                as_json, judge, judge_runs, budget_of):
    """LoCoMo evidence recall per category: cascade, ablations and flat baselines; with --judge,
    LLM-judge accuracy and token F1. Several samples are scored together (each in its own
    memory): the table is over all their questions, with one line per sample beside it."""
    from ..evaluate import data as ev, report, runner

    llm = _judge_llm(ctx, judge)
    root = data_path or ev.data_dir()
    samples, names = _samples(root, sample, "--sample")
    by_id = {s.get("sample_id"): s for s in samples}
    memory_ids = _memory_ids(memory_id, names)
    store = store_of(ctx)
    if build:
        for name in names:
            _build(memory_ids[name], ev.build_steps(by_id[name], sessions), store, llm)
    memories = _open(store, memory_ids)
    repairs = ev.EvidenceRepairs()
    qas = {name: [q for q in ev.locomo_qas(by_id[name], repairs) if ev.within_sessions(q.evidence, sessions)][:limit]
           for name in names}
    count = _tokenizer_count(memories)
    systems = runner.EVAL_SETS[:1] if no_ablations else runner.EVAL_SETS
    rows, per_sample = [], {}
    with click.progressbar(length=sum(map(len, qas.values())), label="questions", file=sys.stderr) as bar:
        for name, memory in memories.items():
            context = runner.Context.of(memory, count, with_flat=not no_baselines)
            part = runner.evaluate_locomo(context, qas[name], systems, baselines=not no_baselines,
                                          progress=lambda done, total: bar.update(1), budget_of=budget_of)
            rows += [{"sample": name, **row} for row in part["questions"]]
            per_sample[name] = part["summary"]
    result = {"questions": rows, "summary": runner.summarise(rows), "per_sample": per_sample}
    scope = _scope(names, memory_ids, memory_id, sessions)
    _record(result, memories, scope, sessions, sample=", ".join(names), samples=names,
            evidence_repairs=vars(repairs), budget_of=budget_of)
    out = out_dir or scope["out"]
    header = (f"LoCoMo {scope['where']}, memory {scope['memory']}, encoder {result['encoder']}: evidence recall "
              f"of {len(rows)} questions (categories 1-4"
              f"{', evidence within those sessions' if sessions else ''}); cascade budgets "
              f"{result['budgets']}, fusion {result['fusion']}; baselines at each question's cascade token budget ("
              + ("its evidence: scenes and items, the persona outside the budget as in the paper"
                 if budget_of == "evidence" else "its whole context block, persona included") + ")")
    table = report.markdown_locomo(result["summary"])
    if len(names) > 1:
        table += "\n\n" + report.markdown_per_sample(per_sample, "overall", Counter(r["sample"] for r in rows))
    if llm is not None:
        result["judge"] = _judge_locomo(llm, memories, qas, judge_runs)
        table += _judge_section(_judge_locomo_header(result["judge"]),
                                report.markdown_judge(result["judge"]["summary"]))
    _publish(result, out, "locomo", header, table, as_json,
             lambda png: report.plot_locomo(result["summary"], png, f"LoCoMo {scope['where']}: evidence recall"))


def _judge_locomo(llm, memories: dict, qas: dict, runs: int) -> dict:
    from ..evaluate.judge import judge_locomo, summarise_locomo

    rows = []
    with click.progressbar(length=sum(map(len, qas.values())), label="judged", file=sys.stderr) as bar:
        for name, memory in memories.items():
            part = judge_locomo(memory, qas[name], llm, runs=runs, progress=lambda done, total: bar.update(1))
            rows += [{"sample": name, **row} for row in part["questions"]]
    return _judge_block(llm, {"questions": rows, "summary": summarise_locomo(rows, runs)}, runs=runs)


def _judge_locomo_header(block: dict) -> str:
    return (f"Full cascade only (the ablations and baselines are not judged). Answers by {block['answer_model']} "
            "with the matched LoCoMo prompt (paper Figure 6); each answer graded CORRECT/WRONG by "
            f"{block['judge_model']} in {block['runs']} runs (accuracy = mean share of CORRECT); "
            "token F1 against the gold answer.")


@eval_group.command("locomo-plus")
@click.option("--base", multiple=True, default=("conv-26",), show_default=True,
              help="Base LoCoMo conversation of the probes; repeat it, or 'all', for several "
                   "(one memory each: {sample} in --memory).")
@_eval_options
@click.option("--probes", "probes_path", type=click.Path(path_type=Path, dir_okay=False),
              help="Score an imported memory on a probe file naming each probe's cue scene "
                   "(shared/data/strong-triggers) instead of the stitched dev probes.")
@click.option("--judge", is_flag=True, help=JUDGE_HELP)
@click.pass_context
@friendly
def eval_locomo_plus(ctx, base, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                     as_json, probes_path, judge):
    """LoCoMo-Plus cue recall (S@1, S@5 per relation type) for the probes of one or more base
    conversations (each in its own memory), or of an imported memory with --probes; with
    --judge, the binary memory-awareness judge's accuracy."""
    from ..evaluate import data as ev, report, runner

    clash = [o for o, v in (("--build", build), ("--sessions", sessions), ("--base", base != ("conv-26",)),
                            ("--judge (a probe file has no query times)", judge)) if v]
    if probes_path is not None and clash:
        raise UsageError(f"--probes scores an imported memory as it is; drop {', '.join(clash)}")
    llm = _judge_llm(ctx, judge)
    store = store_of(ctx)
    if probes_path is not None:
        memory_ids = {memory_id: _memory_ids(memory_id, [memory_id])[memory_id]}
        memories = _open(store, memory_ids)
        names = [memory_id]
        probes = {memory_id: ev.probes_from_file(probes_path, memory_id, ev.scene_turns(memories[memory_id].document()))[:limit]}
    else:
        root = data_path or ev.data_dir()
        samples, names = _samples(root, base, "--base")
        position = {s.get("sample_id"): n for n, s in enumerate(samples)}
        dev = ev.load(root / "locomo_plus_dev.json")
        probes = {name: ev.base_probes(dev, samples, name)[:limit] for name in names}
        memory_ids = _memory_ids(memory_id, names)
        if build:
            for name in names:
                _build(memory_ids[name], ev.build_steps(samples[position[name]], sessions, probes[name]), store, llm)
        memories = _open(store, memory_ids)
    count = _tokenizer_count(memories)
    systems = runner.EVAL_SETS[:1] if no_ablations else runner.EVAL_SETS
    rows, per_base = [], {}
    for name, memory in memories.items():
        context = runner.Context.of(memory, count, with_flat=not no_baselines)
        part = runner.evaluate_locomo_plus(context, probes[name], systems, baselines=not no_baselines)
        rows += [{"base": name, **row} for row in part["probes"]]
        per_base[name] = part["summary"]
    result = {"probes": rows, "summary": runner.summarise_plus(rows), "per_base": per_base}
    scope = _scope(names, memory_ids, memory_id, sessions)
    _record(result, memories, scope, sessions, base=", ".join(names), bases=names,
            probes_file=str(probes_path) if probes_path else None)
    out = out_dir or scope["out"]
    what = (f"probes of {probes_path} on memory {scope['memory']} ({len(rows)} probes, each naming its cue scene)"
            if probes_path else
            f"dev probes on {scope['where']} ({len(rows)} probes, all cues of a base in its memory, "
            f"memory {scope['memory']})")
    header = (f"LoCoMo-Plus {what}, encoder {result['encoder']}, cascade budgets {result['budgets']}, "
              f"fusion {result['fusion']}: "
              "cascade = first recalled scene holding a cue turn; "
              "baselines = first cue turn among all turns; cue handed = a cue turn in the evidence handed "
              "over, the baselines cut at the full cascade's evidence tokens of each probe; cue first quarter = "
              "a cue turn's words in the first quarter of that evidence (by characters); cue statement handed, "
              "statement first quarter = the same for the cue's first turn (what the cue says, not the reply "
              "to it); cue to keep in mind = a cue "
              "turn among the candidates the focus answer style keeps one in mind from")
    table = report.markdown_plus(result["summary"])
    if len(names) > 1:
        table += "\n\n" + report.markdown_per_sample(per_base, "S@5", Counter(r["base"] for r in rows))
    if llm is not None:
        result["judge"] = _judge_plus(llm, memories, probes)
        table += _judge_section(_judge_plus_header(result["judge"]),
                                report.markdown_judge(result["judge"]["summary"], group="relation"))
    _publish(result, out, "locomo_plus", header, table, as_json,
             lambda png: report.plot_plus(result["summary"], png, f"LoCoMo-Plus {scope['where']}: cue recall"))


def _judge_plus(llm, memories: dict, probes: dict) -> dict:
    from ..evaluate.judge import judge_locomo_plus, summarise_plus

    rows = []
    with click.progressbar(length=sum(map(len, probes.values())), label="judged", file=sys.stderr) as bar:
        for name, memory in memories.items():
            part = judge_locomo_plus(memory, probes[name], llm, progress=lambda done, total: bar.update(1))
            rows += [{"base": name, **row} for row in part["probes"]]
    return _judge_block(llm, {"probes": rows, "summary": summarise_plus(rows)}, runs=1)


def _judge_plus_header(block: dict) -> str:
    return (f"Full cascade only (the ablations and baselines are not judged). Replies to each trigger query "
            f"by {block['answer_model']}, as the other speaker, from the recalled evidence; one binary "
            f"memory-awareness verdict (does the reply draw on the cue?) by {block['judge_model']}.")


@eval_group.command("construction")
@click.option("--memory", "memory_ids", multiple=True, required=True,
              help="A memory built from the sample; repeat it to compare builds side by side.")
@click.option("--sample", default="conv-26", show_default=True, help="The LoCoMo sample the memories were built from.")
@click.option("--sessions", type=click.IntRange(min=1), help="Measure only sessions 1..N.")
@click.option("--data", "data_path", type=click.Path(path_type=Path, file_okay=False),
              help="Folder with locomo10.json (default $TMEM_DATA_DIR or ../shared/data).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
              help="Report folder (default eval-out/<first memory>).")
@click.option("--json", "as_json", is_flag=True, help="Print the metrics as JSON.")
@click.pass_context
@friendly
def eval_construction(ctx, memory_ids, sample, sessions, data_path, out_dir, as_json):
    """LLM-free construction metrics against LoCoMo's observations: observation coverage, items
    per session, topics, scene lengths, persona support, trigger copies (docs/evaluation.md)."""
    from ..encode import get_encoder
    from ..evaluate import construction, data as ev, report

    root = data_path or ev.data_dir()
    samples, names = _samples(root, (sample,), "--sample")
    chosen = next(s for s in samples if s.get("sample_id") == names[0])
    memories = _open(store_of(ctx), {m: m for m in dict.fromkeys(memory_ids)})
    metric_encoder = get_encoder(DEFAULT_ENCODER)   # the metrics' own: their cosines were set with it
    results = {m: construction.measure(memory.document(), chosen, sessions, metric_encoder)
               for m, memory in memories.items()}
    where = {None: "", 1: "session 1 of "}.get(sessions, f"sessions 1-{sessions} of ") + names[0]
    header = (f"Construction of LoCoMo {where}: {', '.join(results)} (built with "
              f"{', '.join(sorted({m.encoder.name for m in memories.values()}))}; measured with "
              f"{metric_encoder.name}, observation cosine >= {construction.OBSERVATION_COSINE}, docs/evaluation.md)")
    table = construction.markdown(results)
    out = out_dir or Path("eval-out") / memory_ids[0]
    report.write(out, "construction", {"sample": names[0], "sessions": sessions, "memories": results,
                                       "command": " ".join(sys.argv)}, table, header)
    if as_json:
        echo_json(results)
    else:
        click.echo(header + "\n\n" + table + f"\n\nreport in {out}/construction.md, .json")


@eval_group.command("answers")
@click.option("--set", "set_path", type=click.Path(path_type=Path, dir_okay=False), default=Path("fixtures/answers.json"),
              show_default=True, help="The answer set (tmem-answers/1): questions, gold answers, their memories.")
@click.option("--modes", default="cascade,dense", show_default=True,
              help="Evidence to answer from: cascade (what `tmem ask` hands over), dense (dense retrieval over "
                   "turns cut at the same tokens).")
@click.option("--style", type=click.Choice(["focus", "assistant", "locomo"]), default="focus", show_default=True,
              help="The answer prompt (llm/prompts/answer.py).")
@click.option("--import", "import_missing", is_flag=True,
              help="Import the set's memories that are not on the server from the files the set names.")
@click.option("--only", help="Comma list of memory ids: answer only their questions.")
@click.option("--unpacked", is_flag=True, callback=_unpacked, expose_value=False,
              help="Answer from kS whole scenes and kI items instead of the packed answer evidence.")
@click.option("--data", "data_path", type=click.Path(path_type=Path, file_okay=False),
              help="Folder with locomo10.json (default $TMEM_DATA_DIR or ../shared/data).")
@click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False), default=Path("eval-out/answers"),
              show_default=True, help="Report folder.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@click.pass_context
@friendly
def eval_answers(ctx, set_path, modes, style, import_missing, only, data_path, out_dir, as_json):
    """Answer a set of questions with the configured LLM (TMEM_LLM_*) from the cascade's evidence
    and from dense evidence of the same tokens; score token F1 and gold-content coverage, no LLM judge."""
    from ..evaluate import answers as ev, report
    from ..evaluate.runner import Context
    from ..llm.factory import open_llm

    chosen_modes = [m.strip() for m in modes.split(",") if m.strip()]
    unknown = [m for m in chosen_modes if m not in ev.MODES]
    if unknown or not chosen_modes:
        raise UsageError(f"--modes: {', '.join(unknown) or 'empty'}; choose from {', '.join(ev.MODES)}")
    files, questions = ev.load_set(set_path, data_path)
    if only:
        wanted = {m.strip() for m in only.split(",")}
        if wanted - set(files):
            raise UsageError(f"--only: {', '.join(sorted(wanted - set(files)))} not in the set's memories")
        questions = [q for q in questions if q.memory in wanted]
    store = store_of(ctx)
    needed = list(dict.fromkeys(q.memory for q in questions))
    missing = [m for m in needed if not store.exists(m)]
    if missing and not import_missing:
        raise UsageError(f"not on the server: {', '.join(missing)}; add --import to load them from "
                         + ", ".join(str(files[m]) for m in missing))
    for memory_id in missing:
        ev.import_set_memory(files[memory_id], memory_id, store, data_path)
        click.echo(f"imported {memory_id} from {files[memory_id]}", err=True)
    memories = _open(store, {m: m for m in needed})
    encoder = next(iter(memories.values())).encoder
    contexts = {m: ev.AnswerContext.of(Context.of(memory, encoder.count_tokens)) for m, memory in memories.items()}
    llm = ctx.with_resource(open_llm())
    with click.progressbar(length=len(questions), label="answered", file=sys.stderr) as bar:
        result = ev.evaluate_answers(questions, contexts, llm, chosen_modes, style,
                                     progress=lambda done, total: bar.update(1))
    model = llm.settings.model_for("answer")
    result.update(model=model, style=style, set=str(set_path), encoder=encoder.name, command=" ".join(sys.argv),
                  usage={stage: vars(u) for stage, u in llm.ledger.items() if stage == "answer"})
    header = (f"Answers by {model} ({style} prompt) to {len(questions)} questions of {set_path} over "
              f"{', '.join(needed)}: token F1 and gold-content coverage, from the cascade's evidence and "
              f"from dense retrieval over turns cut at the same tokens (docs/models.md)")
    stem = f"answers-{style}-{model.replace('/', '_').replace(':', '_')}"
    table = ev.markdown(result["summary"])
    report.write(out_dir, stem, result, table, header)
    if as_json:
        echo_json(result["summary"])
    else:
        click.echo(header + "\n\n" + table + f"\n\nreport in {out_dir}/{stem}.md, .json")
