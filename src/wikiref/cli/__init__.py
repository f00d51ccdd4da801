"""``wikiref`` command line: one subcommand per pipeline stage (the same name as its rules file and module).

Each subcommand lives in ``wikiref.cli.<module>`` and defines ``HELP`` (one line), ``DESCRIPTION``
(what goes in, what comes out), ``add_arguments(parser)`` and ``main(args) -> int``. Heavy imports
(torch, spaCy) happen inside ``main`` so ``wikiref --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from wikiref import __version__, layout
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import NAMES, job_keys

# Subcommands that are tools rather than stages: (subcommand, module under wikiref.cli).
TOOLS: list[tuple[str, str]] = [
    ("rouge155", "rouge155"),
    ("params", "params"),
    ("dvc-yaml", "dvc_yaml"),
    ("export", "export"),
]
# (subcommand, module under wikiref.cli): one per stage, in pipeline order (wikiref.registry.NAMES), then the tools.
COMMANDS: list[tuple[str, str]] = [(name, name) for name in NAMES] + TOOLS


def add_torch_arguments(parser: argparse.ArgumentParser) -> None:
    """``--threads`` / ``--no-progress`` for the steps that run PyTorch (pretrain, finetune, ablations)."""
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bars")


def set_torch_threads(args: argparse.Namespace) -> None:
    """Apply ``--threads`` (0 leaves torch's default)."""
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)


def add_default(parser: argparse.ArgumentParser, flag: str, default: Any, help: str, **kwargs: Any) -> None:
    """The option ``flag`` with ``default``, shown at the end of its help: ``<help> (default: <default>)``."""
    parser.add_argument(flag, default=default, help=f"{help} (default: %(default)s)", **kwargs)


def add_files(parser: argparse.ArgumentParser, flag: str, metavar: str, help: str, **kwargs: Any) -> None:
    """The option ``flag`` taking one or more files, shown as ``metavar``."""
    parser.add_argument(flag, nargs="+", metavar=metavar, help=help, **kwargs)


def add_start(parser: argparse.ArgumentParser, what: str, instead_of: str) -> None:
    """``--start [FILE ...]``: the files a job starts from (what its rule declares: ``what``), read instead of
    the folder options ``instead_of`` when given; none (a bare ``--start``) means it starts from none."""
    parser.add_argument(
        "--start", nargs="*", metavar="FILE", help=f"{what}; when given, {instead_of} not read for them"
    )


def _named_file(text: str) -> tuple[str, str]:
    name, sep, path = text.partition("=")
    if not sep or not name or not path:
        raise argparse.ArgumentTypeError(f"expected NAME=FILE, got {text!r}")
    return name, path


def add_inputs(parser: argparse.ArgumentParser, names: str, instead_of: str) -> None:
    """``--inputs NAME=FILE ...``: the job's input files by name (``names`` says which), the files its rule
    declares, read instead of the folder options ``instead_of`` when given. A dotted name nests:
    ``duc.2005=results/duc/2005.parquet`` is ``{"duc": {"2005": ...}}`` (:func:`named_inputs`)."""
    parser.add_argument(
        "--inputs",
        nargs="+",
        type=_named_file,
        metavar="NAME=FILE",
        help=f"the input files by name: {names}; when given, {instead_of} not read for them",
    )


def named_args(files: Mapping[str, Any], *names: str) -> list[str]:
    """``NAME=FILE`` for each of ``names`` in ``files`` (a rule's named inputs): what ``--inputs`` takes."""
    return [f"{name}={files[name]}" for name in names]


def keyed_args(group: str, keys: Sequence, files: Sequence[str]) -> list[str]:
    """``GROUP.KEY=FILE`` for files declared as one list, one per key in order (e.g. the DUC years)."""
    files = list(files)
    if len(files) != len(keys):
        raise ValueError(f"{group}: {len(files)} files for {len(keys)} keys")
    return [f"{group}.{key}={file}" for key, file in zip(keys, files, strict=True)]


def roles_args(keys: Mapping[str, Sequence], files: Mapping[str, Sequence[str]]) -> list[str]:
    """:func:`keyed_args` of every role of ``keys`` (role -> its keys) with its list of ``files``."""
    return [arg for role, role_keys in keys.items() for arg in keyed_args(role, role_keys, files[role])]


def named_inputs(args: argparse.Namespace, required: Sequence[str]) -> dict | None:
    """The files ``--inputs`` named (:func:`add_inputs`) as a nested dict, or None when it was not given.
    Every name of ``required`` (a top-level name) must be there and no other: a missing or an unknown name
    is a :class:`~wikiref.config.ParamsError` that says which."""
    from wikiref.config import ParamsError

    pairs = getattr(args, "inputs", None)
    if pairs is None:
        return None
    out: dict = {}
    for name, path in pairs:
        head, *rest = name.split(".")
        if rest:
            sub = out.setdefault(head, {})
            if not isinstance(sub, dict):
                raise ParamsError(f"--inputs names {head!r} both as a file and as a group")
            sub[".".join(rest)] = path
        elif head in out:
            raise ParamsError(f"--inputs names {head!r} twice")
        else:
            out[head] = path
    missing = [n for n in required if n not in out]
    unknown = [n for n in out if n not in required]
    if missing or unknown:
        raise ParamsError(
            f"--inputs: missing {missing or 'none'}, unknown {unknown or 'none'} (expected {list(required)})"
        )
    return out


def files_by_keys(args: argparse.Namespace, keys: Mapping[str, Sequence]) -> dict[str, dict] | None:
    """role -> {key: file} from ``--inputs <role>.<key>=FILE`` (:func:`add_inputs`) for the ``keys`` of each role
    (the keys as given, e.g. int years), or None when ``--inputs`` was not given. A role with no keys is empty
    and takes no files; a missing file is a :class:`~wikiref.config.ParamsError` that names it."""
    from wikiref.config import ParamsError

    named = named_inputs(args, [role for role, role_keys in keys.items() if role_keys])
    if named is None:
        return None
    out = {role: {k: named.get(role, {}).get(str(k)) for k in role_keys} for role, role_keys in keys.items()}
    missing = [f"{role}.{k}" for role, files in out.items() for k, f in files.items() if f is None]
    if missing:
        raise ParamsError(f"--inputs lacks {', '.join(missing)}")
    return out


def duc_year_files(args: argparse.Namespace, years: Sequence, folder: str, group: str = "duc") -> dict:
    """year -> its DUC table: ``--inputs <group>.<year>=FILE`` (:func:`add_inputs`; every year of ``years``,
    no other input) when given, else ``<year>.parquet`` in ``folder``."""
    named = files_by_keys(args, {group: list(years)})
    if named is None:
        return {y: layout.in_folder(folder, layout.DUC_YEAR, year=y) for y in years}
    return named[group]


def add_jobs(
    parser: argparse.ArgumentParser, jobs: Mapping[str, str], descriptions: Mapping[str, str] | None = None
) -> dict[str, argparse.ArgumentParser]:
    """One sub-command per job (name -> its one line: its help and, unless ``descriptions`` gives one,
    its description); the chosen one is ``args.job``."""
    sub = parser.add_subparsers(dest="job", required=True, metavar="<job>")
    descriptions = descriptions or {}
    return {job: sub.add_parser(job, help=text, description=descriptions.get(job, text)) for job, text in jobs.items()}


# A job of :func:`add_param_jobs` / :func:`run_job`: (run(args, params), help, what it does).
Job = tuple[Callable[[argparse.Namespace, dict], None], str, str]


def add_param_jobs(
    parser: argparse.ArgumentParser, step: str, jobs: Mapping[str, Job]
) -> dict[str, argparse.ArgumentParser]:
    """:func:`add_jobs` for jobs that :func:`run_job` runs: each with the params arguments and the
    description ``<what it does> (see `wikiref <step> --help`).``."""
    parsers = add_jobs(
        parser,
        {job: text for job, (_, text, _) in jobs.items()},
        {job: f"{what} (see `wikiref {step} --help`)." for job, (_, _, what) in jobs.items()},
    )
    for job_parser in parsers.values():
        add_params_arguments(job_parser)
    return parsers


def run_job(
    args: argparse.Namespace, step: str, jobs: Mapping[str, Job], *failures: tuple[tuple[type[Exception], ...], int]
) -> int:
    """Run the chosen job with the parameters it reads (:func:`wikiref.registry.job_keys`) and return 0. An
    error of one of the ``(types, return code)`` failures (the first that matches), or else one of bad input
    that any job can meet (:func:`input_errors`, return code 1), is printed as ``wikiref <step> <job>: <error>``
    and its return code is returned instead."""
    failures = (*failures, (input_errors(), 1))
    run = jobs[args.job][0]
    try:
        run(args, params_from_args(args, *job_keys(step, args.job)))
    except tuple(t for types, _ in failures for t in types) as exc:
        code = next(code for types, code in failures if isinstance(exc, types))
        print(f"wikiref {step} {args.job}: {exc}", file=sys.stderr)
        return code
    return 0


def standin_label(metrics: Mapping) -> str:
    """`` (STAND-IN)`` when a job's ``metrics`` say its data is a stand-in (its ``standin`` entry), else ``""``:
    the suffix of every job's summary line."""
    return " (STAND-IN)" if metrics.get("standin") else ""


def input_errors() -> tuple[type[Exception], ...]:
    """The errors of bad input that any job can meet: a table that breaks its schema, an example that breaks
    the common one, a missing file."""
    from wikiref.examples import ExampleError
    from wikiref.schemas import SchemaError

    return (SchemaError, ExampleError, FileNotFoundError)


def add_split_folder(parser: argparse.ArgumentParser, flag: str, source: str) -> None:
    """The option ``flag``: the folder of ``source``'s split files (default: its folder in the layout)."""
    add_default(parser, flag, layout.SOURCE_DIR.format(source=source), "folder of the split files")


def split_files(folder: str, source: str) -> dict[str, str]:
    """split -> ``source``'s split file in ``folder``."""
    return {s: str(layout.in_folder(folder, layout.SOURCE_SPLIT, source=source, split=s)) for s in layout.SPLITS}


def add_source_outputs(parser: argparse.ArgumentParser, source: str, table: str, metrics: str) -> None:
    """``--out-dir`` (:func:`add_split_folder`), ``--table`` (a stem) and ``--metrics``, by default ``table`` and
    ``metrics``: the outputs of the job that writes ``source`` (:func:`source_outputs`)."""
    add_split_folder(parser, "--out-dir", source)
    add_default(parser, "--table", table, "table stem")
    add_default(parser, "--metrics", metrics, "metrics JSON")


def source_outputs(args: argparse.Namespace, source: str) -> dict:
    """The outputs :func:`add_source_outputs` asked for: ``splits`` (split -> file), ``table``, ``metrics``."""
    return {"splits": split_files(args.out_dir, source), "table": args.table, "metrics": args.metrics}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wikiref",
        description=(
            "WikiRef reproduction pipeline. Each subcommand is one stage of the Snakemake workflow "
            "(see `snakemake -n` for the DAG); run `wikiref <stage> --help` for its jobs, inputs and outputs."
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Stages in order: " + " -> ".join(NAMES),
    )
    parser.add_argument("--version", action="version", version=f"wikiref {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = parser.add_subparsers(dest="command", metavar="<stage>")
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
