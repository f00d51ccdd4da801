"""`wikiref pretrain`: WikiRef pre-training and Table IV (journal §III, §IV)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from wikiref import layout
from wikiref.cli import add_default, add_inputs, add_jobs, add_torch_arguments, named_inputs, set_torch_threads
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "pre-train BERT / Q-BERT sentence scorers on WikiRef and evaluate them (Table IV)"
DESCRIPTION = f"""Jobs:
  run       train one variant (pretrain.variants[*].name) then evaluate it (what the Snakemake rule runs)
  train     train one variant only
  evaluate  evaluate a trained variant: dev threshold search, dev + test ROUGE-1/2/L F1
  table     Table IV from the per-variant metrics + the ALL / LEAD / ORACLE baselines
  fixture   write stand-in oracle-format splits (synthetic and/or the WikiCite cloze sample)

In: {layout.ORACLE_DIR}/{{train,dev,test}}.parquet (params: seed, model, pretrain; table also profile).
Out: {layout.PRETRAIN_MODEL_DIR}/ (model.safetensors, config.json, tokenizer files, training.json;
last/ holds the resumable state while training runs), {layout.PRETRAIN_VARIANT_METRICS},
{layout.PRETRAIN_LIVE_DIR}/ (dvclive metrics + plots), {layout.TABLE4}.{{csv,md,tex}},
{layout.PRETRAIN_METRICS}.
Multi-GPU: pretrain.nproc_per_node > 1 relaunches `train`/`run` under torchrun (DDP), or start it
yourself: torchrun --nproc_per_node=N -m wikiref pretrain train --variant NAME ...
`wikiref pretrain <job> --help` lists the arguments of each job."""

log = logging.getLogger(__name__)

JOBS = {
    "run": "train one variant, then evaluate it",
    "train": "train one variant",
    "evaluate": "evaluate a trained variant (dev threshold, dev + test ROUGE)",
    "table": "Table IV and results/metrics/pretrain.json",
    "fixture": "stand-in oracle-format splits",
}


def _add_data(parser: argparse.ArgumentParser) -> None:
    add_default(parser, "--data", layout.ORACLE_DIR, "folder with the oracle splits {train,dev,test}.parquet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for job, job_parser in add_jobs(parser, JOBS).items():
        if job in ("run", "train", "evaluate"):
            job_parser.add_argument("--variant", required=True, help="variant name from pretrain.variants")
            _add_data(job_parser)
            add_inputs(job_parser, "train, dev, test (the oracle splits)", "--data is")
            job_parser.add_argument("--model-dir", help=f"the checkpoint (default: {layout.PRETRAIN_MODEL_DIR})")
            if job != "evaluate":
                job_parser.add_argument("--live-dir", help=f"dvclive folder (default: {layout.PRETRAIN_LIVE_DIR})")
            if job != "train":
                job_parser.add_argument(
                    "--metrics", help=f"the variant's metrics JSON (default: {layout.PRETRAIN_VARIANT_METRICS})"
                )
            add_torch_arguments(job_parser)
            add_params_arguments(job_parser)
        elif job == "table":
            _add_data(job_parser)
            add_inputs(
                job_parser,
                "dev, test (the oracle splits), variant_metrics.<variant> (each variant's metrics)",
                "--data and --metrics-dir are",
            )
            add_default(
                job_parser, "--metrics-dir", layout.METRICS, "folder of the per-variant metrics pretrain_<variant>.json"
            )
            add_default(job_parser, "--table", layout.TABLE4, "output stem")
            add_default(job_parser, "--summary", layout.PRETRAIN_METRICS, "summary metrics JSON")
            add_params_arguments(job_parser)
        else:
            job_parser.add_argument("--out", required=True, help="output folder of {train,dev,test}.parquet")
            job_parser.add_argument("--cloze", help="WikiCite cloze.jsonl to convert (real examples)")
            job_parser.add_argument("--synthetic", type=int, default=0, help="number of synthetic examples to add")


def _maybe_torchrun(n: int) -> int | None:
    """Relaunch this very command under torchrun with n processes (once)."""
    if n <= 1 or "LOCAL_RANK" in os.environ:
        return None
    import subprocess

    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={n}",
        "-m",
        "wikiref",
        *sys.argv[1:],
    ]
    log.info("relaunching under torchrun: %s", " ".join(cmd))
    return subprocess.call(cmd)


def main(args: argparse.Namespace) -> int:
    from wikiref.schemas import SchemaError
    from wikiref.stages import pretrain

    try:
        return _main(args, pretrain)
    except (pretrain.PretrainError, SchemaError) as exc:
        raise SystemExit(f"wikiref pretrain {args.job}: {exc}") from None


def _main(args: argparse.Namespace, pretrain) -> int:
    from wikiref.supervised import pretraining

    if args.job == "fixture":
        counts = pretrain.fixture({}, {"cloze": args.cloze}, {"dir": args.out}, synthetic=args.synthetic)
        print(json.dumps(counts))
        return 0
    if args.job == "table":
        params = params_from_args(args, *job_keys("pretrain", "table"))
        inputs = named_inputs(args, (*pretraining.EVAL_SPLITS, "variant_metrics")) or {
            **pretraining.split_files(args.data, pretraining.EVAL_SPLITS),
            "variant_metrics": {
                name: pretraining.variant_metrics_file(args.metrics_dir, name)
                for name in pretraining.variants(params["pretrain"])
            },
        }
        summary = pretrain.table(params, inputs, {"table": args.table, "summary": args.summary})
        print(
            f"Table IV: {len(inputs['variant_metrics'])} variants, best {summary['best_variant']} "
            f"-> {Path(args.table).with_suffix('.md')}"
        )
        return 0

    set_torch_threads(args)
    params = params_from_args(args, *job_keys("pretrain", "variant"))
    pretraining.find_variant(params["pretrain"], args.variant)  # an unknown name fails before torchrun starts
    name = args.variant
    model_dir = args.model_dir or layout.PRETRAIN_MODEL_DIR.format(variant=name)
    splits = named_inputs(args, pretraining.SPLITS) or pretraining.split_files(args.data)
    inputs = {**splits, "model_dir": model_dir}
    outputs = {
        "model_dir": model_dir,
        "metrics": getattr(args, "metrics", None) or layout.PRETRAIN_VARIANT_METRICS.format(variant=name),
        "live_dir": getattr(args, "live_dir", None) or layout.PRETRAIN_LIVE_DIR.format(variant=name),
    }
    progress = not args.no_progress
    if args.job in ("run", "train"):
        returncode = _maybe_torchrun(params["pretrain"]["nproc_per_node"])
        if returncode is not None:
            return returncode  # the torchrun children trained; rank 0 also evaluated (job run)
    if args.job == "train":
        trained = pretrain.train(params, inputs, outputs, variant=name, progress=progress)
        if trained["rank"] == 0:
            print(
                f"trained {name}: best epoch {trained['best_epoch']}, dev ROUGE-2 {trained['dev_rouge2']:.2f}, "
                f"{trained['windows_per_second']:.1f} windows/s -> {outputs['model_dir']}"
            )
        return 0
    job = pretrain.run if args.job == "run" else pretrain.evaluate
    metrics = job(params, inputs, outputs, variant=name, progress=progress)
    if "dev" in metrics:  # not on the other ranks under torchrun
        print(
            f"{name}: dev R-2 {metrics['dev']['rouge2']:.2f}, test R-2 {metrics['test']['rouge2']:.2f} "
            f"(threshold {metrics['threshold']}) -> {outputs['metrics']}"
        )
    return 0
