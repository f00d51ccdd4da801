"""Benchmark summary: what a finished workflow run cost, per rule, from Snakemake's benchmark files.

Every rule writes ``logs/benchmarks/**.tsv`` (Snakemake ``benchmark:``: wall seconds, CPU seconds,
peak memory). This script reads them in a run folder and prints one JSON line per rule (jobs, wall
and CPU seconds summed, the slowest job) and a last line with the totals. CPU seconds are the steadier
figure on a shared machine: on an idle machine with N cores the run needs about max(longest chain of
wall times, total CPU / N).

    python bench/workflow_cost.py /tmp/sample-run            # a run of the default profile
    python bench/workflow_cost.py /tmp/sample-run --prefix ablation   # only the ablation cells
    python bench/workflow_cost.py /tmp/sample-run --compare  # + the source comparison per grid cell

``--compare`` adds one JSON line per cell of the source comparison (wall and CPU seconds of its
pre-training, DUC and QMSum jobs, its training windows and measured windows/s) and a last line for the
grid of a paper-scale profile (``--paper-params``, default config/paper.yaml): its number of cells and
jobs, the training windows of its equal-budget cells (steps x batch), the CPU-hours they take at the
windows/s measured in this run, and GPU-hours at ``--gpu-windows-per-second`` (a rate measured on the
GPU you will use, e.g. with bench/train.py there, or ``--rates gpu-rates.json`` as written by
``make gpu-check`` on that GPU; no GPU exists here, so without it the GPU figure is null rather than a guess).
docs/gpu.md quotes one H100's 380 windows/s (bert-base shape, 512 tokens) until measured figures replace it. Natural-budget cells depend on the real sources' sizes and are counted, not
estimated.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
from collections import defaultdict
from pathlib import Path


def rules_from_logs(run_dir: Path) -> dict[str, str]:
    """benchmark path -> rule name, from the Snakemake logs of the run (``.snakemake/log``)."""
    out: dict[str, str] = {}
    for log in sorted((run_dir / ".snakemake" / "log").glob("*.snakemake.log")):
        rule = None
        for line in log.read_text(errors="replace").splitlines():
            m = re.match(r"^(?:local)?rule (\w+):$", line.strip())
            if m:
                rule = m.group(1)
            m = re.match(r"^benchmark: (.+)$", line.strip())
            if m and rule:
                out[m.group(1)] = rule
    return out


def _bench_row(path: Path) -> dict | None:
    if not path.exists():
        return None
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    return rows[-1] if rows else None


def compare_lines(run_dir: Path, paper_params: Path, gpu_rate: float | None) -> list[dict]:
    """Per cell of the source comparison: the cost of its jobs; then the paper grid's estimate."""
    from wikiref import config, layout
    from wikiref.stages import compare

    out: list[dict] = []
    rates = []
    for res in sorted((run_dir / layout.COMPARE_RESULTS / "duc").glob("*.json")):
        cell = res.stem
        line: dict = {"cell": cell, "wall_s": 0.0, "cpu_s": 0.0}
        for job in ("pretrain", "duc", "qmsum"):
            row = _bench_row(run_dir / layout.benchmark_file(f"compare/{job}_{cell}"))
            if row is not None:
                line[f"{job}_wall_s"] = round(float(row["s"]), 1)
                line["wall_s"] += float(row["s"])
                line["cpu_s"] += float(row.get("cpu_time") or 0.0)
        pre = run_dir / layout.COMPARE_PRETRAIN_RESULT.format(cell=cell)
        if pre.exists():
            r = json.loads(pre.read_text())
            line.update(examples=r["examples"], optimizer_steps=r["optimizer_steps"], train_windows=r["train_windows"])
            line["windows_per_second"] = r["windows_per_second"]
            rates.append(float(r["windows_per_second"]))
        line["wall_s"], line["cpu_s"] = round(line["wall_s"], 1), round(line["cpu_s"], 1)
        out.append(line)
    for res in sorted((run_dir / layout.COMPARE_RESULTS / "abstractive").glob("*.json")):
        # An abstractive cell (the model axis): one job, training + DUC + QMSum decoding.
        r = json.loads(res.read_text())
        line = {"cell": res.stem, "wall_s": 0.0, "cpu_s": 0.0}
        row = _bench_row(run_dir / layout.benchmark_file(f"compare/abstractive_{res.stem}"))
        if row is not None:
            line.update(wall_s=round(float(row["s"]), 1), cpu_s=round(float(row.get("cpu_time") or 0.0), 1))
        line.update(examples=r["examples"], optimizer_steps=r["optimizer_steps"])
        line["train_tokens_per_second"] = r["train_tokens_per_second"]
        out.append(line)
    run_params = run_dir / "params.yaml"
    measured_tokens = None
    if run_params.exists():
        rp = config.load_params(run_params)
        measured_tokens = rp["compare"]["budget"]["max_length"] or rp["model"]["max_length"]
    params = config.load_params(config.REPO_ROOT / config.DEFAULT_PARAMS, [paper_params])  # an overlay of params.yaml
    cells = compare.cells(params)
    pre = params["pretrain"]
    batch = pre["batch_size"] * pre["grad_accum_steps"] * pre.get("nproc_per_node", 1)
    equal = [c for c in cells if c.budget == "equal"]
    windows = len(equal) * params["compare"]["equal"]["steps"] * batch
    rate = sorted(rates)[len(rates) // 2] if rates else None  # the median cell's measured windows/s
    out.append(
        {
            "cell": "PAPER_GRID",
            "profile": params["profile"]["name"],
            "cells": len(cells),
            "pretrain_jobs": sum(1 for c in cells if c.trains),
            "duc_jobs": len(cells),
            "qmsum_jobs": len(cells),
            "abstractive_jobs": len(compare.abstractive_cells(params)),
            "equal_cells": len(equal),
            "natural_cells": sum(1 for c in cells if c.budget == "natural"),
            "equal_training_windows": windows,
            "window_tokens": params["compare"]["budget"]["max_length"] or params["model"]["max_length"],
            "measured_windows_per_second": rate,
            # The rate is this run's (its window length and encoder); longer windows cost more per window.
            "measured_window_tokens": measured_tokens,
            "cpu_hours_at_measured_rate": round(windows / rate / 3600, 1) if rate else None,
            "gpu_windows_per_second": gpu_rate,
            "gpu_hours": round(windows / gpu_rate / 3600, 2) if gpu_rate else None,
        }
    )
    return out


def gpu_rate_from(path: Path, key: str) -> float:
    """A training windows/s measured on the GPU (``scripts/gpu-check --rates``); a clear error when absent."""
    rates = json.loads(Path(path).read_text())
    if not isinstance(rates.get(key), (int, float)) or rates[key] <= 0:
        raise SystemExit(f"{path}: no positive rate {key!r} (has {sorted(k for k in rates if k != 'device')})")
    return float(rates[key])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", nargs="?", default=".", help="the folder Snakemake ran in (default: here)")
    ap.add_argument("--prefix", default="", help="only rules whose name starts with this")
    ap.add_argument("--compare", action="store_true", help="+ the source comparison per cell and the paper grid")
    ap.add_argument(
        "--paper-params",
        default="config/paper.yaml",
        help="the paper-scale profile, merged over params.yaml (--compare)",
    )
    ap.add_argument("--gpu-windows-per-second", type=float, help="training windows/s measured on your GPU")
    ap.add_argument("--rates", type=Path, help="rates JSON written by scripts/gpu-check --rates on your GPU")
    ap.add_argument(
        "--rates-key",
        default="finetune_windows_per_second_bert-base",
        help="which rate of --rates is the paper profile's encoder (default: the bert-base shape)",
    )
    args = ap.parse_args(argv)
    if args.rates and args.gpu_windows_per_second is None:
        args.gpu_windows_per_second = gpu_rate_from(args.rates, args.rates_key)
    run_dir = Path(args.run_dir)
    root = run_dir / "logs" / "benchmarks"
    names = rules_from_logs(run_dir)
    if not root.is_dir():
        raise SystemExit(f"{root} not found: run the workflow there first")
    per: dict[str, dict] = defaultdict(
        lambda: {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0, "max_wall_s": 0.0, "max_rss_mb": 0.0}
    )
    for path in sorted(root.rglob("*.tsv")):
        with open(path, newline="") as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        if not rows:
            continue
        row = rows[-1]  # the last run of this job
        rule = names.get(path.relative_to(run_dir).as_posix(), path.relative_to(root).with_suffix("").as_posix())
        if not rule.startswith(args.prefix):
            continue
        d = per[rule]
        wall, cpu = float(row["s"]), float(row.get("cpu_time") or 0.0)
        d["jobs"] += 1
        d["wall_s"] += wall
        d["cpu_s"] += cpu
        d["max_wall_s"] = max(d["max_wall_s"], wall)
        d["max_rss_mb"] = max(d["max_rss_mb"], float(row.get("max_rss") or 0.0))
    total = {"jobs": 0, "wall_s": 0.0, "cpu_s": 0.0}
    for rule in sorted(per):
        d = per[rule]
        print(json.dumps({"rule": rule, **{k: round(v, 1) if isinstance(v, float) else v for k, v in d.items()}}))
        for k in total:
            total[k] += d[k]
    print(json.dumps({"rule": "TOTAL", **{k: round(v, 1) if isinstance(v, float) else v for k, v in total.items()}}))
    if args.compare:
        for line in compare_lines(run_dir, Path(args.paper_params), args.gpu_windows_per_second):
            print(json.dumps(line))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
