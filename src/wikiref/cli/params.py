"""`wikiref params`: validate and show parameter files."""

from __future__ import annotations

import argparse
import sys

import yaml

from wikiref.cli import add_default
from wikiref.config import load_params

HELP = "validate params.yaml (and optional overlays) against the schema; print the merged result"
DESCRIPTION = """Validate a parameter file against workflow/schemas/params.schema.yaml, the schema Snakemake's
validate() also uses. With --configfile, files are merged on top in order, the way
`snakemake --configfile` merges them. Exit status 2 lists every violation.

Examples:
  wikiref params                                    # check params.yaml
  wikiref params --configfile config/tiny.yaml --show
  wikiref params --configfile config/paper.yaml --show > params.yaml   # switch DVC to the paper profile
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_default(parser, "--params", "params.yaml", "base file", metavar="FILE")
    parser.add_argument("--configfile", action="append", default=[], metavar="FILE", help="overlay file(s)")
    parser.add_argument("--show", action="store_true", help="print the merged, validated parameters as YAML")


def main(args: argparse.Namespace) -> int:
    params = load_params(args.params, args.configfile)
    if args.show:
        yaml.safe_dump(params, sys.stdout, sort_keys=False, default_flow_style=None, width=120)
    else:
        print(f"ok: {args.params}{''.join(' + ' + c for c in args.configfile)} (profile {params['profile']['name']})")
    return 0
