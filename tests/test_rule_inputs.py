"""Rules pass the files they declare: each job gets its input files as ``--inputs NAME=FILE ...``
(wikiref.cli.add_inputs), never a folder rebuilt from a declared file, from which the command would
re-derive file names a rule may not declare. Checked here on the rules files (a planted rebuild fails),
and the format both sides share (the Snakefile's ``named`` / ``keyed`` and the CLI's ``named_inputs``)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from wikiref.cli import add_inputs, duc_year_files, files_by_keys, keyed_args, named_args, named_inputs
from wikiref.config import ParamsError

ROOT = Path(__file__).resolve().parents[1]
RULES = sorted((ROOT / "workflow" / "rules").glob("*.smk"))

# A params entry computed from the job's inputs with os.path.dirname: a folder rebuilt from a declared file.
INPUT_FOLDER = re.compile(r"^\s*(\w+)=lambda wc, input\b.*os\.path\.dirname\(", re.M)


def input_folders(text: str) -> list[str]:
    """The params entries of a rules file that rebuild a folder from the job's declared inputs."""
    return INPUT_FOLDER.findall(text)


def test_rules_pass_declared_files_not_folders_rebuilt_from_them():
    assert len(RULES) >= 19
    found = {p.name: input_folders(p.read_text()) for p in RULES}
    assert {name: params for name, params in found.items() if params} == {}


def test_the_check_catches_a_planted_folder():
    planted = "    params:\n        data=lambda wc, input: os.path.dirname(input.train),\n"
    assert input_folders(planted) == ["data"]
    # a folder of the job's own outputs is its to write, not an input
    assert input_folders("        out_dir=lambda wc, output: os.path.dirname(output.train),\n") == []


def _parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_inputs(parser, "train, dev, duc.<year>", "the folders are")
    parser.add_argument("--duc-dir", default="data/duc")
    return parser.parse_args(list(argv))


def test_named_args_and_keyed_args_render_what_named_inputs_reads():
    argv = [
        *named_args({"train": "a/train.parquet", "dev": "a/dev.parquet"}, "train", "dev"),
        *keyed_args("duc", [2005, 2006], ["d/2005.parquet", "d/2006.parquet"]),
    ]
    args = _parse("--inputs", *argv)
    assert named_inputs(args, ("train", "dev", "duc")) == {
        "train": "a/train.parquet",
        "dev": "a/dev.parquet",
        "duc": {"2005": "d/2005.parquet", "2006": "d/2006.parquet"},
    }


def test_keyed_args_needs_one_file_per_key():
    with pytest.raises(ValueError, match="1 files for 2 keys"):
        keyed_args("duc", [2005, 2006], ["d/2005.parquet"])


def test_named_inputs_is_none_without_the_option():
    assert named_inputs(_parse(), ("train",)) is None
    assert files_by_keys(_parse(), {"duc": [2005]}) is None


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["train=a"], r"missing \['dev'\]"),
        (["train=a", "dev=b", "test=c"], r"unknown \['test'\]"),
        (["train=a", "train=b", "dev=c"], "names 'train' twice"),
        (["train=a", "train.x=b", "dev=c"], "both as a file and as a group"),
    ],
)
def test_named_inputs_names_what_is_wrong(argv, message):
    with pytest.raises(ParamsError, match=message):
        named_inputs(_parse("--inputs", *argv), ("train", "dev"))


def test_an_input_without_a_name_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        _parse("--inputs", "a/train.parquet")
    assert "expected NAME=FILE" in capsys.readouterr().err


def test_files_by_keys_keeps_the_keys_and_names_a_missing_file():
    args = _parse("--inputs", "duc.2005=x/2005.parquet", "duc.2007=x/2007.parquet")
    assert duc_year_files(args, [2005, 2007], "unused") == {2005: "x/2005.parquet", 2007: "x/2007.parquet"}
    with pytest.raises(ParamsError, match="lacks duc.2006"):
        duc_year_files(args, [2005, 2006, 2007], "unused")
    # a role without keys takes no files
    assert files_by_keys(args, {"duc": [2005, 2007], "sizes": []}) == {
        "duc": {2005: "x/2005.parquet", 2007: "x/2007.parquet"},
        "sizes": {},
    }


def test_without_inputs_the_years_come_from_the_folder():
    assert {y: str(p) for y, p in duc_year_files(_parse(), [2006], "d").items()} == {2006: "d/2006.parquet"}
