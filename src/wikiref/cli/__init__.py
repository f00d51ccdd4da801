"""``wikiref`` command line: one subcommand per pipeline step.

Each subcommand lives in ``wikiref.cli.<module>`` and defines ``HELP`` (one line), ``DESCRIPTION``
(what goes in, what comes out), ``add_arguments(parser)`` and ``main(args) -> int``. Heavy imports
(torch, spaCy) happen inside ``main`` so ``wikiref --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from wikiref import __version__

# (subcommand, module under wikiref.cli) in pipeline order.
COMMANDS: list[tuple[str, str]] = [
    ("sample", "sample"),
    ("collect", "collect"),
    ("curate", "curate"),
    ("split", "split"),
    ("oracle", "oracle"),
    ("duc", "duc"),
    ("pretrain", "pretrain"),
    ("finetune", "finetune"),
    ("rouge155", "rouge155"),
    ("ablations", "ablations"),
    ("report", "report"),
    ("params", "params"),
    ("dvc-yaml", "dvc_yaml"),
]


def add_torch_arguments(parser: argparse.ArgumentParser) -> None:
    """``--threads`` / ``--no-progress`` for the steps that run PyTorch (pretrain, finetune, ablations)."""
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def set_torch_threads(args: argparse.Namespace) -> None:
    """Apply ``--threads`` (0 leaves torch's default)."""
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wikiref",
        description=(
            "WikiRef reproduction pipeline. Each subcommand is one step of the Snakemake workflow "
            "(see `snakemake -n` for the DAG); run `wikiref <step> --help` for its inputs and outputs."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Steps in order: sample -> collect -> curate -> split -> oracle -> pretrain -> finetune -> ablations -> report",
    )
    parser.add_argument("--version", action="version", version=f"wikiref {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="<step>")
    for name, module in COMMANDS:
        mod = importlib.import_module(f"wikiref.cli.{module}")
        p = sub.add_parser(
            name,
            help=mod.HELP,
            description=mod.DESCRIPTION,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        mod.add_arguments(p)
        p.set_defaults(_main=mod.main)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not getattr(args, "_main", None):
        parser.print_help()
        return 2
    from wikiref.config import ParamsError

    try:
        return int(args._main(args) or 0)
    except ParamsError as exc:
        print(f"wikiref {args.command}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
