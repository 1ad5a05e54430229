"""`tmem eval locomo` and `tmem eval locomo-plus`: thin click wrappers over the harness."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api
from ..cli_base import _echo_json, _friendly, _store
from ..errors import TmemError


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


def _budgets(memory) -> str:
    r = memory.settings.retrieval
    return f"kT={r.k_topics} kS={r.k_scenes} kI={r.k_items}"


def _eval_options(fn):
    for decorator in reversed([
        click.option("--memory", "memory_id", required=True, help="The memory to evaluate (built if --build)."),
        click.option("--data", "data_path", type=click.Path(path_type=Path, file_okay=False),
                     help="Folder with locomo10.json and locomo_plus_dev.json (default $TMEM_DATA_DIR or ../shared/data)."),
        click.option("--build", is_flag=True, help="Build or extend the memory first with the configured LLM."),
        click.option("--sessions", type=click.IntRange(min=1),
                     help="Use only the first N sessions of the conversation (build and questions)."),
        click.option("--limit", type=int, help="Evaluate only the first N questions or probes."),
        click.option("--no-ablations", is_flag=True, help="Only the full cascade (and baselines)."),
        click.option("--no-baselines", is_flag=True, help="Skip the flat baselines over turns."),
        click.option("--out", "out_dir", type=click.Path(path_type=Path, file_okay=False),
                     help="Report folder (default eval-out/<memory>)."),
        click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON."),
        click.option("--k-topics", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Topic prefilter budget (default 15)."),
        click.option("--k-scenes", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Scenes handed over per question (default 5)."),
        click.option("--k-items", type=click.IntRange(min=1), callback=_budget, expose_value=False,
                     help="Items handed over per question (default 15)."),
    ]):
        fn = decorator(fn)
    return fn


def _tokenizer_count():
    from ..embeddings import get_encoder

    tokenizer = get_encoder()._model.tokenizer
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def _samples(root: Path, sample_id: str) -> tuple[list[dict], int]:
    """The LoCoMo samples in `root` and the position of `sample_id` among them."""
    from . import data as ev

    samples = ev.load(root / "locomo10.json")
    position = next((n for n, s in enumerate(samples) if s.get("sample_id") == sample_id), None)
    if position is None:
        raise TmemError(f"no sample {sample_id!r} in {root / 'locomo10.json'}")
    return samples, position


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


def _judge_section(header: str, table: str) -> str:
    return f"\n\n## LLM judge\n\n{header}\n\n{table}"


@eval_group.command("locomo")
@click.option("--sample", default="conv-26", show_default=True, help="LoCoMo sample id.")
@_eval_options
@click.option("--judge", is_flag=True, help=JUDGE_HELP)
@click.option("--judge-runs", type=click.IntRange(min=1), default=3, show_default=True,
              help="Independent judge runs per answer (their mean is the accuracy).")
@click.pass_context
@_friendly
def eval_locomo(ctx, sample, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                as_json, judge, judge_runs):
    """LoCoMo evidence recall per category: cascade, ablations and flat baselines; with --judge,
    LLM-judge accuracy and token F1."""
    from . import data as ev, report, runner

    llm = _judge_llm(ctx, judge)
    root = data_path or ev.data_dir()
    samples, position = _samples(root, sample)
    chosen = samples[position]
    store = _store(ctx)
    if build:
        from ..construct.inputs import locomo_turns

        api.ingest(memory_id, ev.first_sessions(locomo_turns(chosen, None), sessions), store=store, llm=llm)
    repairs = ev.EvidenceRepairs()
    qas = [q for q in ev.locomo_qas(chosen, repairs) if ev.within_sessions(q.evidence, sessions)][:limit]
    memory = api.Memory(memory_id, store=store)
    context = runner.Context.of(memory, _tokenizer_count(), with_flat=not no_baselines)
    systems = runner.ABLATION_SETS[:1] if no_ablations else runner.ABLATION_SETS
    with click.progressbar(length=len(qas), label="questions", file=sys.stderr) as bar:
        result = runner.evaluate_locomo(context, qas, systems, baselines=not no_baselines,
                                        progress=lambda done, total: bar.update(done - bar.pos))
    result.update(sample=sample, sessions=sessions, memory_id=memory_id, encoder=memory.encoder.name,
                  budgets=_budgets(memory), evidence_repairs=vars(repairs), command=" ".join(sys.argv))
    out = out_dir or Path("eval-out") / memory_id
    scope = f"sessions 1-{sessions} of " if sessions else ""
    header = (f"LoCoMo {scope}{sample}, memory {memory_id}, encoder {memory.encoder.name}: evidence recall of "
              f"{len(qas)} questions (categories 1-4"
              f"{', evidence within those sessions' if sessions else ''}); cascade budgets "
              f"{_budgets(memory)}; baselines at each question's cascade token budget")
    table = report.markdown_locomo(result["summary"])
    if llm is not None:
        result["judge"] = _judge_locomo(llm, memory, qas, judge_runs)
        table += _judge_section(_judge_locomo_header(result["judge"]),
                                report.markdown_judge(result["judge"]["summary"]))
    report.write(out, "locomo", result, table, header)
    report.plot_locomo(result["summary"], out / "locomo.png", f"LoCoMo {sample}: evidence recall")
    if as_json:
        _echo_json(result["summary"] if llm is None else
                   {"recall": result["summary"], "judge": result["judge"]["summary"]})
    else:
        click.echo(header + "\n\n" + table)
        click.echo(f"\nreport in {out}/locomo.md, .json, .png")


def _judge_locomo(llm, memory, qas, runs: int) -> dict:
    from .judge import judge_locomo

    with click.progressbar(length=len(qas), label="judged", file=sys.stderr) as bar:
        judged = judge_locomo(memory, qas, llm, runs=runs, progress=lambda done, total: bar.update(done - bar.pos))
    return _judge_block(llm, judged, runs=runs)


def _judge_locomo_header(block: dict) -> str:
    return (f"Full cascade only (the ablations and baselines are not judged). Answers by {block['answer_model']} "
            "with the matched LoCoMo prompt (paper Figure 6); each answer graded CORRECT/WRONG by "
            f"{block['judge_model']} in {block['runs']} runs (accuracy = mean share of CORRECT); "
            "token F1 against the gold answer.")


@eval_group.command("locomo-plus")
@click.option("--base", default="conv-26", show_default=True, help="Base LoCoMo conversation of the probes.")
@_eval_options
@click.option("--judge", is_flag=True, help=JUDGE_HELP)
@click.pass_context
@_friendly
def eval_locomo_plus(ctx, base, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                     as_json, judge):
    """LoCoMo-Plus cue recall (S@1, S@5 per relation type) for the probes of one base conversation;
    with --judge, the binary memory-awareness judge's accuracy."""
    from . import data as ev, report, runner

    llm = _judge_llm(ctx, judge)
    root = data_path or ev.data_dir()
    samples, position = _samples(root, base)
    probes = [ev.stitch(p, samples) for p in ev.load(root / "locomo_plus_dev.json")
              if p["index"] % len(samples) == position][:limit]
    store = _store(ctx)
    if build:
        from ..construct.inputs import locomo_turns

        api.ingest(memory_id, ev.first_sessions(locomo_turns(samples[position], None), sessions), store=store,
                   llm=llm)
        api.ingest(memory_id, [t for p in probes for t in p.cue], store=store, llm=llm)
    memory = api.Memory(memory_id, store=store)
    context = runner.Context.of(memory, _tokenizer_count(), with_flat=not no_baselines)
    systems = runner.ABLATION_SETS[:1] if no_ablations else runner.ABLATION_SETS
    result = runner.evaluate_locomo_plus(context, probes, systems, baselines=not no_baselines)
    result.update(base=base, sessions=sessions, memory_id=memory_id, encoder=memory.encoder.name,
                  budgets=_budgets(memory), command=" ".join(sys.argv))
    out = out_dir or Path("eval-out") / memory_id
    scope = f"sessions 1-{sessions} of " if sessions else ""
    header = (f"LoCoMo-Plus dev probes on {scope}{base} ({len(probes)} probes, all cues in memory {memory_id}), "
              f"encoder {memory.encoder.name}, cascade budgets {_budgets(memory)}: cascade = first recalled "
              "scene holding a cue turn; "
              "baselines = first cue turn among all turns")
    table = report.markdown_plus(result["summary"])
    if llm is not None:
        result["judge"] = _judge_plus(llm, memory, probes)
        table += _judge_section(_judge_plus_header(result["judge"]),
                                report.markdown_judge(result["judge"]["summary"], group="relation"))
    report.write(out, "locomo_plus", result, table, header)
    if as_json:
        _echo_json(result["summary"] if llm is None else
                   {"recall": result["summary"], "judge": result["judge"]["summary"]})
    else:
        click.echo(header + "\n\n" + table)


def _judge_plus(llm, memory, probes) -> dict:
    from .judge import judge_locomo_plus

    with click.progressbar(length=len(probes), label="judged", file=sys.stderr) as bar:
        judged = judge_locomo_plus(memory, probes, llm, progress=lambda done, total: bar.update(done - bar.pos))
    return _judge_block(llm, judged, runs=1)


def _judge_plus_header(block: dict) -> str:
    return (f"Full cascade only (the ablations and baselines are not judged). Replies to each trigger query "
            f"by {block['answer_model']}, as the other speaker, from the recalled evidence; one binary "
            f"memory-awareness verdict (does the reply draw on the cue?) by {block['judge_model']}.")
