"""Benchmark: whole-stage throughput of `wikiref curate` (annotate one raw part + merge).

Runs the two CLI commands exactly as the Snakemake rules do, into a temporary folder, and prints
one JSON line: raw rows/s of the annotation job (spaCy + filter scores on --threads processes),
the CPU seconds it used (all worker processes; steadier than wall-clock on a shared machine), the
merge time, the rows kept, and how much of the annotation CPU the oracle filter (c) takes
(re-timed on the annotated rows) - the rest is spaCy.

    python bench/curate.py --raw data/raw/enwiki-sample.parquet --threads 2
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--raw", default="data/raw/enwiki-sample.parquet", help="raw part (default: %(default)s)")
    ap.add_argument("--params", default=str(REPO / "params.yaml"), help="parameter file (default: params.yaml)")
    ap.add_argument("--threads", type=int, default=1, help="annotation processes (default: %(default)s)")
    args = ap.parse_args(argv)

    import pyarrow.parquet as pq

    from wikiref.config import job_params, load_params
    from wikiref.registry import job_keys
    from wikiref.rouge.oracle import greedy_oracle

    params = load_params(args.params)
    exe = Path(sys.executable).parent / "wikiref"
    with tempfile.TemporaryDirectory(prefix="bench-curate-") as tmp:
        tmp = Path(tmp)
        part, stats = tmp / "part.parquet", tmp / "part.stats.json"
        cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(
            [
                str(exe),
                "curate",
                "part",
                "--params-json",
                job_params(params, *job_keys("curate", "part")),
                "--part",
                Path(args.raw).stem,
                "--raw",
                args.raw,
                "--out",
                str(part),
                "--stats",
                str(stats),
                "--threads",
                str(args.threads),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        t_part = time.perf_counter() - t0
        cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu_part = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
        t0 = time.perf_counter()
        subprocess.run(
            [
                str(exe),
                "curate",
                "merge",
                "--params-json",
                job_params(params, *job_keys("curate", "merge")),
                "--parts",
                str(part),
                "--out",
                str(tmp / "examples.parquet"),
                "--thresholds",
                str(tmp / "thresholds.json"),
                "--stats",
                str(tmp / "stats.json"),
                "--metrics",
                str(tmp / "metrics.json"),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        t_merge = time.perf_counter() - t0
        full = json.loads((tmp / "stats.json").read_text())
        ann = pq.read_table(part, columns=["doc_sentences", "statement"])
        docs, stmts = ann.column("doc_sentences").to_pylist(), ann.column("statement").to_pylist()
        t0 = time.perf_counter()
        for d, s in zip(docs, stmts):
            greedy_oracle(d, s, metric="rouge2_recall", max_sentences=params["curate"]["oracle_max_sentences"])
        t_oracle = time.perf_counter() - t0
    rows = full["rows_in"]
    print(
        json.dumps(
            {
                "bench": "curate",
                "raw": args.raw,
                "threads": args.threads,
                "cpu_count": os.cpu_count(),
                "raw_rows": rows,
                "kept": full["kept"],
                "annotate_seconds": round(t_part, 2),
                "annotate_rows_per_s": round(rows / t_part, 2),
                "annotate_cpu_seconds": round(cpu_part, 2),
                "annotate_rows_per_cpu_second": round(rows / cpu_part, 2),
                "merge_seconds": round(t_merge, 2),
                "stage_rows_per_s": round(rows / (t_part + t_merge), 2),
                "oracle_c_seconds_one_core": round(t_oracle, 2),
                "oracle_c_share_of_annotate_cpu": round(t_oracle / cpu_part, 4),
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
