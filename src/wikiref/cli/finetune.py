"""`wikiref finetune`: held-out-year fine-tuning on DUC and Table VI (journal §V, issue #6)."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from wikiref.cli import add_torch_arguments, set_torch_threads
from wikiref.config import add_params_arguments, params_from_args

HELP = "fine-tune on two DUC years and test on the third (Table VI), incl. sparse subnetwork fine-tuning"
DESCRIPTION = """Actions:
  run    one setting (finetune.settings[*].name) with one DUC year held out: train on the other years'
         clusters (minus a seeded dev slice used to pick the epoch), score the held-out year per
         (query, document), build 250-word summaries (duc.select) and score them with the official
         ROUGE (duc.rouge_flags)
  prune  (method: iterative) gradual magnitude pruning (Zhu & Gupta) during a WikiRef training run
         from the setting's start: the subnetwork that `run` then fine-tunes
  table  Table VI from the per-job metrics + the duc-baselines metrics; results/metrics/finetune.json

In (run): data/duc/<year>.parquet for every duc.years (duc-prepare: sentences, query levels, references,
ROUGE-2 recall targets); for init: pretrained, models/pretrain/<variant>/ and, for variant: best,
results/metrics/pretrain_<variant>.json; for method: iterative, the prune output.
Out (run): --metrics (results/metrics/duc_<setting>_<year>.json: ROUGE-1/2/SU4 R/P/F + bootstrap CIs +
per-topic recall, start checkpoint, dev selection history, subnetwork counts, seconds),
--out-dir (models/finetune/<setting>/<year>/: predictions.parquet = per-document sentence scores,
summaries.json, training.json, subnet.json; the weights too when finetune.keep_models).
In (prune): data/oracle/{train,dev}.parquet. Out: --out-dir (models/finetune/<setting>/pruned/: weights,
subnet_masks.safetensors, pruning.json).
Out (table): --table stem (results/tables/table6_duc.{csv,md,tex}, STAND-IN in the caption when duc.standin)
and --summary (results/metrics/finetune.json)."""

log = logging.getLogger(__name__)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["run", "prune", "table"])
    parser.add_argument("--setting", help="run/prune: a finetune.settings name")
    parser.add_argument("--year", type=int, help="run: the held-out (test) year")
    parser.add_argument("--data-dir", default="data/duc", help="run: folder with <year>.parquet (default: %(default)s)")
    parser.add_argument("--oracle-dir", default="data/oracle", help="prune: WikiRef oracle splits (default: %(default)s)")
    parser.add_argument("--pretrain-dir", default="models/pretrain", help="pre-trained checkpoints (default: %(default)s)")
    parser.add_argument("--metrics-dir", default="results/metrics",
                        help="pretrain_<variant>.json (run, prune) and duc_<setting>_<year>.json (table) (default: %(default)s)")
    parser.add_argument("--prune-dir", help="run (method iterative): the prune output (default: models/finetune/<setting>/pruned)")
    parser.add_argument("--out-dir", help="run: default models/finetune/<setting>/<year>; prune: models/finetune/<setting>/pruned")
    parser.add_argument("--metrics", help="run: metrics JSON (default: <metrics-dir>/duc_<setting>_<year>.json)")
    parser.add_argument("--live-dir", help="run: dvclive folder (optional)")
    parser.add_argument("--baselines", default="results/metrics/duc_baselines.json", help="table: duc-baselines metrics")
    parser.add_argument("--table", default="results/tables/table6_duc", help="table: output stem (default: %(default)s)")
    parser.add_argument("--summary", default="results/metrics/finetune.json", help="table: summary metrics JSON")
    add_torch_arguments(parser)
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    set_torch_threads(args)
    if args.action == "table":
        return _table(args)
    from wikiref.stages import finetune as ft

    sections = ("seed", "model", "finetune") + (("duc",) if args.action == "run" else ())
    params = params_from_args(args, *sections)
    known = ft.settings(params["finetune"])
    if not args.setting:
        raise SystemExit(f"wikiref finetune {args.action}: --setting is required ({', '.join(known)})")
    if args.setting not in known:
        raise SystemExit(f"unknown setting {args.setting!r}; finetune.settings define: {', '.join(known)}")
    # The pretrain section (variants, WikiRef training settings) only matters for settings that start
    # from a WikiRef checkpoint or prune on WikiRef; the rules pass it only to those.
    if args.action == "prune" or known[args.setting]["init"] == "pretrained":
        params.update(params_from_args(args, "pretrain"))
    if args.action == "prune":
        return _prune(args, params)
    return _run(args, params, known[args.setting])


def _run(args, params, setting) -> int:
    from wikiref.stages import finetune as ft
    from wikiref.files import write_json, write_parquet

    if args.year is None:
        raise SystemExit("wikiref finetune run: --year is required")
    years = list(params["duc"]["years"])
    if args.year not in years:
        raise SystemExit(f"--year {args.year} is not in duc.years {years}")
    paths = {y: Path(args.data_dir) / f"{y}.parquet" for y in years}
    missing = [str(p) for p in paths.values() if not p.exists()]
    if missing:
        raise SystemExit(f"missing {', '.join(missing)}: run `wikiref duc-prepare` (Snakemake rule duc_prepare) first")
    out_dir = Path(args.out_dir or f"models/finetune/{args.setting}/{args.year}")
    prune_dir = args.prune_dir or (f"models/finetune/{args.setting}/pruned" if setting["method"] == "iterative" else None)
    metrics, preds, summaries = ft.run_job(
        params, args.setting, args.year, paths, out_dir, pretrain_dir=args.pretrain_dir, metrics_dir=args.metrics_dir,
        prune_dir=prune_dir, live_dir=args.live_dir, progress=not args.no_progress)
    import pyarrow as pa

    write_parquet(out_dir / "predictions.parquet", pa.Table.from_pandas(preds, preserve_index=False))
    write_json(out_dir / "summaries.json", summaries)
    metrics_path = Path(args.metrics or Path(args.metrics_dir) / f"duc_{args.setting}_{args.year}.json")
    write_json(metrics_path, metrics)
    t = metrics["test"]
    print(f"finetune {args.setting} {args.year}{' (STAND-IN)' if metrics['standin'] else ''}: "
          + " ".join(f"{m.replace('ROUGE-', 'R-')}={100 * t[m]['R']:.2f}" for m in ft.MEASURES)
          + f" ({metrics['test_topics']} topics, {metrics['seconds']:.0f}s) -> {metrics_path}")
    return 0


def _prune(args, params) -> int:
    from wikiref.stages import finetune as ft

    out_dir = Path(args.out_dir or f"models/finetune/{args.setting}/pruned")
    info = ft.prune_on_wikiref(params, args.setting, args.oracle_dir, out_dir, pretrain_dir=args.pretrain_dir,
                               metrics_dir=args.metrics_dir, progress=not args.no_progress)
    print(f"pruned {args.setting}: sparsity {info['schedule']['final_sparsity']:.2f} over steps "
          f"{info['schedule']['begin_step']}..{info['schedule']['end_step']} of {info['schedule']['total_steps']}, "
          f"best epoch {info['best_epoch']} -> {out_dir}")
    return 0


def _table(args) -> int:
    from wikiref.stages import finetune as ft
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    params = params_from_args(args, "profile", "model", "finetune", "duc")
    years = sorted(params["duc"]["years"])
    chosen = list(ft.settings(params["finetune"]).values())
    jobs: dict = {}
    for s in chosen:
        for y in years:
            path = Path(args.metrics_dir) / f"duc_{s['name']}_{y}.json"
            if not path.exists():
                raise SystemExit(f"missing {path}: run `wikiref finetune run --setting {s['name']} --year {y}` first")
            jobs.setdefault(s["name"], {})[y] = read_json(path)
    if not Path(args.baselines).exists():
        raise SystemExit(f"missing {args.baselines}: run `wikiref duc-baselines` first")
    baselines = read_json(args.baselines)
    df = ft.table6(baselines, jobs, chosen, years)
    summary = ft.summary_metrics(jobs, chosen, years, baselines)
    dp, fp = params["duc"], params["finetune"]
    kind = "STAND-IN pseudo-years" if dp["standin"] else "DUC"
    title = (f"Table VI: ROUGE recall x 100 on {kind} {', '.join(map(str, years))} (held-out-year fine-tuning), "
             f"official ROUGE-1.5.5 scoring ({dp['rouge_flags']})")
    notes = (f"Each year is tested with a model fine-tuned on the other years (epoch chosen on a held-out "
             f"{fp['dev_fraction']:.0%} of their clusters; regression on each sentence's ROUGE-2 recall); sentences "
             f"scored per (query, document), ranked across the cluster, <= {dp['summary_words']} words, bigram "
             f"redundancy > {dp['select']['max_bigram_overlap']} skipped. DA = started from a WikiRef pre-trained "
             f"checkpoint (Group: its pre-training head and variant); DA PRE-TRAINED = that checkpoint without "
             f"fine-tuning; ST = only the top {fp['subnet']['fraction']:.0%} by magnitude of each encoder-layer tensor "
             f"trained. Epochs {fp['epochs']}, batch {fp['batch_size']}, lr {fp['lr']}, train clusters per year cap "
             f"{fp['max_train_clusters']}, document sentences cap {fp['max_doc_sentences']}.")
    for c in summary["comparisons"]:
        notes += (f" {c['what']}: {c['setting']} vs {c['reference']} mean R-2 {c['mean_delta_ROUGE-2']:+.2f} "
                  f"({c['years_better']}/{c['years']} years better).")
    if dp["standin"]:
        notes += " STAND-IN: the topics, documents and references are built from Wikipedia, not NIST DUC."
    write_table(df, args.table, title=title, profile=params["profile"], encoder=params["model"]["encoder"], notes=notes)
    summary.update(profile=params["profile"]["name"], standin=bool(dp["standin"]), encoder=params["model"]["encoder"])
    write_json(args.summary, summary)
    print(Path(args.table).with_suffix(".md").read_text())
    return 0
