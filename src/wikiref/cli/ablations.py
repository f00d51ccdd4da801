"""`wikiref ablations` (not implemented yet: issue #7)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "data-size, quality, pooling, subnetwork and DUC-size ablations (Figs. 4-6, Tables VIII-IX)"
DESCRIPTION = """In: WikiRef oracle data and DUC. Out: results/ablations/*.json

NOT IMPLEMENTED YET (issue #7): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #7 delivers this step; no output was written")
