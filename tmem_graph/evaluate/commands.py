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


@eval_group.command("locomo")
@click.option("--sample", default="conv-26", show_default=True, help="LoCoMo sample id.")
@_eval_options
@click.pass_context
@_friendly
def eval_locomo(ctx, sample, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                as_json):
    """LoCoMo evidence recall per category: cascade, ablations and flat baselines."""
    from . import data as ev, report, runner

    root = data_path or ev.data_dir()
    samples, position = _samples(root, sample)
    chosen = samples[position]
    store = _store(ctx)
    if build:
        from ..construct.inputs import locomo_turns

        api.ingest(memory_id, ev.first_sessions(locomo_turns(chosen, None), sessions), store=store)
    repairs = ev.EvidenceRepairs()
    qas = [q for q in ev.locomo_qas(chosen, repairs) if ev.within_sessions(q.evidence, sessions)][:limit]
    memory = api.Memory(memory_id, store=store)
    context = runner.Context.of(memory, _tokenizer_count(), with_flat=not no_baselines)
    systems = runner.ABLATION_SETS[:1] if no_ablations else runner.ABLATION_SETS
    with click.progressbar(length=len(qas), label="questions", file=sys.stderr) as bar:
        result = runner.evaluate_locomo(context, qas, systems, baselines=not no_baselines,
                                        progress=lambda done, total: bar.update(done - bar.pos))
    result.update(sample=sample, sessions=sessions, memory_id=memory_id, encoder=memory.encoder.name,
                  evidence_repairs=vars(repairs), command=" ".join(sys.argv))
    out = out_dir or Path("eval-out") / memory_id
    scope = f"sessions 1-{sessions} of " if sessions else ""
    header = (f"LoCoMo {scope}{sample}, memory {memory_id}, encoder {memory.encoder.name}: evidence recall of "
              f"{len(qas)} questions (categories 1-4"
              f"{', evidence within those sessions' if sessions else ''}); "
              "baselines at each question's cascade token budget")
    report.write(out, "locomo", result, report.markdown_locomo(result["summary"]), header)
    report.plot_locomo(result["summary"], out / "locomo.png", f"LoCoMo {sample}: evidence recall")
    if as_json:
        _echo_json(result["summary"])
    else:
        click.echo(header + "\n\n" + report.markdown_locomo(result["summary"]))
        click.echo(f"\nreport in {out}/locomo.md, .json, .png")


@eval_group.command("locomo-plus")
@click.option("--base", default="conv-26", show_default=True, help="Base LoCoMo conversation of the probes.")
@_eval_options
@click.pass_context
@_friendly
def eval_locomo_plus(ctx, base, memory_id, data_path, build, sessions, limit, no_ablations, no_baselines, out_dir,
                     as_json):
    """LoCoMo-Plus cue recall (S@1, S@5 per relation type) for the probes of one base conversation."""
    from . import data as ev, report, runner

    root = data_path or ev.data_dir()
    samples, position = _samples(root, base)
    probes = [ev.stitch(p, samples) for p in ev.load(root / "locomo_plus_dev.json")
              if p["index"] % len(samples) == position][:limit]
    store = _store(ctx)
    if build:
        from ..construct.inputs import locomo_turns

        api.ingest(memory_id, ev.first_sessions(locomo_turns(samples[position], None), sessions), store=store)
        api.ingest(memory_id, [t for p in probes for t in p.cue], store=store)
    memory = api.Memory(memory_id, store=store)
    context = runner.Context.of(memory, _tokenizer_count(), with_flat=not no_baselines)
    systems = runner.ABLATION_SETS[:1] if no_ablations else runner.ABLATION_SETS
    result = runner.evaluate_locomo_plus(context, probes, systems, baselines=not no_baselines)
    result.update(base=base, sessions=sessions, memory_id=memory_id, encoder=memory.encoder.name, command=" ".join(sys.argv))
    out = out_dir or Path("eval-out") / memory_id
    scope = f"sessions 1-{sessions} of " if sessions else ""
    header = (f"LoCoMo-Plus dev probes on {scope}{base} ({len(probes)} probes, all cues in memory {memory_id}), "
              f"encoder {memory.encoder.name}: cascade = first recalled scene holding a cue turn; "
              "baselines = first cue turn among all turns")
    report.write(out, "locomo_plus", result, report.markdown_plus(result["summary"]), header)
    if as_json:
        _echo_json(result["summary"])
    else:
        click.echo(header + "\n\n" + report.markdown_plus(result["summary"]))
