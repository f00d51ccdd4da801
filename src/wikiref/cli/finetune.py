"""`wikiref finetune` (not implemented yet: issue #6)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "fine-tune on two DUC years and test on the third (Table VI)"
DESCRIPTION = """In: a NIST-layout DUC 2005-2007 folder (duc.root), optionally a pre-trained checkpoint. Out: models/finetune/<setting>/<year>/, results/metrics/duc_<setting>_<year>.json, results/tables/table6_duc.*

NOT IMPLEMENTED YET (issue #6): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #6 delivers this step; no output was written")
