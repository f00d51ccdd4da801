"""`wikiref ablations`: the journal §VI analyses as grid cells (Figs. 4-6, Tables VIII-IX)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from wikiref.cli import add_torch_arguments, set_torch_threads
from wikiref.config import add_params_arguments, params_from_args

HELP = "data-size, quality, pooling, subnetwork and DUC-size ablations (Figs. 4-6, Tables VIII-IX)"
DESCRIPTION = """Actions (one Snakemake job per cell; the cell names are Paramspace-style wildcards):
  pretrain  --aug CELL: train one augmentation model on its WikiRef subset and score it on WikiRef
            dev/test (or, prune~iterative, prune it gradually while training on WikiRef)
  finetune  --aug CELL --duc CELL: fine-tune it (or the encoder: data~none) on DUC and test on
            ablations.test_year with the official ROUGE
  collect   every cell's result -> results/metrics/ablations.json (what `wikiref report` draws)
  plan      print the cells of the current parameters (one per line)

Augmentation cells: pooling~<cls|max|mean|attention|query>_data~<size|quality|none>_amount~<0..1>
_prune~<none|iterative>_start~<encoder|da>. DUC cells: train~<all|none|YEAR>_percent~<0..100>
_method~<full|subnet|iterative|none>.
In: data/oracle/{train,dev,test}.parquet (pretrain), data/duc/<year>.parquet (finetune).
Out: models/ablations/pretrain/<aug>/ (checkpoint), results/ablations/wikiref/<aug>.json,
results/ablations/duc/<aug>/<duc>.json, results/metrics/ablations.json.
Params: seed, profile, model, pretrain, finetune, duc, ablations (ablations.budget shrinks windows,
epochs and example counts for these runs only)."""

log = logging.getLogger(__name__)
SECTIONS = ("profile", "seed", "model", "pretrain", "finetune", "duc", "ablations")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["pretrain", "finetune", "collect", "plan"])
    parser.add_argument("--aug", help="pretrain/finetune: augmentation cell")
    parser.add_argument("--duc", help="finetune: DUC cell")
    parser.add_argument("--oracle-dir", default="data/oracle", help="pretrain: WikiRef oracle splits (default: %(default)s)")
    parser.add_argument("--duc-dir", default="data/duc", help="finetune: folder with <year>.parquet (default: %(default)s)")
    parser.add_argument("--pretrain-root", default="models/ablations/pretrain",
                        help="folder of the augmentation checkpoints (default: %(default)s)")
    parser.add_argument("--model-dir", help="pretrain: default <pretrain-root>/<aug>")
    parser.add_argument("--work-dir", help="finetune: scratch folder (default: models/ablations/finetune/<aug>/<duc>)")
    parser.add_argument("--out", help="pretrain/finetune: the cell's result JSON; collect: results/metrics/ablations.json")
    parser.add_argument("--results-root", default=".", help="collect: folder the cell result paths are relative to")
    add_torch_arguments(parser)
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    from wikiref.stages import ablations as ab
    from wikiref.files import read_json, write_json

    sections = SECTIONS if args.action in ("collect", "plan") else ab.CELL_SECTIONS
    params = params_from_args(args, *sections)
    set_torch_threads(args)
    try:
        if args.action == "plan":
            pl = ab.plan(params)
            for cell in pl.aug_cells:
                print(f"pretrain {cell.id}")
            for a, d in pl.pairs():
                print(f"finetune {a.id}/{d.id}")
            return 0
        if args.action == "collect":
            root = Path(args.results_root)
            out = ab.collect(params, lambda p: read_json(root / p))
            write_json(args.out or "results/metrics/ablations.json", out)
            log.info("collected %d augmentation and %d DUC cells", out["cells"]["augmentation"], out["cells"]["duc"])
            return 0
        if not args.aug:
            raise SystemExit(f"wikiref ablations {args.action}: --aug is required")
        aug = ab.parse_aug(args.aug)
        if args.action == "pretrain":
            model_dir = Path(args.model_dir or Path(args.pretrain_root) / aug.id)
            res = ab.run_pretrain_cell(params, aug, args.oracle_dir, model_dir, pretrain_root=args.pretrain_root,
                                       progress=not args.no_progress)
            write_json(args.out or ab.wikiref_metrics_path(aug), res)
            if "wikiref" in res:
                w = res["wikiref"]["test"]
                print(f"{aug.id}: WikiRef test R-1 {w['rouge1']:.2f} R-2 {w['rouge2']:.2f} R-L {w['rougeL']:.2f} "
                      f"({res['subset']['examples']} training examples)")
            else:
                print(f"{aug.id}: pruned to sparsity {res['pruning']['schedule']['final_sparsity']:.2f}")
            return 0
        if not args.duc:
            raise SystemExit("wikiref ablations finetune: --duc is required")
        duc = ab.parse_duc(args.duc)
        work = Path(args.work_dir or f"models/ablations/finetune/{aug.id}/{duc.id}")
        res = ab.run_duc_cell(params, aug, duc, args.duc_dir, work, pretrain_root=args.pretrain_root,
                              progress=not args.no_progress)
        write_json(args.out or ab.duc_metrics_path(aug, duc), res)
        print(f"{aug.id}/{duc.id}: DUC {res['test_year']} "
              + " ".join(f"{m.replace('ROUGE-', 'R-')} {v:.2f}" for m, v in res["duc"].items())
              + f"{' (STAND-IN)' if res['standin'] else ''}")
        return 0
    except ab.AblationError as exc:
        raise SystemExit(f"wikiref ablations {args.action}: {exc}") from exc
