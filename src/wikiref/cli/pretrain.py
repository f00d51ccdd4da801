"""`wikiref pretrain` (not implemented yet: issue #5)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments

HELP = "pre-train BERT / Q-BERT sentence scorers on WikiRef and evaluate them (Table IV)"
DESCRIPTION = """In: data/oracle/{train,dev,test}.parquet. Out: models/pretrain/<variant>/ (safetensors + config + tokenizer), results/metrics/pretrain_<variant>.json, results/tables/table4_wikiref.*

NOT IMPLEMENTED YET (issue #5): the command exits with status 3 and writes nothing."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)


def main(args: argparse.Namespace) -> int:
    raise NotImplementedError("issue #5 delivers this step; no output was written")
