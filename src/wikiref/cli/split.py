"""`wikiref split`: curated examples -> train/dev/test without document overlap; Tables I-II."""

from __future__ import annotations

import argparse
import sys

from wikiref import layout
from wikiref.cli import add_default
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "seeded train/dev/test split without document overlap; Tables I-II"
DESCRIPTION = f"""In: {layout.CURATED} (curate). Out: {layout.SPLIT_FILE} for train, dev and test (the
curated columns, rows sorted by id), {layout.TABLE1}.{{csv,md,tex}} (per-split statistics),
{layout.TABLE2}.{{csv,md,tex}} (percentiles of the whole dataset) and {layout.SPLIT_METRICS}
(sizes, document groups, overlap check), and the same splits on the common example schema
({layout.SOURCE_SPLIT.format(source="wikiref", split="<split>")}: one document per example).

Examples sharing a normalised URL (doc_key) or a body hash (doc_hash) are one group; groups are
shuffled with `seed` and dealt to test and dev until split.test / split.dev (counts, or fractions
when < 1) are reached; the rest is train. Fails if any document ends up in two splits."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    add_default(parser, "--curated", layout.CURATED, "curated examples")
    add_default(parser, "--out-dir", layout.SPLIT_DIR, "folder for train/dev/test.parquet")
    add_default(parser, "--table1", layout.TABLE1, "Table I stem")
    add_default(parser, "--table2", layout.TABLE2, "Table II stem")
    add_default(parser, "--metrics", layout.SPLIT_METRICS, "metrics JSON")
    add_default(
        parser, "--sources-dir", layout.SOURCE_DIR.format(source="wikiref"), "folder for the common-schema files"
    )


def main(args: argparse.Namespace) -> int:

    from wikiref.examples import ExampleError
    from wikiref.schemas import SchemaError
    from wikiref.stages import split

    params = params_from_args(args, *job_keys("split", "run"))
    outputs = {name: layout.in_folder(args.out_dir, layout.SPLIT_FILE, split=name) for name in layout.SPLITS}
    outputs.update(table1=args.table1, table2=args.table2, metrics=args.metrics)
    outputs["sources"] = {
        name: layout.in_folder(args.sources_dir, layout.SOURCE_SPLIT, source="wikiref", split=name)
        for name in layout.SPLITS
    }
    try:
        metrics = split.run(params, {"curated": args.curated}, outputs)
    except (split.SplitError, SchemaError, ExampleError, FileNotFoundError) as exc:
        print(f"wikiref split: {exc}", file=sys.stderr)
        return 1
    print(
        f"split: {metrics['examples']} examples -> "
        + ", ".join(f"{k}={v}" for k, v in metrics["sizes"].items())
        + f" ({metrics['document_groups']} document groups, no overlap) -> {args.out_dir}"
    )
    return 0
