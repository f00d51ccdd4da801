"""Benchmark summary: what a finished workflow run cost, per rule, from Snakemake's benchmark files.

Every rule writes ``logs/benchmarks/**.tsv`` (Snakemake ``benchmark:``: wall seconds, CPU seconds,
peak memory). This script reads them in a run folder and prints one JSON line per rule (jobs, wall
and CPU seconds summed, the slowest job) and a last line with the totals. CPU seconds are the steadier
figure on a shared machine: on an idle machine with N cores the run needs about max(longest chain of
wall times, total CPU / N).

    python bench/workflow_cost.py /tmp/sample-run            # a run of the default profile
    python bench/workflow_cost.py /tmp/sample-run --prefix ablation   # only the ablation cells
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


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", help="the folder Snakemake ran in (--directory)")
    ap.add_argument("--prefix", default="", help="only rules whose name starts with this")
    args = ap.parse_args(argv)
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
