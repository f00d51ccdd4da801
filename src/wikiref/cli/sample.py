"""`wikiref sample` (not implemented yet: issue #2)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "materialise the offline sample (real Wikipedia fragment, stand-in WARC, stand-in DUC)"
DESCRIPTION = """Out: resources/sample/

NOT IMPLEMENTED YET (issue #2): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #2 delivers this step; no output was written")
