"""`wikiref pretrain`: WikiRef pre-training and Table IV (journal §III, §IV)."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from wikiref.cli import add_torch_arguments, set_torch_threads
from wikiref.config import add_params_arguments, params_from_args

HELP = "pre-train BERT / Q-BERT sentence scorers on WikiRef and evaluate them (Table IV)"
DESCRIPTION = """Actions:
  run       train one variant (pretrain.variants[*].name) then evaluate it (what the Snakemake rule runs)
  train     train one variant only
  evaluate  evaluate a trained variant: dev threshold search, dev + test ROUGE-1/2/L F1
  table     Table IV from the per-variant metrics + the ALL / LEAD / ORACLE baselines
  fixture   write stand-in data/oracle-format splits (synthetic and/or the WikiCite cloze sample)

In: data/oracle/{train,dev,test}.parquet (params: seed, model, pretrain; table also profile).
Out: models/pretrain/<variant>/ (model.safetensors, config.json, tokenizer files, training.json;
last/ holds the resumable state while training runs), results/metrics/pretrain_<variant>.json,
results/dvclive/<variant>/ (dvclive metrics + plots), results/tables/table4_wikiref.{csv,md,tex},
results/metrics/pretrain.json.
Multi-GPU: pretrain.nproc_per_node > 1 relaunches `train`/`run` under torchrun (DDP), or start it
yourself: torchrun --nproc_per_node=N -m wikiref pretrain train --variant NAME ..."""

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["run", "train", "evaluate", "table", "fixture"])
    parser.add_argument("--variant", help="variant name from pretrain.variants (run/train/evaluate)")
    parser.add_argument("--data", default="data/oracle", help="folder with {train,dev,test}.parquet (default: %(default)s)")
    parser.add_argument("--model-dir", help="default: models/pretrain/<variant>")
    parser.add_argument("--metrics", help="per-variant metrics JSON (default: results/metrics/pretrain_<variant>.json)")
    parser.add_argument("--live-dir", help="dvclive folder (default: results/dvclive/<variant>)")
    parser.add_argument("--metrics-dir", default="results/metrics", help="table: where pretrain_<variant>.json are")
    parser.add_argument("--table", default="results/tables/table4_wikiref", help="table: output stem (default: %(default)s)")
    parser.add_argument("--summary", default="results/metrics/pretrain.json", help="table: summary metrics JSON")
    add_torch_arguments(parser)
    parser.add_argument("--out", help="fixture: output folder")
    parser.add_argument("--cloze", help="fixture: WikiCite cloze.jsonl to convert (real examples)")
    parser.add_argument("--synthetic", type=int, default=0, help="fixture: number of synthetic examples to add")
    add_params_arguments(parser)


def _maybe_torchrun(n: int) -> int | None:
    """Relaunch this very command under torchrun with n processes (once)."""
    if n <= 1 or "LOCAL_RANK" in os.environ:
        return None
    import subprocess

    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={n}",
           "-m", "wikiref", *sys.argv[1:]]
    log.info("relaunching under torchrun: %s", " ".join(cmd))
    return subprocess.call(cmd)


def main(args: argparse.Namespace) -> int:
    set_torch_threads(args)
    if args.action == "fixture":
        return _fixture(args)
    if args.action == "table":
        return _table(args)
    params = params_from_args(args, "seed", "model", "pretrain")
    from wikiref.stages import pretrain as pt

    if not args.variant:
        raise SystemExit(f"wikiref pretrain {args.action}: --variant is required")
    names = pt.variants(params["pretrain"])
    if args.variant not in names:
        raise SystemExit(f"unknown variant {args.variant!r}; params define: {', '.join(names)}")
    model_dir = Path(args.model_dir or f"models/pretrain/{args.variant}")
    metrics_path = Path(args.metrics or f"results/metrics/pretrain_{args.variant}.json")
    live_dir = args.live_dir or f"results/dvclive/{args.variant}"
    dev_scores = None
    if args.action in ("run", "train"):
        rc = _maybe_torchrun(params["pretrain"]["nproc_per_node"])
        if rc is not None:
            return rc  # the torchrun children trained; rank 0 also evaluated (action run)
        else:
            result = pt.train_variant(params, args.variant, args.data, model_dir, live_dir,
                                      progress=not args.no_progress)
            if int(os.environ.get("RANK", "0")) != 0:
                return 0  # under torchrun only rank 0 reports and evaluates
            log.info("trained %s: best epoch %d, dev ROUGE-2 %.2f, %.1f windows/s", args.variant,
                     result.best_epoch, result.best_metric, result.windows_per_second)
            dev_scores = result.best_dev_scores
    if args.action in ("run", "evaluate"):
        from wikiref.files import write_json

        metrics = pt.evaluate_variant(params, args.variant, model_dir, args.data, progress=not args.no_progress,
                                      dev_scores=dev_scores)
        write_json(metrics_path, metrics)
        log.info("%s: dev R-2 %.2f, test R-2 %.2f (threshold %s) -> %s", args.variant, metrics["dev"]["rouge2"],
                 metrics["test"]["rouge2"], metrics["threshold"], metrics_path)
    return 0


def _table(args: argparse.Namespace) -> int:
    from wikiref.stages import pretrain as pt
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    params = params_from_args(args, "profile", "seed", "model", "pretrain")
    pre = params["pretrain"]
    metrics = {}
    for name in pt.variants(pre):
        path = Path(args.metrics_dir) / f"pretrain_{name}.json"
        if not path.exists():
            raise SystemExit(f"missing {path}: run `wikiref pretrain run --variant {name}` first")
        metrics[name] = read_json(path)
    baselines = pt.baseline_metrics(params, args.data)
    df = pt.table4(pre, metrics, baselines)
    summary = pt.summary_metrics(params["model"], pre, metrics, baselines)
    enc = params["model"]["encoder"]
    notes = (f"ROUGE F1 x 100 (rouge-score, Porter stemming; ROUGE-L summary-level). "
             f"Encoder {enc} (TRANSFORMER rows: same shape, random init); max_length {params['model']['max_length']}, "
             f"stride {params['model']['stride']}, epochs {pre['epochs']}, batch {pre['batch_size']}, lr {pre['lr']}; "
             f"train examples cap {pre['max_train_examples']}, dev/test cap {pre['max_eval_examples']}; "
             f"dev/test examples: {summary_examples(metrics)}.")
    cmp = summary.get("comparison_dev_rouge2")
    if cmp:
        notes += (f" Dev ROUGE-2: best pretrained variant {cmp['best_pretrained_variant']} "
                  f"{cmp['best_pretrained_dev_rouge2']:.2f} vs LEAD {cmp['lead_dev_rouge2']:.2f} "
                  f"({cmp['margin_over_lead']:+.2f})")
        if "transformer_dev_rouge2" in cmp:
            notes += f", vs TRANSFORMER {cmp['transformer_dev_rouge2']:.2f} ({cmp['margin_over_transformer']:+.2f})"
        if "same_config_pretrained_variant" in cmp:
            notes += (f"; like for like, {cmp['same_config_pretrained_variant']} (the TRANSFORMER's head, pooling "
                      f"and input, pretrained) {cmp['same_config_pretrained_dev_rouge2']:.2f}: "
                      f"{cmp['same_config_margin_over_transformer']:+.2f} vs TRANSFORMER, "
                      f"{cmp['same_config_margin_over_lead']:+.2f} vs LEAD")
        notes += ". The best of several variants on a small dev set is an optimistic pick."
    write_table(df, args.table, title="Table IV: ROUGE F1 of baselines and models on WikiRef",
                profile=params["profile"], encoder=enc, notes=notes)
    summary["profile"] = params["profile"]["name"]
    write_json(args.summary, summary)
    print(Path(args.table).with_suffix(".md").read_text())
    return 0


def summary_examples(metrics) -> str:
    first = next(iter(metrics.values()))
    return f"{first['dev']['examples']}/{first['test']['examples']}"


def _fixture(args: argparse.Namespace) -> int:
    import json

    import pandas as pd

    from wikiref.stages import pretrain as pt

    if not args.out:
        raise SystemExit("fixture: --out is required")
    parts = []
    if args.cloze:
        with open(args.cloze, encoding="utf-8") as fh:
            parts.append(pt.cloze_oracle_frame(json.loads(line) for line in fh if line.strip()))
    if args.synthetic:
        parts.append(pt.synthetic_oracle_frame(args.synthetic, seed=0))
    if not parts:
        raise SystemExit("fixture: give --cloze and/or --synthetic N")
    df = pd.concat(parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
    # Deterministic 60/20/20 split by a hash of the id.
    import hashlib

    bucket = df["id"].map(lambda s: int(hashlib.sha1(s.encode()).hexdigest(), 16) % 10)
    frames = {"train": df[bucket < 6], "dev": df[(bucket >= 6) & (bucket < 8)], "test": df[bucket >= 8]}
    pt.write_oracle_splits(frames, args.out)
    print(json.dumps({k: len(v) for k, v in frames.items()}))
    return 0
