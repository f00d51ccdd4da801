"""`wikiref compare oracle|pretrain|duc|qmsum|table|plan`: which augmentation source helps most."""

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
    files_by_keys,
    named_inputs,
    set_torch_threads,
    standin_label,
)
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "the source comparison: every augmentation source pre-trained on equal terms, tested on DUC and QMSum"
DESCRIPTION = f"""Jobs (one Snakemake job per source / cell; cells are Paramspace-style wildcards
source~<wikiref|qmdscnn|qmdsir|wcep|psg2sum|union|none>_budget~<equal|natural|none>):
  oracle    --source S: {layout.SOURCE_SPLIT} -> {layout.COMPARE_ORACLE_FILE} (the greedy oracle over
            the pooled sentences of every document; document lengths kept for the packing)
  pretrain  --cell C: pre-train one cell (equal: the same examples and optimizer steps for every
            source; natural: every example) -> {layout.COMPARE_MODEL_DIR}/, {layout.COMPARE_PRETRAIN_RESULT}
  duc       --cell C: DA PRE-TRAINED transfer on every DUC year and held-out-year fine-tuning ->
            {layout.COMPARE_DUC_RESULT} (official ROUGE recall)
  qmsum     --cell C: transfer and fine-tuning on QMSum -> {layout.COMPARE_QMSUM_RESULT} (official ROUGE F1)
  abstractive --cell model~M_source~S_budget~B: train abstractive model M (compare.abstractive.models) on
            the examples of cell source~S_budget~B, summarise DUC and QMSum without fine-tuning ->
            {layout.COMPARE_MODEL_DIR}/, {layout.COMPARE_ABSTRACTIVE_RESULT}
  table     every cell -> {layout.COMPARE_TABLE}.*, {layout.COMPARE_METRICS} (rows, rankings, findings)
  plan      print the cells of the current parameters
Params: seed, model, pretrain, finetune, duc, qmsum, oracle, abstractive, compare (compare.budget shrinks windows,
documents and fine-tuning for these runs only). `wikiref compare <job> --help` lists each job's arguments."""

JOBS = {
    "oracle": "oracle labels of one source on the common example schema",
    "pretrain": "pre-train one (source, budget) cell",
    "duc": "DUC transfer and held-out-year fine-tuning of one cell",
    "qmsum": "QMSum transfer and fine-tuning of one cell",
    "abstractive": "train an abstractive model on one cell's examples, test it on DUC and QMSum",
    "table": "every cell -> the comparison table and metrics",
    "plan": "print the cells of the current parameters",
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    for job, p in add_jobs(parser, JOBS).items():
        if job == "oracle":
            p.add_argument("--source", required=True, help="a source of the common example schema")
            p.add_argument("--in-dir", help="its split files (default: data/sources/<source>)")
            add_inputs(p, "train, dev, test (the source's split files)", "--in-dir is")
            add_default(p, "--oracle-root", layout.COMPARE_ORACLE_DIR, "output root (<root>/<source>/<split>.parquet)")
            p.add_argument("--metrics", help=f"metrics JSON (default: {layout.COMPARE_ORACLE_METRICS})")
            add_default(p, "--threads", 1, "worker processes", type=int)
        if job in ("pretrain", "duc", "qmsum", "abstractive"):
            example = "model~hs-joint_source~wcep_budget~equal" if job == "abstractive" else "source~wcep_budget~equal"
            p.add_argument("--cell", required=True, help=f"the cell, e.g. {example}")
            p.add_argument("--out", help="the cell's result JSON (default: results/compare/<job>/<cell>.json)")
            add_torch_arguments(p)
        if job in ("pretrain", "abstractive"):
            add_default(p, "--oracle-root", layout.COMPARE_ORACLE_DIR, "root of the per-source oracle splits")
            what = "train.<source>, dev.<source> (each member's oracle splits), sizes.<source> (equal budget with"
            what += " examples: null: every other compared source's train split)"
            if job == "abstractive":
                what += ", years.<year> (each DUC year), qmsum_test.test (the QMSum test split)"
            add_inputs(p, what, "--oracle-root, --duc-dir and --qmsum-dir are")
            p.add_argument("--model-dir", help=f"the checkpoint (default: {layout.COMPARE_MODEL_DIR})")
        if job == "duc":
            add_inputs(p, "duc.<year> (each year of duc.years)", "--duc-dir is")
        if job == "qmsum":
            add_inputs(p, "train, dev, test (the QMSum splits)", "--qmsum-dir is")
        if job in ("duc", "qmsum"):
            add_start(p, "the cell's checkpoint files (none for the encoder-only row)", "--models-root is")
            add_default(
                p, "--models-root", layout.COMPARE_MODELS_DIR, "without --start: folder of the cells' checkpoints"
            )
            p.add_argument("--work-dir", help=f"scratch folder (default: {layout.COMPARE_WORK_DIR}/<job>)")
        if job in ("duc", "abstractive"):
            add_default(p, "--duc-dir", layout.DUC_DIR, "folder with <year>.parquet")
        if job in ("qmsum", "abstractive"):
            add_default(p, "--qmsum-dir", layout.QMSUM_DIR, "folder with <split>.parquet")
        if job == "table":
            add_default(p, "--results-root", ".", "folder the cell result paths are relative to")
            add_files(
                p, "--results", "JSON", "every cell's result file (what the rule declares); when given, read alone"
            )
            add_default(p, "--duc-baselines", layout.DUC_BASELINES_METRICS, "the duc stage's baselines JSON")
            add_default(p, "--qmsum-baselines", layout.QMSUM_BASELINES_METRICS, "the qmsum stage's baselines JSON")
            add_default(p, "--table", layout.COMPARE_TABLE, "table stem")
            add_default(p, "--metrics", layout.COMPARE_METRICS, "metrics JSON")
        add_params_arguments(p)


def main(args: argparse.Namespace) -> int:
    from wikiref.schemas import SchemaError
    from wikiref.stages import compare, finetune, pretrain
    from wikiref.stages.qmsum.stage import QmsumStageError

    try:
        return _main(args, compare)
    except (
        compare.CompareError,
        finetune.FinetuneError,
        pretrain.PretrainError,
        QmsumStageError,
        SchemaError,
    ) as exc:
        raise SystemExit(f"wikiref compare {args.job}: {exc}") from None


def _main(args: argparse.Namespace, compare) -> int:
    job = "table" if args.job == "plan" else args.job
    params = params_from_args(args, *job_keys("compare", job))
    if args.job == "plan":
        print("\n".join(f"cell {c.id}" for c in (*compare.cells(params), *compare.abstractive_cells(params))))
        return 0
    if args.job == "oracle":
        in_dir = Path(args.in_dir or layout.SOURCE_DIR.format(source=args.source))
        inputs = named_inputs(args, layout.SPLITS) or {
            s: layout.in_folder(in_dir, layout.SOURCE_SPLIT, source=args.source, split=s) for s in layout.SPLITS
        }
        outputs = dict(compare.oracle_files(args.source, args.oracle_root))
        outputs["metrics"] = args.metrics or layout.COMPARE_ORACLE_METRICS.format(source=args.source)
        m = compare.oracle(params, inputs, outputs, source=args.source, threads=args.threads)
        sizes = {s: v["examples"] for s, v in m["splits"].items()}
        print(f"compare oracle {args.source}: {sizes}{standin_label(m)} -> {args.oracle_root}/{args.source}")
        return 0
    if args.job == "table":
        files = compare.result_files(params)
        if args.results:
            missing = sorted({f for v in files.values() for f in v} - {str(Path(f)) for f in args.results})
            if missing:
                raise SystemExit(f"wikiref compare table: --results lacks {', '.join(missing)}")
            inputs = {k: list(v) for k, v in files.items()}
        else:
            inputs = {k: [str(Path(args.results_root) / f) for f in v] for k, v in files.items()}
        inputs.update(duc_baselines=args.duc_baselines, qmsum_baselines=args.qmsum_baselines)
        m = compare.table(params, inputs, {"table": args.table, "metrics": args.metrics})
        print(f"compare table: {len(m['rows'])} rows{standin_label(m)} -> {args.table}.md")
        for f in m["findings"]:
            print(f"  {f['text']}")
        return 0

    set_torch_threads(args)
    progress = not args.no_progress
    if args.job == "abstractive":
        return _abstractive(args, params, compare, progress)
    cell = compare.parse_cell(args.cell)
    templates = {
        "pretrain": layout.COMPARE_PRETRAIN_RESULT,
        "duc": layout.COMPARE_DUC_RESULT,
        "qmsum": layout.COMPARE_QMSUM_RESULT,
    }
    out = args.out or templates[args.job].format(cell=cell.id)
    if args.job == "pretrain":
        inputs = _listed(files_by_keys(args, compare.pretrain_input_keys(params, cell.id))) or compare.pretrain_inputs(
            params, cell.id, args.oracle_root
        )
        outputs = {"model_dir": Path(args.model_dir or compare.model_dir(cell)), "result": out}
        r = compare.pretrain(params, inputs, outputs, cell=cell, progress=progress)
        print(
            f"{cell.id}: {r['examples']} examples {r['examples_by_source']}, {r['optimizer_steps']} steps, "
            f"dev R-2 {r['dev_rouge2']:.2f}{standin_label(r)}"
        )
        return 0
    work = Path(args.work_dir or Path(layout.COMPARE_WORK_DIR.format(cell=cell.id)) / args.job)
    if args.job == "duc":
        inputs = {
            "years": duc_year_files(args, params["duc"]["years"], args.duc_dir),
            "start": _start(args, compare, cell),
        }
        r = compare.duc(params, inputs, {"work_dir": work, "result": out}, cell=cell, progress=progress)
        for mode, per_year in r["modes"].items():
            r2 = " ".join(f"{y}:{v['recall']['ROUGE-2']:.2f}" for y, v in per_year.items())
            print(f"{cell.id} DUC {mode}: R-2 recall {r2}{standin_label(r)}")
        return 0
    inputs = named_inputs(args, layout.SPLITS) or {
        s: layout.in_folder(args.qmsum_dir, layout.QMSUM_SPLIT, split=s) for s in layout.SPLITS
    }
    inputs["start"] = _start(args, compare, cell)
    r = compare.qmsum(params, inputs, {"work_dir": work, "result": out}, cell=cell, progress=progress)
    for mode, per_setting in r["modes"].items():
        r2 = " ".join(f"{s}:{v['rouge']['rouge2']['f1']:.2f}" for s, v in per_setting.items())
        print(f"{cell.id} QMSum {mode}: R-2 F1 {r2}{standin_label(r)}")
    return 0


def _listed(files: dict[str, dict] | None) -> dict[str, list[str]] | None:
    """role -> its files in key order (the lists the compare jobs read), or None."""
    return None if files is None else {role: list(by_key.values()) for role, by_key in files.items()}


def _start(args: argparse.Namespace, compare, cell) -> list[str]:
    """The files a DUC / QMSum job starts from: --start, or the cell's checkpoint files in --models-root."""
    return compare.start_files(cell, args.models_root) if args.start is None else list(args.start)


def _abstractive(args: argparse.Namespace, params, compare, progress: bool) -> int:
    cell = compare.parse_abstractive_cell(args.cell)
    keys = compare.abstractive_input_keys(params, cell.id)
    inputs = _listed(files_by_keys(args, keys))
    if inputs is None:
        inputs = compare.abstractive_inputs(params, cell.id, args.oracle_root)
        inputs["years"] = [layout.in_folder(args.duc_dir, layout.DUC_YEAR, year=y) for y in keys["years"]]
        inputs["qmsum_test"] = [layout.in_folder(args.qmsum_dir, layout.QMSUM_SPLIT, split="test")]
    outputs = {
        "model_dir": Path(args.model_dir or compare.model_dir_of(cell.id)),
        "result": args.out or layout.COMPARE_ABSTRACTIVE_RESULT.format(cell=cell.id),
    }
    r = compare.abstractive(params, inputs, outputs, cell=cell.id, progress=progress)
    r2 = " ".join(f"{y}:{v['recall']['ROUGE-2']:.2f}" for y, v in r["duc"]["years"].items())
    qm = f", QMSum R-2 F1 {r['qmsum']['rouge']['rouge2']['f1']:.2f}" if "qmsum" in r else ""
    print(
        f"{cell.id}: {r['examples']} examples, {r['optimizer_steps']} steps; DUC R-2 recall {r2}{qm}{standin_label(r)}"
    )
    return 0
