"""`wikiref collect-merge`: per-part collect stats -> results/metrics/collect.json."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments, params_from_args

HELP = "merge per-part collect stats"
DESCRIPTION = """In: data/raw/<part>.stats.json for every part in collect.dump.parts (or --stats files).
Out: results/metrics/collect.json (summed counters, reasons included, plus per-part figures)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--stats", nargs="+", required=True, help="per-part stats files")
    parser.add_argument("--out", required=True, help="merged metrics JSON")


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.collect.pipeline import check_accounting, merge_stats
    from wikiref.files import read_json, write_json

    params = params_from_args(args, "collect")
    parts = [read_json(p) for p in args.stats]
    names = [p["part"] for p in parts]
    expected = list(params["collect"]["dump"]["parts"])
    if sorted(names) != sorted(expected):
        raise SystemExit(f"collect-merge: stats cover parts {names}, params list {expected}")
    merged = merge_stats(parts)
    check_accounting(merged["total"])
    write_json(args.out, merged)
    t = merged["total"]
    print(f"{len(parts)} part(s): {t['dump']['articles']} articles, {t['examples']['written']} raw examples -> {args.out}")
    return 0
