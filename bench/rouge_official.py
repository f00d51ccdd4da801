"""Agreement of wikiref.rouge.official with ROUGE-1.5.5.pl on many random configurations.

For each flag set, N random evaluation configurations (1-8 topics, 1-4 references, 1-3 peers,
SPL/SEE, optional NIST-style jackknife lists, messy text: hyphens, punctuation, non-ASCII bytes,
odd whitespace, empty lines) are scored by the Perl script and by the Python scorer. Prints one JSON
line per flag set: cases, per-Eval R/P/F triples compared, the largest absolute difference per
measure and field, and how many Average/confidence-interval lines agree exactly.

Exits 1 when anything differs: a per-Eval figure by more than half a unit of the last printed digit (that
is, the printed values differ), an Average / confidence-interval / count line, the set of evaluations, or
only one side failing on a configuration. Without a usable ROUGE-1.5.5.pl it prints the reason and exits 0,
or 1 under CI=true (a CI run must not pass without the cross-check).

    python bench/rouge_official.py --cases 20
"""

from __future__ import annotations

import argparse
import json
import os
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


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def printed_tolerance(*values: str) -> float:
    """Half a unit of the last printed digit of the least precise value ("0.12345" -> 5e-06)."""
    decimals = min(len(v.partition(".")[2]) for v in values)
    return 0.5 * 10.0**-decimals


def compare_reports(perl: str, py: str) -> dict:
    """Per-Eval R/P/F triples of the two reports (-d output), their largest absolute differences per
    "measure field", and the Average / count lines. A figure differs when the printed values differ, i.e. by
    more than :func:`printed_tolerance`; an evaluation or line printed by one side only differs too."""
    a, b = parse_report(perl), parse_report(py)
    out = {"triples": {}, "max_abs_diff": {}, "differing_figures": 0, "lines": 0, "lines_equal": 0}
    out["evals_one_side_only"] = len(a["eval"].keys() ^ b["eval"].keys())
    for key, triple in a["eval"].items():
        if key not in b["eval"]:
            continue
        measure = key[1]
        out["triples"][measure] = out["triples"].get(measure, 0) + 1
        for name, x, y in zip("RPF", triple, b["eval"][key]):
            d = abs(float(x) - float(y))
            k = f"{measure} {name}"
            out["max_abs_diff"][k] = max(out["max_abs_diff"].get(k, 0.0), d)
            if d > printed_tolerance(x, y):
                out["differing_figures"] += 1
                out.setdefault("first_difference", {"eval": list(key), "field": name, "perl": x, "python": y})
    for part in ("avg", "counts"):
        out["lines"] += len(a[part].keys() | b[part].keys())
        out["lines_equal"] += sum(1 for k, v in a[part].items() if b[part].get(k) == v)
    return out


def run_python(cfg: Path, flags: str) -> str:
    """The Python scorer's report of ``cfg`` with per-Eval lines (what ``flags + " -a -d"`` makes Perl print)."""
    opts = o.Options.from_flags(flags)
    evals, peers = o.read_config(cfg)
    results = o.evaluate(evals, sorted(peers), opts, warn=lambda m: None)
    return o.format_report(results, opts, per_eval=True)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=20, help="random configurations per flag set")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--flag-sets", type=int, default=None, help="only the first N flag sets")
    args = ap.parse_args(argv)
    reason = perl_rouge_available()
    if reason:
        print(json.dumps({"bench": "rouge_official", "skipped": reason, "ci": in_ci()}))
        return 1 if in_ci() else 0
    total = {
        "cases": 0,
        "per_eval_triples": 0,
        "max_abs_diff": 0.0,
        "avg_lines": 0,
        "avg_lines_equal": 0,
        "differing_figures": 0,
        "evals_one_side_only": 0,
        "one_side_failed": 0,
    }
    with tempfile.TemporaryDirectory() as tmp:
        release = prepare_perl_rouge(Path(tmp) / "perl")
        for fi, flags in enumerate(FLAG_SETS[: args.flag_sets]):
            rec = {
                "bench": "rouge_official",
                "flags": flags,
                "cases": 0,
                "perl_errors_matched": 0,
                "one_side_failed": 0,
                "per_eval_triples": {},
                "max_abs_diff": {},
                "differing_figures": 0,
                "evals_one_side_only": 0,
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
                    py = run_python(cfg, flags)
                except o.RougeError:
                    py = None
                t2 = time.perf_counter()
                rec["cases"] += 1
                if perl is None and py is None:
                    rec["perl_errors_matched"] += 1
                    continue
                if perl is None or py is None:
                    rec["one_side_failed"] += 1
                    rec.setdefault("first_difference", {"seed": seed, "failed": "perl" if perl is None else "python"})
                    continue
                rec["perl_s"] += t1 - t0
                rec["python_s"] += t2 - t1
                cmp = compare_reports(perl, py)
                for measure, n in cmp["triples"].items():
                    rec["per_eval_triples"][measure] = rec["per_eval_triples"].get(measure, 0) + n
                for k, d in cmp["max_abs_diff"].items():
                    rec["max_abs_diff"][k] = max(rec["max_abs_diff"].get(k, 0.0), d)
                rec["differing_figures"] += cmp["differing_figures"]
                rec["evals_one_side_only"] += cmp["evals_one_side_only"]
                rec["avg_lines"] += cmp["lines"]
                rec["avg_lines_equal"] += cmp["lines_equal"]
                if "first_difference" in cmp or cmp["lines"] != cmp["lines_equal"] or cmp["evals_one_side_only"]:
                    rec.setdefault("first_difference", {"seed": seed, **cmp.get("first_difference", {})})
            rec["perl_s"] = round(rec["perl_s"], 2)
            rec["python_s"] = round(rec["python_s"], 2)
            print(json.dumps(rec), flush=True)
            total["cases"] += rec["cases"]
            total["per_eval_triples"] += sum(rec["per_eval_triples"].values())
            total["max_abs_diff"] = max([total["max_abs_diff"], *rec["max_abs_diff"].values()])
            total["avg_lines"] += rec["avg_lines"]
            total["avg_lines_equal"] += rec["avg_lines_equal"]
            for k in ("differing_figures", "evals_one_side_only", "one_side_failed"):
                total[k] += rec[k]
    identical = (
        total["differing_figures"] == total["evals_one_side_only"] == total["one_side_failed"] == 0
        and total["avg_lines"] == total["avg_lines_equal"]
    )
    print(json.dumps({"bench": "rouge_official", "total": total, "identical": identical}))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
