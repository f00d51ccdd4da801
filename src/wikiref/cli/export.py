"""`wikiref export dataset|model`: a built source as a Hugging Face dataset folder, a checkpoint with a model card."""

from __future__ import annotations

import argparse
import sys

from wikiref import layout
from wikiref.cli import add_default, add_jobs
from wikiref.schemas import SOURCE_NAMES

HELP = "a built source as a Hugging Face dataset folder, or a checkpoint with a model card (nothing uploaded)"
DESCRIPTION = f"""Not a stage: it reads what the stages wrote and writes a new folder (atomically; an
existing folder is replaced only if an earlier export wrote it). Nothing is uploaded.
  dataset SOURCE --out DIR: {layout.SOURCE_SPLIT} (each split with rows) -> DIR/data/<split>.parquet
      (copied as they are), DIR/metrics/ (the stage's metrics JSON) and DIR/README.md, a dataset card: the
      Hub's YAML header (configs / data_files, dataset_info features and sizes, license, task_categories),
      the schema, sizes counted from the files, how it was built (the stage, the profile its table's caption
      names, the parameters dvc.lock recorded), the inputs' licences, and STAND-IN where the data's
      `standin` column says so. `datasets.load_dataset("DIR")` loads the folder.
  model CHECKPOINT --out DIR: a checkpoint folder ({layout.PRETRAIN_MODEL_DIR},
      {layout.FINETUNE_JOB_DIR}, {layout.ABSTRACTIVE_MODEL_DIR}, ...) -> DIR with its files,
      DIR/metrics/ (its metrics files, found through the layout, e.g. {layout.PRETRAIN_VARIANT_METRICS})
      and DIR/README.md, a model card: what it is and was trained on, the base encoder, the profile, the
      numbers of its metrics files, licences, and STAND-IN when its metrics say so."""

JOBS = {
    "dataset": "a built source (data/sources/<source>/) -> a folder datasets.load_dataset loads, with a dataset card",
    "model": "a checkpoint folder -> a copy with a model card and its metrics files",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_jobs(parser, JOBS)
    ds = jobs["dataset"]
    ds.add_argument("source", choices=SOURCE_NAMES, help="the source to export")
    ds.add_argument("--out", required=True, help="the folder to write (new, empty or an earlier export)")
    ds.add_argument("--in-dir", help=f"its split files (default: {layout.SOURCE_DIR})")
    ds.add_argument(
        "--metrics", help="the build's metrics JSON (default: the stage's, e.g. " + layout.SPLIT_METRICS + ")"
    )
    ds.add_argument("--table", help="the stem of the stage's statistics table, whose caption names the profile")
    add_default(ds, "--dvc-lock", "dvc.lock", "DVC's lock file (its params of the stage that wrote the source)")
    mo = jobs["model"]
    mo.add_argument("checkpoint", help="the checkpoint folder (model.safetensors, config.json, ...)")
    mo.add_argument("--out", required=True, help="the folder to write (new, empty or an earlier export)")
    add_default(mo, "--root", ".", "the workflow directory the layout's paths (models/, results/) are relative to")
    mo.add_argument(
        "--metrics", action="append", default=[], metavar="JSON", help="another metrics file to quote (repeatable)"
    )


def main(args: argparse.Namespace) -> int:
    from wikiref.export import ExportError, export_dataset, export_model

    try:
        if args.job == "dataset":
            res = export_dataset(
                args.source,
                args.out,
                in_dir=args.in_dir,
                metrics=args.metrics,
                table=args.table,
                dvc_lock=args.dvc_lock,
            )
            sizes = ", ".join(f"{k}={v}" for k, v in res["sizes"].items())
            label = f", {res['standin']} STAND-IN rows" if res["standin"] else ""
            print(f"export dataset {args.source}: {sizes}{label} -> {res['out']}/README.md")
            return 0
        res = export_model(args.checkpoint, args.out, root=args.root, metrics=tuple(args.metrics))
    except (ExportError, OSError) as exc:
        print(f"wikiref export {args.job}: {exc}", file=sys.stderr)
        return 1
    label = {True: " (STAND-IN)", False: "", None: " (STAND-IN or not: not recorded)"}[res["standin"]]
    print(f"export model ({res['kind'] or 'unknown kind'}): {len(res['files'])} files{label} -> {res['out']}/README.md")
    return 0


if __name__ == "__main__":  # `python -m wikiref.cli.export ...` (also `wikiref export ...` once registered)
    _parser = argparse.ArgumentParser(
        prog="wikiref export", description=DESCRIPTION, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    add_arguments(_parser)
    sys.exit(main(_parser.parse_args()))
