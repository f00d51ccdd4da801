"""Agreement of wikiref.rouge.official with ROUGE-1.5.5.pl on many random configurations.

For each flag set, N random evaluation configurations (1-8 topics, 1-4 references, 1-3 peers,
SPL/SEE, optional NIST-style jackknife lists, messy text: hyphens, punctuation, non-ASCII bytes,
odd whitespace, empty lines) are scored by the Perl script and by the Python scorer. Prints one JSON
line per flag set: cases, per-Eval R/P/F triples compared, the largest absolute difference per
measure and field, and how many Average/confidence-interval lines agree exactly.

    python bench/rouge_official.py --cases 20
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from wikiref.rouge import official as o
from wikiref.rouge.parity import (
    FLAG_SETS,
    make_config,
    parse_report,
    perl_rouge_available,
    prepare_perl_rouge,
    run_perl_rouge,
)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=20, help="random configurations per flag set")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    reason = perl_rouge_available()
    if reason:
        print(json.dumps({"bench": "rouge_official", "skipped": reason}))
        return 0
    total = {"cases": 0, "per_eval_triples": 0, "max_abs_diff": 0.0, "avg_lines": 0, "avg_lines_equal": 0}
    with tempfile.TemporaryDirectory() as tmp:
        release = prepare_perl_rouge(Path(tmp) / "perl")
        for fi, flags in enumerate(FLAG_SETS):
            rec = {
                "bench": "rouge_official",
                "flags": flags,
                "cases": 0,
                "perl_errors_matched": 0,
                "per_eval_triples": {},
                "max_abs_diff": {},
                "avg_lines": 0,
                "avg_lines_equal": 0,
                "perl_s": 0.0,
                "python_s": 0.0,
            }
            for c in range(args.cases):
                seed = args.seed + 1000 * fi + c
                root = Path(tmp) / f"case{seed}"
                cfg = make_config(root, seed, non_empty_models="-w" in flags)
                t0 = time.perf_counter()
                try:
                    perl = run_perl_rouge(release, cfg, flags + " -a -d")
                except o.RougeError:
                    perl = None
                t1 = time.perf_counter()
                try:
                    opts = o.Options.from_flags(flags)
                    evals, peers = o.read_config(cfg)
                    results = o.evaluate(evals, sorted(peers), opts, warn=lambda m: None)
                    py = o.format_report(results, opts, per_eval=True)
                except o.RougeError:
                    py = None
                t2 = time.perf_counter()
                rec["cases"] += 1
                if perl is None or py is None:
                    assert perl is None and py is None, f"only one side failed (seed {seed}, {flags})"
                    rec["perl_errors_matched"] += 1
                    continue
                rec["perl_s"] += t1 - t0
                rec["python_s"] += t2 - t1
                a, b = parse_report(perl), parse_report(py)
                assert a["eval"].keys() == b["eval"].keys(), f"different evaluations (seed {seed})"
                for key, (r, p, f) in a["eval"].items():
                    measure = key[1]
                    rec["per_eval_triples"][measure] = rec["per_eval_triples"].get(measure, 0) + 1
                    for name, x, y in zip("RPF", (r, p, f), b["eval"][key]):
                        d = abs(float(x) - float(y))
                        k = f"{measure} {name}"
                        rec["max_abs_diff"][k] = max(rec["max_abs_diff"].get(k, 0.0), d)
                rec["avg_lines"] += len(a["avg"]) + len(a["counts"])
                rec["avg_lines_equal"] += sum(1 for k, v in a["avg"].items() if b["avg"].get(k) == v)
                rec["avg_lines_equal"] += sum(1 for k, v in a["counts"].items() if b["counts"].get(k) == v)
            rec["perl_s"] = round(rec["perl_s"], 2)
            rec["python_s"] = round(rec["python_s"], 2)
            print(json.dumps(rec), flush=True)
            total["cases"] += rec["cases"]
            total["per_eval_triples"] += sum(rec["per_eval_triples"].values())
            total["max_abs_diff"] = max([total["max_abs_diff"], *rec["max_abs_diff"].values()])
            total["avg_lines"] += rec["avg_lines"]
            total["avg_lines_equal"] += rec["avg_lines_equal"]
    print(json.dumps({"bench": "rouge_official", "total": total}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
