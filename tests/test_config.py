"""params.yaml, the profiles and the schema."""

from __future__ import annotations

import argparse
import json

import pytest
import yaml

from wikiref import config

PROFILES = ["params.yaml", "config/tiny.yaml", "config/paper.yaml"]


def _profile(repo, name: str) -> dict:
    """A profile's parameters: params.yaml, or params.yaml with the overlay ``name`` merged over it."""
    return config.load_params(repo / "params.yaml", [] if name == "params.yaml" else [repo / name])


# Sections whose keys are data, not settings: resources maps key paths of other sections to how to obtain them,
# so each profile lists only what it must obtain (none for the offline profiles). The section itself is in all.
PROFILE_SPECIFIC = {"resources"}


def _keys(d, prefix=""):
    out = set()
    for k, v in d.items():
        out.add(prefix + k)
        if isinstance(v, dict) and prefix + k not in PROFILE_SPECIFIC:
            out |= _keys(v, prefix + k + ".")
    return out


@pytest.mark.parametrize("name", PROFILES)
def test_profiles_validate(repo, name):
    params = _profile(repo, name)
    assert params["profile"]["name"] in {"tiny", "sample", "paper"}


def test_profiles_have_identical_key_sets(repo):
    """An overlay adds no key params.yaml lacks (merged, every profile has exactly params.yaml's keys)."""
    keysets = {n: _keys(_profile(repo, n)) for n in PROFILES}
    base = keysets["params.yaml"]
    for n, ks in keysets.items():
        assert ks == base, f"{n} differs from params.yaml: +{sorted(ks - base)} -{sorted(base - ks)}"


def test_unknown_key_rejected(repo):
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["curate"]["min_lemma_recal"] = 0.5
    with pytest.raises(config.ParamsError, match="min_lemma_recal"):
        config.validate(params)


def test_out_of_range_rejected(repo):
    params = yaml.safe_load((repo / "params.yaml").read_text())
    params["curate"]["min_lemma_recall"] = 1.5
    with pytest.raises(config.ParamsError, match="curate.min_lemma_recall"):
        config.validate(params)


def test_the_duc_mmr_weight_is_none_one_weight_or_several_to_choose_among(repo):
    params = yaml.safe_load((repo / "params.yaml").read_text())
    for ok in (None, 0.7, [0.5, 0.7, 1.0]):
        params["duc"]["select"]["mmr"] = ok
        config.validate(params)
    for bad in ([0.5], [0.5, 0.5], [0.5, 1.5], 1.5):  # one weight is a number; each in [0, 1]
        params["duc"]["select"]["mmr"] = bad
        with pytest.raises(config.ParamsError, match="duc.select.mmr"):
            config.validate(params)


def test_params_json_sections_are_validated(repo, tmp_path):
    params = yaml.safe_load((repo / "params.yaml").read_text())
    args = argparse.Namespace(params=str(tmp_path / "absent.yaml"), params_json=config.job_params(params, "curate"))
    assert config.params_from_args(args, "curate") == {"curate": params["curate"]}
    bad = dict(params["curate"], percentile_low="five")
    args.params_json = json.dumps({"curate": bad})
    with pytest.raises(config.ParamsError, match="percentile_low"):
        config.params_from_args(args, "curate")
    args.params_json = json.dumps({"curate": params["curate"]})
    with pytest.raises(config.ParamsError, match="absent.yaml"):
        config.params_from_args(args, "curate", "split")


def test_snakemake_and_cli_use_the_same_schema(repo):
    snakefile = (repo / "Snakefile").read_text()
    assert 'validate(config, os.path.join(workflow.basedir, "workflow", "schemas", "params.schema.yaml"))' in snakefile
    assert config.SCHEMA_PATH.resolve() == (repo / "workflow/schemas/params.schema.yaml").resolve()
