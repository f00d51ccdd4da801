"""`wikiref abstractive train|table`: the abstractive models of Psg2Sum Table 4 and QmdsCnnIr Tables 3-5."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_inputs,
    add_jobs,
    add_torch_arguments,
    files_by_keys,
    set_torch_threads,
    standin_label,
)
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "abstractive models: Psg2Sum s2s / s2s+copy / PGN, QmdsCnnIr HEROSumm ablations and DUC transfer"
DESCRIPTION = f"""Jobs (one train job per entry of abstractive.runs, then the table):

train --run R: train the run's family (seq2seq: s2s, +copy, +coverage = PGN; hiersumm: Liu & Lapata's
    hierarchical transformer with the HEROSumm switches) on the train splits of its train sources
    ({layout.SOURCE_SPLIT}), the best epoch on their dev splits -> {layout.ABSTRACTIVE_MODEL_DIR}/;
    decode the test split of each test source (official ROUGE-1/2/L R/P/F with 95% intervals) and, with
    duc: true, every topic of abstractive.duc.years ({layout.DUC_YEAR}; R-1/R-2/R-L/R-SU4 recall, 250 words)
    -> {layout.ABSTRACTIVE_SUMMARIES}, {layout.ABSTRACTIVE_RUN_METRICS}, dvclive in {layout.ABSTRACTIVE_LIVE_DIR}.

table: every run's metrics + the psg2sum baselines' ({layout.PSG2SUM_BASELINES_METRICS}) ->
    {layout.ABSTRACTIVE_PSG2SUM_TABLE4}.*, {layout.ABSTRACTIVE_QMDSCNN_TABLE3}.*, {layout.ABSTRACTIVE_QMDSIR_TABLE4}.*,
    {layout.ABSTRACTIVE_DUC_TABLE5}.* (each beside the paper's numbers; "(not run)" for a run the profile
    lacks) and {layout.ABSTRACTIVE_METRICS}."""

JOBS = {
    "train": "train, test and DUC-test one run of abstractive.runs",
    "table": "every run -> Psg2Sum Table 4, QmdsCnn Table 3, QmdsIr Table 4, DUC Table 5",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_jobs(parser, JOBS)
    for p in jobs.values():
        add_params_arguments(p)
    train = jobs["train"]
    train.add_argument("--run", required=True, help="a name of abstractive.runs")
    add_default(
        train, "--sources-dir", layout.SOURCE_DIR.format(source="").rstrip("/"), "root of <source>/<split>.parquet"
    )
    add_default(train, "--duc-dir", layout.DUC_DIR, "folder of <year>.parquet (+ .stats.json)")
    add_inputs(
        train,
        "train.<source>, dev.<source> (each training source's split), test.<source> (each test source's),"
        " duc.<year>, duc_stats.<year> (each DUC year's table and stats, with duc: true)",
        "--sources-dir and --duc-dir are",
    )
    train.add_argument("--model-dir", help=f"model folder (default: {layout.ABSTRACTIVE_MODEL_DIR})")
    train.add_argument("--summaries", help=f"summaries JSON (default: {layout.ABSTRACTIVE_SUMMARIES})")
    train.add_argument("--metrics", help=f"metrics JSON (default: {layout.ABSTRACTIVE_RUN_METRICS})")
    train.add_argument("--live-dir", help=f"dvclive folder (default: {layout.ABSTRACTIVE_LIVE_DIR})")
    add_torch_arguments(train)
    table = jobs["table"]
    add_files(table, "--runs", "JSON", f"every run's metrics ({layout.ABSTRACTIVE_RUN_METRICS})", required=True)
    add_default(table, "--psg2sum-baselines", layout.PSG2SUM_BASELINES_METRICS, "the psg2sum baselines' metrics")
    add_default(table, "--psg2sum-table4", layout.ABSTRACTIVE_PSG2SUM_TABLE4, "Psg2Sum Table 4 stem")
    add_default(table, "--qmdscnn-table3", layout.ABSTRACTIVE_QMDSCNN_TABLE3, "QmdsCnn Table 3 stem")
    add_default(table, "--qmdsir-table4", layout.ABSTRACTIVE_QMDSIR_TABLE4, "QmdsIr Table 4 stem")
    add_default(table, "--duc-table5", layout.ABSTRACTIVE_DUC_TABLE5, "DUC Table 5 stem")
    add_default(table, "--out-metrics", layout.ABSTRACTIVE_METRICS, "metrics JSON")


def _default_inputs(args, params, keys: dict[str, list]) -> dict[str, dict]:
    """The run's input files at their layout paths, moved to ``--sources-dir`` and ``--duc-dir``."""
    from wikiref.stages.abstractive import runs

    files = runs.train_inputs(params, args.run)
    sources_root = layout.SOURCE_DIR.format(source="").rstrip("/")
    roots = {"duc": (layout.DUC_DIR, args.duc_dir), "duc_stats": (layout.DUC_DIR, args.duc_dir)}

    def moved(role: str) -> list[str]:
        default_root, root = roots.get(role, (sources_root, args.sources_dir))
        return [str(Path(root) / Path(p).relative_to(default_root)) for p in files[role]]

    return {role: dict(zip(role_keys, moved(role))) for role, role_keys in keys.items()}


def _train(args) -> None:
    from wikiref.stages.abstractive import runs
    from wikiref.stages.abstractive.stage import run_train

    set_torch_threads(args)
    # the run's family decides which keys the job reads (each family's section only)
    family_params = params_from_args(args, "abstractive.runs")
    params = params_from_args(args, *job_keys("abstractive", runs.train_job(family_params, args.run)))
    keys = runs.input_keys(params, args.run)
    inputs = files_by_keys(args, keys) or _default_inputs(args, params, keys)
    outputs = {
        "model_dir": args.model_dir or layout.ABSTRACTIVE_MODEL_DIR.format(run=args.run),
        "summaries": args.summaries or layout.ABSTRACTIVE_SUMMARIES.format(run=args.run),
        "metrics": args.metrics or layout.ABSTRACTIVE_RUN_METRICS.format(run=args.run),
        "live_dir": args.live_dir or layout.ABSTRACTIVE_LIVE_DIR.format(run=args.run),
    }
    m = run_train(params, inputs, outputs, run=args.run, progress=not args.no_progress)
    scores = {s: t["scores"]["rouge2"]["f1"] for s, t in m["test"].items() if t.get("scores")}
    duc = {y: d["scores"]["ROUGE-2"]["recall"] for y, d in m["duc"].items()}
    print(
        f"abstractive train {args.run}: {m['family']}, best epoch {m['training']['best_epoch']}, test R-2 F1 {scores},"
        f" DUC R-2 recall {duc}{standin_label(m)} -> {outputs['metrics']}"
    )


def _table(args) -> None:
    from wikiref.stages.abstractive.stage import run_table

    params = params_from_args(args, *job_keys("abstractive", "table"))
    m = run_table(
        params,
        {"runs": args.runs, "psg2sum_baselines": args.psg2sum_baselines},
        {
            "psg2sum_table4": args.psg2sum_table4,
            "qmdscnn_table3": args.qmdscnn_table3,
            "qmdsir_table4": args.qmdsir_table4,
            "duc_table5": args.duc_table5,
            "metrics": args.out_metrics,
        },
    )
    print(f"abstractive table: {len(m['runs'])} runs, not run: {m['not_run']}{standin_label(m)} -> {args.out_metrics}")


def main(args: argparse.Namespace) -> int:
    from wikiref.config import ParamsError
    from wikiref.examples import ExampleError
    from wikiref.schemas import SchemaError
    from wikiref.stages.abstractive.runs import AbstractiveError

    try:
        (_train if args.job == "train" else _table)(args)
    except (AbstractiveError, ParamsError, ExampleError, SchemaError, FileNotFoundError) as exc:
        print(f"wikiref abstractive {args.job}: {exc}", file=sys.stderr)
        return 1
    return 0
