"""`wikiref finetune`: held-out-year fine-tuning on DUC and Table VI (journal §V)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_inputs,
    add_jobs,
    add_start,
    add_torch_arguments,
    duc_year_files,
    files_by_keys,
    named_inputs,
    set_torch_threads,
    standin_label,
)
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "fine-tune on two DUC years and test on the third (Table VI), incl. sparse subnetwork fine-tuning"
DESCRIPTION = f"""Jobs:
  run    one setting (finetune.settings[*].name) with one DUC year held out: train on the other years'
         clusters (minus a seeded dev slice used to pick the epoch), score the held-out year per
         (query, document), build 250-word summaries (duc.select) and score them with the official
         ROUGE (duc.rouge_flags)
  prune  (method: iterative) gradual magnitude pruning (Zhu & Gupta) during a WikiRef training run
         from the setting's start: the subnetwork that `run` then fine-tunes
  table  Table VI from the per-job metrics + the duc stage's baselines; {layout.FINETUNE_METRICS}

In (run): {layout.DUC_YEAR} for every duc.years (`wikiref duc prepare`: sentences, query levels,
references, ROUGE-2 recall targets); --start: the files the setting starts from (init: pretrained,
the checkpoint files of each candidate variant, {layout.PRETRAIN_MODEL_DIR}/, and its
{layout.PRETRAIN_VARIANT_METRICS}, which variant: best compares; method: iterative, the prune output's
files; none for init: encoder), or instead the folders --pretrain-dir, --metrics-dir, --prune-dir.
Out (run): --metrics ({layout.FINETUNE_JOB_METRICS}: ROUGE-1/2/SU4 R/P/F + bootstrap CIs + per-topic
recall, start checkpoint, dev selection history, subnetwork counts, seconds), --out-dir
({layout.FINETUNE_JOB_DIR}/: predictions.parquet = per-document sentence scores, summaries.json,
training.json, subnet.json; the weights too when finetune.keep_models).
In (prune): {layout.ORACLE_DIR}/{{train,dev}}.parquet. Out: --out-dir ({layout.FINETUNE_PRUNED_DIR}/:
weights, subnet_masks.safetensors, pruning.json).
Out (table): --table stem ({layout.TABLE6}.{{csv,md,tex}}, STAND-IN in the caption when duc.standin)
and --summary ({layout.FINETUNE_METRICS}).
`wikiref finetune <job> --help` lists the arguments of each job."""

JOBS = {
    "run": "fine-tune one setting with one DUC year held out and test on that year",
    "prune": "gradual magnitude pruning on WikiRef for a setting with method iterative",
    "table": f"Table VI and {layout.FINETUNE_METRICS}",
}


def _add_start(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--setting", required=True, help="a finetune.settings name")
    add_start(
        parser,
        "the files the setting starts from (the checkpoint files of its candidate variants and their "
        "pretrain_<variant>.json; method iterative: the prune output's files; none for init encoder)",
        "the folder options (--pretrain-dir, --metrics-dir; run: --prune-dir) are",
    )
    add_default(
        parser, "--pretrain-dir", layout.PRETRAIN_DIR, "without --start: the pre-trained checkpoints <variant>/"
    )
    add_default(
        parser, "--metrics-dir", layout.METRICS, "without --start: the pre-training metrics pretrain_<variant>.json"
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for job, job_parser in add_jobs(parser, JOBS).items():
        if job == "run":
            _add_start(job_parser)
            job_parser.add_argument("--year", type=int, required=True, help="the held-out (test) year")
            add_default(job_parser, "--data-dir", layout.DUC_DIR, "folder with <year>.parquet")
            add_inputs(job_parser, "duc.<year> (each year of duc.years)", "--data-dir is")
            job_parser.add_argument(
                "--prune-dir",
                help=f"without --start, method iterative: the prune output (default: {layout.FINETUNE_PRUNED_DIR})",
            )
            job_parser.add_argument(
                "--out-dir", help=f"the fine-tuned model's folder (default: {layout.FINETUNE_JOB_DIR})"
            )
            job_parser.add_argument(
                "--metrics", help=f"the job's metrics JSON (default: {layout.FINETUNE_JOB_METRICS})"
            )
            job_parser.add_argument("--live-dir", help="dvclive folder (optional)")
        elif job == "prune":
            _add_start(job_parser)
            add_default(job_parser, "--oracle-dir", layout.ORACLE_DIR, "WikiRef oracle splits {train,dev}.parquet")
            add_inputs(job_parser, "train, dev (the oracle splits)", "--oracle-dir is")
            job_parser.add_argument("--out-dir", help=f"default: {layout.FINETUNE_PRUNED_DIR}")
        else:
            add_default(job_parser, "--metrics-dir", layout.METRICS, "the per-job metrics duc_<setting>_<year>.json")
            add_inputs(job_parser, "job_metrics.<setting>.<year> (each job's metrics)", "--metrics-dir is")
            add_default(job_parser, "--baselines", layout.DUC_BASELINES_METRICS, "the duc stage's baseline metrics")
            add_default(job_parser, "--table", layout.TABLE6, "output stem")
            add_default(job_parser, "--summary", layout.FINETUNE_METRICS, "summary metrics JSON")
        if job != "table":
            add_torch_arguments(job_parser)
        add_params_arguments(job_parser)


def main(args: argparse.Namespace) -> int:
    from wikiref.schemas import SchemaError
    from wikiref.stages import finetune, pretrain

    try:
        return _main(args, finetune, pretrain)
    except (finetune.FinetuneError, pretrain.PretrainError, SchemaError) as exc:
        raise SystemExit(f"wikiref finetune {args.job}: {exc}") from None


def _main(args: argparse.Namespace, finetune, pretrain) -> int:
    if args.job == "table":
        params = params_from_args(args, *job_keys("finetune", "table"))
        years = params["duc"]["years"]
        settings = finetune.settings(params["finetune"])
        named = files_by_keys(args, {"job_metrics": [f"{s}.{y}" for s in settings for y in years]})
        job_metrics = {
            s: {
                y: named["job_metrics"][f"{s}.{y}"] if named else finetune.job_metrics_file(args.metrics_dir, s, y)
                for y in years
            }
            for s in settings
        }
        inputs = {"job_metrics": job_metrics, "baselines": args.baselines}
        summary = finetune.table(params, inputs, {"table": args.table, "summary": args.summary})
        print(
            f"Table VI: {len(summary['settings'])} settings x {len(summary['years'])} years, "
            f"{len(summary['comparisons'])} comparisons -> {Path(args.table).with_suffix('.md')}"
        )
        return 0

    set_torch_threads(args)
    progress = not args.no_progress
    if args.job == "prune":
        params = params_from_args(args, *job_keys("finetune", "prune"))
        finetune.find_setting(params["finetune"], args.setting)
        out_dir = args.out_dir or layout.FINETUNE_PRUNED_DIR.format(setting=args.setting)
        inputs = {
            **(named_inputs(args, ("train", "dev")) or pretrain.split_files(args.oracle_dir, ("train", "dev"))),
            "start": _start_files(args, params, finetune),
        }
        info = finetune.prune(params, inputs, {"dir": out_dir}, setting=args.setting, progress=progress)
        schedule = info["schedule"]
        print(
            f"pruned {args.setting}: sparsity {schedule['final_sparsity']:.2f} over steps {schedule['begin_step']}.."
            f"{schedule['end_step']} of {schedule['total_steps']}, best epoch {info['best_epoch']} -> {out_dir}"
        )
        return 0

    params = params_from_args(args, *job_keys("finetune", "run"))
    setting = finetune.find_setting(params["finetune"], args.setting)
    # Only a setting that starts from a WikiRef checkpoint reads the pretrain section (the rules pass it
    # to those alone).
    params = params_from_args(args, *job_keys("finetune", finetune.run_job_name(setting)))
    names = {"setting": args.setting, "year": args.year}
    inputs = {
        "years": duc_year_files(args, params["duc"]["years"], args.data_dir),
        "start": _start_files(args, params, finetune),
    }
    out_dir = Path(args.out_dir or layout.FINETUNE_JOB_DIR.format(**names))
    outputs = {
        "model_dir": out_dir,
        "predictions": layout.in_folder(out_dir, layout.FINETUNE_PREDICTIONS),
        "summaries": layout.in_folder(out_dir, layout.FINETUNE_SUMMARIES),
        "metrics": args.metrics or layout.FINETUNE_JOB_METRICS.format(**names),
        "live_dir": args.live_dir,
    }
    metrics = finetune.run_job(params, inputs, outputs, setting=args.setting, year=args.year, progress=progress)
    test = metrics["test"]
    print(
        f"finetune {args.setting} {args.year}{standin_label(metrics)}: "
        + " ".join(f"{m.replace('ROUGE-', 'R-')}={100 * test[m]['R']:.2f}" for m in finetune.MEASURES)
        + f" ({metrics['test_topics']} topics, {metrics['seconds']:.0f}s) -> {outputs['metrics']}"
    )
    return 0


def _start_files(args: argparse.Namespace, params, finetune) -> list[str]:
    """The files the job's setting starts from: --start, or those files in the folders --pretrain-dir and
    --metrics-dir (--prune-dir for the run of an iterative setting)."""
    if args.start is not None:
        return list(args.start)
    setting = finetune.find_setting(params["finetune"], args.setting)
    if args.job == "run" and setting["method"] == "iterative":
        folder = args.prune_dir or layout.FINETUNE_PRUNED_DIR.format(setting=args.setting)
        return layout.checkpoint_files(folder, layout.FINETUNE_PRUNED_FILES)
    return finetune.pretrained_files(params, args.setting, args.pretrain_dir, args.metrics_dir)
