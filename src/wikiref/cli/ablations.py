"""`wikiref ablations`: the journal §VI analyses as grid cells (Figs. 4-6, Tables VIII-IX)."""

from __future__ import annotations

import argparse
from pathlib import Path

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_inputs,
    add_jobs,
    add_start,
    add_torch_arguments,
    duc_year_files,
    named_inputs,
    set_torch_threads,
    standin_label,
)
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "data-size, quality, pooling, subnetwork and DUC-size ablations (Figs. 4-6, Tables VIII-IX)"
DESCRIPTION = f"""Jobs (one Snakemake job per cell; the cell names are Paramspace-style wildcards):
  pretrain  --aug CELL: train one augmentation model on its WikiRef subset and score it on WikiRef
            dev/test (or, prune~iterative, prune it gradually while training on WikiRef)
  finetune  --aug CELL --duc CELL: fine-tune it (or the encoder: data~none) on DUC and test on
            ablations.test_year with the official ROUGE
  collect   every cell's result -> {layout.ABLATIONS_METRICS} (what `wikiref report` draws)
  plan      print the cells of the current parameters (one per line)

Augmentation cells: pooling~<cls|max|mean|attention|query>_data~<size|quality|none>_amount~<0..1>
_prune~<none|iterative>_start~<encoder|da>. DUC cells: train~<all|none|YEAR>_percent~<0..100>
_method~<full|subnet|iterative|none>.
In: {layout.ORACLE_DIR}/{{train,dev,test}}.parquet (pretrain), {layout.DUC_YEAR} (finetune); --start: the
checkpoint files the cell starts from (the DA model, start~da cells; the augmentation model, finetune),
or instead those in --pretrain-root/<cell>/.
Out: {layout.ABLATIONS_PRETRAIN_DIR}/<aug>/ (checkpoint), {layout.ABLATIONS_WIKIREF_RESULT},
{layout.ABLATIONS_DUC_RESULT}, {layout.ABLATIONS_METRICS}.
Params: seed, model, pretrain, finetune, duc, ablations (collect and plan also profile;
ablations.budget shrinks windows, epochs and example counts for these runs only).
`wikiref ablations <job> --help` lists the arguments of each job."""

JOBS = {
    "pretrain": "train one augmentation cell on WikiRef and score it on WikiRef dev/test",
    "finetune": "fine-tune one (augmentation cell, DUC cell) pair on DUC and test it",
    "collect": f"every cell's result -> {layout.ABLATIONS_METRICS}",
    "plan": "print the cells of the current parameters",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for job, job_parser in add_jobs(parser, JOBS).items():
        if job in ("pretrain", "finetune"):
            job_parser.add_argument("--aug", required=True, help="the augmentation cell")
            add_start(
                job_parser,
                "the checkpoint files the cell starts from (pretrain, start~da: the DA model of its pooling; "
                "finetune: the augmentation model; none otherwise)",
                "--pretrain-root is",
            )
            add_default(
                job_parser, "--pretrain-root", layout.ABLATIONS_PRETRAIN_DIR, "folder of the augmentation checkpoints"
            )
        if job == "pretrain":
            add_default(job_parser, "--oracle-dir", layout.ORACLE_DIR, "WikiRef oracle splits {train,dev,test}.parquet")
            add_inputs(job_parser, "train, dev, test (the oracle splits)", "--oracle-dir is")
            job_parser.add_argument("--model-dir", help="the cell's checkpoint (default: <pretrain-root>/<aug>)")
            job_parser.add_argument(
                "--out", help=f"the cell's result JSON (default: {layout.ABLATIONS_WIKIREF_RESULT})"
            )
        elif job == "finetune":
            job_parser.add_argument("--duc", required=True, help="the DUC cell")
            add_default(job_parser, "--duc-dir", layout.DUC_DIR, "folder with <year>.parquet")
            add_inputs(job_parser, "duc.<year> (each year of duc.years)", "--duc-dir is")
            job_parser.add_argument("--work-dir", help=f"scratch folder (default: {layout.ABLATIONS_FINETUNE_WORK})")
            job_parser.add_argument("--out", help=f"the cell's result JSON (default: {layout.ABLATIONS_DUC_RESULT})")
        elif job == "collect":
            add_default(job_parser, "--results-root", ".", "folder the cell result paths are relative to")
            add_files(
                job_parser,
                "--results",
                "JSON",
                "every cell's result file (what the rule declares); when given, the job reads these alone",
            )
            job_parser.add_argument("--out", default=layout.ABLATIONS_METRICS, help="default: %(default)s")
        if job in ("pretrain", "finetune"):
            add_torch_arguments(job_parser)
        add_params_arguments(job_parser)


def main(args: argparse.Namespace) -> int:
    from wikiref.schemas import SchemaError
    from wikiref.stages import ablations, finetune, pretrain

    try:
        return _main(args, ablations)
    except (ablations.AblationError, finetune.FinetuneError, pretrain.PretrainError, SchemaError) as exc:
        raise SystemExit(f"wikiref ablations {args.job}: {exc}") from None


def _main(args: argparse.Namespace, ablations) -> int:
    if args.job in ("plan", "collect"):
        params = params_from_args(args, *job_keys("ablations", "collect"))
        if args.job == "plan":
            print("\n".join(ablations.plan_lines(params)))
            return 0
        inputs = {"results": args.results} if args.results else {"results_root": args.results_root}
        out = ablations.collect(params, inputs, {"metrics": args.out})
        cells = out["cells"]
        print(f"collected {cells['augmentation']} augmentation and {cells['duc']} DUC cells -> {args.out}")
        return 0

    params = params_from_args(args, *job_keys("ablations", "cell"))
    set_torch_threads(args)
    progress = not args.no_progress
    aug = ablations.parse_aug(args.aug)
    if args.job == "pretrain":
        inputs = {
            **(
                named_inputs(args, layout.SPLITS)
                or {s: layout.in_folder(args.oracle_dir, layout.ORACLE_FILE, split=s) for s in layout.SPLITS}
            ),
            "start": ablations.start_files(aug, args.pretrain_root) if args.start is None else args.start,
        }
        outputs = {
            "model_dir": Path(args.model_dir or Path(args.pretrain_root) / aug.id),
            "result": args.out or ablations.wikiref_metrics_path(aug),
        }
        res = ablations.pretrain_cell(params, inputs, outputs, aug=aug, progress=progress)
        if "wikiref" in res:
            w = res["wikiref"]["test"]
            print(
                f"{aug.id}: WikiRef test R-1 {w['rouge1']:.2f} R-2 {w['rouge2']:.2f} R-L {w['rougeL']:.2f} "
                f"({res['subset']['examples']} training examples)"
            )
        else:
            print(f"{aug.id}: pruned to sparsity {res['pruning']['schedule']['final_sparsity']:.2f}")
        return 0
    duc = ablations.parse_duc(args.duc)
    inputs = {
        "years": duc_year_files(args, params["duc"]["years"], args.duc_dir),
        "model": ablations.model_files(aug, args.pretrain_root) if args.start is None else args.start,
    }
    outputs = {
        "work_dir": Path(args.work_dir or layout.ABLATIONS_FINETUNE_WORK.format(aug=aug.id, duc=duc.id)),
        "result": args.out or ablations.duc_metrics_path(aug, duc),
    }
    res = ablations.finetune_cell(params, inputs, outputs, aug=aug, duc=duc, progress=progress)
    print(
        f"{aug.id}/{duc.id}: DUC {res['test_year']} "
        + " ".join(f"{m.replace('ROUGE-', 'R-')} {v:.2f}" for m, v in res["duc"].items())
        + standin_label(res)
    )
    return 0
