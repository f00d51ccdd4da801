"""`wikiref oracle` (not implemented yet: issue #4)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "greedy oracle labels and per-sentence regression targets"
DESCRIPTION = """In: data/split/<split>.parquet. Out: data/oracle/<split>.parquet

NOT IMPLEMENTED YET (issue #4): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #4 delivers this step; no output was written")
