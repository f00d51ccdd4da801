"""`wikiref collect-merge` (not implemented yet: issue #3)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "merge per-part collect stats"
DESCRIPTION = """In: data/raw/*.stats.json. Out: results/metrics/collect.json

NOT IMPLEMENTED YET (issue #3): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #3 delivers this step; no output was written")
