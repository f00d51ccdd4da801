"""`wikiref report` (not implemented yet: issue #7)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "render every table (csv/md/tex) and figure (png/svg) with profile captions"
DESCRIPTION = """In: results/metrics, results/ablations. Out: results/tables, results/figures, results/README.md

NOT IMPLEMENTED YET (issue #7): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #7 delivers this step; no output was written")
