"""`wikiref oracle`: oracle labels and regression targets for every split (journal §IV-C)."""

from __future__ import annotations

import argparse
import sys

from wikiref import layout
from wikiref.cli import add_default, add_inputs, named_inputs
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "greedy oracle labels and per-sentence regression targets"
DESCRIPTION = f"""In: {layout.SPLIT_FILE} for train, dev and test (split). Out: {layout.ORACLE_FILE} with
columns id, query, doc_sentences, statement, oracle_labels (0/1 per sentence: the greedy oracle
maximising oracle.label_metric, ROUGE-2 F1 in the paper, adding one sentence at a time until no
addition strictly improves it), oracle_scores (each sentence's own oracle.score_metric: the
regression targets), oracle_indices, oracle_score; rows sorted by id. And {layout.ORACLE_METRICS}
(per split: examples, mean oracle score, mean selected sentences, examples with no positive label).
ROUGE values equal rouge-score with stemming (wikiref.rouge.fast)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    add_default(parser, "--split-dir", layout.SPLIT_DIR, "folder with train/dev/test.parquet")
    add_inputs(parser, "one per split of --splits (train, dev, test)", "--split-dir is")
    add_default(parser, "--out-dir", layout.ORACLE_DIR, "output folder")
    add_default(parser, "--metrics", layout.ORACLE_METRICS, "metrics JSON")
    parser.add_argument(
        "--splits",
        nargs="+",
        default=list(layout.SPLITS),
        choices=layout.SPLITS,
        help="splits to process (default: all)",
    )
    add_default(parser, "--threads", 1, "worker processes", type=int)
    parser.add_argument(
        "--batch-rows", type=int, default=20000, help="rows per batch (memory bound; default: %(default)s)"
    )


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    from wikiref.schemas import SchemaError
    from wikiref.stages import oracle

    params = params_from_args(args, *job_keys("oracle", "run"))

    def file_in(folder: str, template: str, split: str) -> Path:
        return Path(folder) / Path(template.format(split=split)).name

    inputs = named_inputs(args, args.splits) or {s: file_in(args.split_dir, layout.SPLIT_FILE, s) for s in args.splits}
    outputs = {s: file_in(args.out_dir, layout.ORACLE_FILE, s) for s in args.splits}
    outputs["metrics"] = args.metrics
    try:
        metrics = oracle.run(params, inputs, outputs, threads=args.threads, batch_rows=args.batch_rows)
    except (SchemaError, FileNotFoundError) as exc:
        print(f"wikiref oracle: {exc}", file=sys.stderr)
        return 1
    label = params["oracle"]["label_metric"]
    print(
        "oracle: "
        + ", ".join(
            f"{k}={v['examples']} (mean {label} {v['oracle_score_mean']:.3f})" for k, v in metrics["splits"].items()
        )
        + f" -> {args.out_dir}"
    )
    return 0
