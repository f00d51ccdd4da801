"""`wikiref dvc-yaml`: generate dvc.yaml from the stage registry, or check it is in sync."""

from __future__ import annotations

import argparse
import difflib
import sys
from pathlib import Path

from wikiref.cli import add_default
from wikiref.config import load_params
from wikiref.files import write_text
from wikiref.registry import render_dvc_yaml

HELP = "generate dvc.yaml from the stage registry (--write) or fail if it is stale (--check)"
DESCRIPTION = """dvc.yaml is never edited by hand. It is rendered from the stage registry (src/wikiref/registry.py: one
DVC stage per pipeline stage, each running that stage's Snakemake aggregate target; code deps derived
from the imports of the stage's CLI module and rules file) and params.yaml.

  wikiref dvc-yaml --write     # regenerate dvc.yaml
  wikiref dvc-yaml --check     # exit 1 with a diff when dvc.yaml is stale (a test runs this)
  wikiref dvc-yaml             # print what dvc.yaml should contain
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_default(parser, "--params", "params.yaml", "parameter file", metavar="FILE")
    add_default(parser, "--output", "dvc.yaml", "dvc.yaml path", metavar="FILE")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the file")
    mode.add_argument("--check", action="store_true", help="exit 1 if the file differs from the registry")


def main(args: argparse.Namespace) -> int:
    text = render_dvc_yaml(load_params(args.params))
    out = Path(args.output)
    if args.write:
        write_text(out, text)
        print(f"wrote {out}")
        return 0
    if args.check:
        current = out.read_text(encoding="utf-8") if out.exists() else ""
        if current != text:
            sys.stdout.writelines(
                difflib.unified_diff(current.splitlines(True), text.splitlines(True), str(out), "expected")
            )
            print(f"\n{out} is stale: run `wikiref dvc-yaml --write`", file=sys.stderr)
            return 1
        print(f"{out} is in sync with the stage registry")
        return 0
    sys.stdout.write(text)
    return 0
