"""`wikiref params`: validate and show parameter files."""

from __future__ import annotations

import argparse
import sys

import yaml

from wikiref.cli import add_default
from wikiref.config import ParamsError, load_params, overlay_problems

HELP = "validate params.yaml (and optional overlays) against the schema; print the merged result"
DESCRIPTION = """Validate a parameter file against workflow/schemas/params.schema.yaml, the schema Snakemake's
validate() also uses. With --configfile, files are merged on top in order, the way
`snakemake --configfile` merges them (a profile in config/ is such an overlay: only the keys it changes).
--check-overlay checks that a file is a proper overlay: every key known to the schema, no value that repeats
the default. Exit status 2 lists every violation.

Examples:
  wikiref params                                    # check params.yaml
  wikiref params --configfile config/tiny.yaml --show
  wikiref params --configfile config/paper.yaml --show > params.yaml   # switch DVC to the paper profile
  wikiref params --check-overlay config/tiny.yaml --check-overlay config/paper.yaml
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_default(parser, "--params", "params.yaml", "base file", metavar="FILE")
    parser.add_argument("--configfile", action="append", default=[], metavar="FILE", help="overlay file(s)")
    parser.add_argument("--show", action="store_true", help="print the merged, validated parameters as YAML")
    parser.add_argument(
        "--check-overlay",
        action="append",
        default=[],
        metavar="FILE",
        help="check FILE as an overlay of the base file: keys the schema knows, no value repeating the base's",
    )


def main(args: argparse.Namespace) -> int:
    params = load_params(args.params, args.configfile)
    if args.check_overlay:
        with open(args.params, encoding="utf-8") as fh:
            base = yaml.safe_load(fh) or {}
        problems = []
        for path in args.check_overlay:
            with open(path, encoding="utf-8") as fh:
                problems += [f"  {path}: {p}" for p in overlay_problems(base, yaml.safe_load(fh) or {})]
        if problems:
            raise ParamsError("not a proper overlay of " + args.params + ":\n" + "\n".join(problems))
        print(f"ok: {', '.join(args.check_overlay)} (overlays of {args.params})")
        return 0
    if args.show:
        yaml.safe_dump(params, sys.stdout, sort_keys=False, default_flow_style=None, width=120)
    else:
        print(f"ok: {args.params}{''.join(' + ' + c for c in args.configfile)} (profile {params['profile']['name']})")
    return 0
