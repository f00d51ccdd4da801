#!/usr/bin/env python3
"""Digest every output of a workflow run, or compare two runs output by output.

    python scripts/output_digest.py RUN_DIR                 # one JSON line per file: path, sha256
    python scripts/output_digest.py RUN_DIR --compare OTHER  # exit 1 when any output differs

Used to check that a refactoring changes no output: run the tiny profile before and after
(`snakemake --profile workflow/profiles/default --configfile config/tiny.yaml --directory DIR`) and
compare. Every file under data/, models/, resources/ and results/ is compared byte for byte, except
JSON files, which are compared after dropping the keys that hold wall-clock measurements (names with
`seconds`, `per_second`, `per_cpu_second`): two runs of the same code differ only there. Logs,
benchmark files, Snakemake's own state and the fetch cache are not outputs, and neither is Snakemake's HTML
report (`results/report.html`, `make sample`'s last step): it embeds every job's run time, so two runs never
give the same bytes, and what it shows from the outputs is compared in the outputs themselves.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import re
import sys
from pathlib import Path

OUTPUT_DIRS = ("data", "models", "resources", "results")
SKIP = (  # path prefixes that are not outputs
    "resources/cache/",  # the fetch cache holds timestamps of the fetches
    "results/report.html",  # `snakemake --report`: job run times inside
)
VOLATILE_KEY = re.compile(r"(^|_)seconds($|_)|per_(cpu_)?second")


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if not VOLATILE_KEY.search(k)}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".json":
        with contextlib.suppress(ValueError):  # not JSON after all: compare the bytes
            data = json.dumps(_strip(json.loads(data)), sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def digests(run_dir: Path) -> dict[str, str]:
    out = {}
    for top in OUTPUT_DIRS:
        for path in sorted((run_dir / top).rglob("*")):
            rel = path.relative_to(run_dir).as_posix()
            if path.is_file() and not rel.startswith(SKIP):
                out[rel] = digest(path)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--compare", type=Path, metavar="OTHER_RUN_DIR")
    args = ap.parse_args(argv)
    mine = digests(args.run_dir)
    if not args.compare:
        for path, h in mine.items():
            print(json.dumps({"path": path, "sha256": h}))
        return 0
    other = digests(args.compare)
    only_mine, only_other = sorted(set(mine) - set(other)), sorted(set(other) - set(mine))
    differ = sorted(p for p in set(mine) & set(other) if mine[p] != other[p])
    for p in only_mine:
        print(json.dumps({"path": p, "status": f"only in {args.run_dir}"}))
    for p in only_other:
        print(json.dumps({"path": p, "status": f"only in {args.compare}"}))
    for p in differ:
        print(json.dumps({"path": p, "status": "differs"}))
    print(
        json.dumps(
            {
                "files": len(set(mine) | set(other)),
                "identical": len(set(mine) & set(other)) - len(differ),
                "differ": len(differ),
                "missing": len(only_mine) + len(only_other),
            }
        )
    )
    return 1 if differ or only_mine or only_other else 0


if __name__ == "__main__":
    sys.exit(main())
