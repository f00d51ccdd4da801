"""`wikiref split`: curated examples -> train/dev/test without document overlap; Tables I-II."""

from __future__ import annotations

import argparse
import logging
from collections import Counter

from wikiref.config import add_params_arguments, params_from_args

HELP = "seeded train/dev/test split without document overlap; Tables I-II"
DESCRIPTION = """In: data/curated/examples.parquet (curate). Out: data/split/{train,dev,test}.parquet (the
curated columns, rows sorted by id), results/tables/table1_wikiref_splits.{csv,md,tex} (per-split
statistics), results/tables/table2_wikiref_percentiles.{csv,md,tex} (percentiles of the whole
dataset) and results/metrics/split.json (sizes, document groups, overlap check).

Examples sharing a normalised URL (doc_key) or a body hash (doc_hash) are one group; groups are
shuffled with `seed` and dealt to test and dev until split.test / split.dev (counts, or fractions
when < 1) are reached; the rest is train. Fails if any document ends up in two splits."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--curated", default="data/curated/examples.parquet", help="curated examples (default: %(default)s)")
    parser.add_argument("--out-dir", default="data/split", help="folder for train/dev/test.parquet (default: %(default)s)")
    parser.add_argument("--tables-dir", default="results/tables", help="folder for Tables I-II (default: %(default)s)")
    parser.add_argument("--metrics", default="results/metrics/split.json", help="metrics JSON (default: %(default)s)")


def main(args: argparse.Namespace) -> int:
    from pathlib import Path

    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from wikiref.stages import split
    from wikiref.files import write_json, write_parquet
    from wikiref.stages import split_tables as dataset_tables
    from wikiref.tables import write_table

    log = logging.getLogger("wikiref.stages.split")
    params = params_from_args(args, "profile", "seed", "split")
    table = pq.read_table(args.curated)
    ids = table.column("id").to_pylist()
    keys = table.column("doc_key").to_pylist()
    hashes = table.column("doc_hash").to_pylist()
    try:
        assignment = split.assign_splits(ids, keys, hashes, dev=params["split"]["dev"], test=params["split"]["test"],
                                         seed=params["seed"])
    except ValueError as exc:
        log.error("%s", exc)
        return 1
    overlap = split.overlap_report(assignment, keys, hashes)
    if any(overlap.values()):
        raise RuntimeError(f"document overlap between splits: {overlap}")  # cannot happen; guards the code
    import pyarrow as pa

    labels = pa.array(assignment)
    frames = {}
    out_dir = Path(args.out_dir)
    for name in split.SPLITS:
        part = table.filter(pc.equal(labels, name))
        part = part.take(pc.sort_indices(part, sort_keys=[("id", "ascending")]))
        write_parquet(out_dir / f"{name}.parquet", part)
        frames[name] = part.select(["article", *dataset_tables.STATS]).to_pandas()
    sizes = split.split_sizes(assignment)
    groups = split.document_groups(keys, hashes)

    import pandas as pd

    tables_dir = Path(args.tables_dir)
    t1 = dataset_tables.table1(frames)
    write_table(t1, tables_dir / dataset_tables.TABLE1_STEM, title=dataset_tables.TABLE1_TITLE,
                profile=params["profile"], floatfmt=".1f")
    t2 = dataset_tables.table2(pd.concat(frames.values(), ignore_index=True))
    write_table(t2, tables_dir / dataset_tables.TABLE2_STEM, title=dataset_tables.TABLE2_TITLE,
                profile=params["profile"], floatfmt=".1f")
    write_json(args.metrics, {
        "examples": len(ids),
        "sizes": sizes,
        "document_groups": len(set(groups)),
        "largest_group": max(Counter(groups).values(), default=0),
        **overlap,
        "seed": params["seed"],
    })
    print(f"split: {len(ids)} examples -> " + ", ".join(f"{k}={v}" for k, v in sizes.items())
          + f" ({len(set(groups))} document groups, no overlap) -> {out_dir}")
    return 0
