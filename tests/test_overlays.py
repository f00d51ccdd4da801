"""The profiles in config/ are overlays of params.yaml: only the keys they change, every key one the schema knows.
Merging follows Snakemake's --configfile (wikiref.config.deep_merge = snakemake.utils.update_config). The job keys
of the registry name real parameters."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wikiref import config, registry

OVERLAYS = ["config/tiny.yaml", "config/paper.yaml"]


def _yaml(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8")) or {}


@pytest.fixture(scope="module")
def defaults(repo) -> dict:
    return _yaml(repo / "params.yaml")


@pytest.mark.parametrize("name", OVERLAYS)
def test_profiles_are_minimal_overlays(repo, defaults, name):
    overlay = _yaml(repo / name)
    assert config.overlay_problems(defaults, overlay) == []
    # exactly the smallest overlay that gives the merged profile (nothing repeated, nothing missing)
    merged = config.load_params(repo / "params.yaml", [repo / name])
    assert config.minimal_overlay(defaults, merged) == overlay


def _plant(tmp_path: Path, repo: Path, name: str, extra: dict) -> Path:
    """A copy of overlay ``name`` with ``extra`` merged in, written to tmp_path."""
    path = tmp_path / Path(name).name
    path.write_text(yaml.safe_dump(config.deep_merge(_yaml(repo / name), extra), sort_keys=False), encoding="utf-8")
    return path


def test_an_overlay_repeating_a_default_fails_naming_the_key_path(repo, defaults, tmp_path):
    planted = _plant(
        tmp_path,
        repo,
        "config/tiny.yaml",
        {
            "pretrain": {"epochs": defaults["pretrain"]["epochs"]},  # a scalar, in a section the overlay changes
            "duc": {"years": list(defaults["duc"]["years"])},  # a list: compared whole
            "abstractive": {"seq2seq": {"train": {"eps": defaults["abstractive"]["seq2seq"]["train"]["eps"]}}},
        },
    )
    problems = config.overlay_problems(defaults, _yaml(planted))
    assert sorted(p.split(":")[0] for p in problems) == [
        "abstractive.seq2seq.train.eps",
        "duc.years",
        "pretrain.epochs",
    ]
    assert all("repeats the default" in p for p in problems)
    # a changed list stays whole (one element differing is a change), and so does a value of another type
    assert config.overlay_problems(defaults, {"duc": {"years": [2005, 2006]}, "split": {"dev": 1}}) == []
    # an empty mapping merges to nothing (Snakemake keeps the default mapping)
    assert config.overlay_problems(defaults, {"model": {}}) == [
        "model: an empty mapping changes nothing when merged; leave it out"
    ]


def test_an_overlay_naming_an_unknown_key_fails(repo, defaults, tmp_path):
    planted = _plant(
        tmp_path,
        repo,
        "config/paper.yaml",
        {
            "curate": {"min_lemma_recal": 0.4},  # misspelt
            "abstractive": {"seq2seq": {"train": {"epoch": 3}}},  # under a $ref'd schema
            "resources": {"duc.root": {"mirror": "x"}},  # under a free-keyed section
            "nosection": {"a": 1},
        },
    )
    problems = config.overlay_problems(defaults, _yaml(planted))
    unknown = sorted(p.split(":")[0] for p in problems if "unknown parameter" in p)
    assert unknown == [
        "abstractive.seq2seq.train.epoch",
        "curate.min_lemma_recal",
        "nosection",
        "resources.duc.root.mirror",
    ]
    # the merged result's schema errors are listed too
    assert any("min_lemma_recal" in p and "unknown" not in p for p in problems)


def test_check_overlay_command(repo, tmp_path, capsys):
    from wikiref.cli import main

    assert (
        main(["params", "--params", str(repo / "params.yaml"), *(f"--check-overlay={repo / n}" for n in OVERLAYS)]) == 0
    )
    planted = _plant(tmp_path, repo, "config/tiny.yaml", {"seed": 13, "report": {"dpi_": 1}})
    assert main(["params", "--params", str(repo / "params.yaml"), "--check-overlay", str(planted)]) == 2
    err = capsys.readouterr().err
    assert "seed: repeats the default value 13" in err and "report.dpi_: unknown parameter" in err


def test_minimal_overlay_cannot_remove_keys(defaults):
    full = copy.deepcopy(defaults)
    del full["pretrain"]["lr"]
    with pytest.raises(config.ParamsError, match=r"pretrain: keys \['lr'\]"):
        config.minimal_overlay(defaults, full)


# (base, overlays) pairs covering the merge rules and Snakemake's corner cases.
MERGE_CASES = [
    ({"a": {"b": 1, "c": [1, 2]}, "d": 1}, [{"a": {"c": [3]}}]),  # a list replaces the whole list
    ({"a": {"b": {"c": 1, "d": 2}}}, [{"a": {"b": {"d": 3}, "e": 4}}]),  # nested mappings merge; new keys added
    ({"a": [1, 2]}, [{"a": {"x": 1}}]),  # a mapping over a list replaces it
    ({"a": [1, 2], "b": None}, [{"a": {}, "b": {}}]),  # an empty mapping over a non-mapping keeps it
    ({"a": {"b": 1}}, [{"a": {}}, {"a": None}]),  # an empty mapping keeps a mapping; null replaces it
    ({"a": {"b": 1}}, [{"a": 5}, {"a": {"c": 2}}]),  # several overlays, in order
    ({"a": 1}, [{"b": {}}]),  # an empty mapping where the base has no key adds it
]


def _snakemake_merge(base: dict, overlays: list[dict]) -> dict:
    """What Snakemake 9 does (snakemake.workflow.Workflow.configfile): --configfile files merged into one
    overwrite config, the global config starting as a copy of it; ``configfile:`` merges the file, then the
    overwrite config again."""
    from snakemake.utils import update_config

    overwrite: dict = {}
    for over in overlays:
        update_config(overwrite, copy.deepcopy(over))
    cfg = copy.deepcopy(overwrite)
    update_config(cfg, copy.deepcopy(base))
    update_config(cfg, overwrite)
    return cfg


@pytest.mark.parametrize("base, overlays", MERGE_CASES)
def test_deep_merge_is_snakemakes_update_config(base, overlays):
    assert config.merge_overlays(base, overlays) == _snakemake_merge(base, overlays)
    if len(overlays) == 1:
        assert config.deep_merge(base, overlays[0]) == _snakemake_merge(base, overlays)


@pytest.mark.slow  # runs Snakemake
def test_snakemake_sees_the_merged_profiles(repo, tmp_path, subprocess_env):
    """The config dict a Snakefile with `configfile: params.yaml` gets under --configfile is load_params'."""
    snakefile = tmp_path / "Snakefile"
    snakefile.write_text(
        f"import json\nconfigfile: {str(repo / 'params.yaml')!r}\n"
        "json.dump(config, open(os.environ['CONFIG_OUT'], 'w'))\n"
        "rule all:\n    run:\n        pass\n",
        encoding="utf-8",
    )
    for name in OVERLAYS:
        out = tmp_path / f"{Path(name).stem}.json"
        cmd = [sys.executable, "-m", "snakemake", "-n", "-s", str(snakefile), "--configfile", str(repo / name)]
        env = dict(subprocess_env, CONFIG_OUT=str(out))
        res = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=120)
        assert res.returncode == 0, res.stderr[-2000:]
        assert json.loads(out.read_text()) == config.load_params(repo / "params.yaml", [repo / name]), name


def test_job_keys_name_parameters_of_the_schema():
    assert registry.unknown_job_keys() == []
    planted = {**registry.JOB_KEYS, ("compare", "pretrain"): ("seed", "pretrain.lrr", "comparre.budget")}
    assert registry.unknown_job_keys(planted) == ["compare/pretrain: pretrain.lrr", "compare/pretrain: comparre.budget"]
    with pytest.raises(KeyError, match="varients"):
        registry.section_keys_except("pretrain", "varients")
