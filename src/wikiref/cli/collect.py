"""`wikiref collect` (not implemented yet: issue #3)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "one dump part -> cited statements with fetched, extracted documents"
DESCRIPTION = """In: <dump.dir>/<part>.xml.bz2. Out: data/raw/<part>.parquet + data/raw/<part>.stats.json

NOT IMPLEMENTED YET (issue #3): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #3 delivers this step; no output was written")
