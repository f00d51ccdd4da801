"""Execution profiles (workflow/profiles/*): every rule they configure exists; GPU use comes from params."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from wikiref import config

PROFILES = sorted(
    p.parent for p in (Path(__file__).resolve().parents[1] / "workflow" / "profiles").glob("*/config.yaml")
)


@pytest.fixture(scope="module")
def rule_names(repo, snakemake, tmp_path_factory) -> set[str]:
    """Every rule of the workflow under any params profile (some rules exist only in some profiles)."""
    names: set[str] = set()
    for overlay in (None, "config/tiny.yaml", "config/paper.yaml"):
        configfile = ("--configfile", str(repo / overlay)) if overlay else ()
        res = snakemake(tmp_path_factory.mktemp("rules"), "--list-rules", *configfile, timeout=300)
        assert res.returncode == 0, res.stderr[-3000:]
        names |= {ln.strip() for ln in res.stdout.splitlines() if ln.strip()}
    assert {"all", "collect_part", "pretrain_variant", "finetune_job"} <= names
    return names


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.name)
@pytest.mark.slow
def test_profile_names_only_existing_rules(profile, rule_names):
    settings = yaml.safe_load((profile / "config.yaml").read_text())
    named = set()
    for key in ("set-resources", "set-threads", "set-resource-scopes"):
        named |= set(settings.get(key) or {})
    unknown = sorted(named - rule_names)
    assert not unknown, f"{profile.name} configures rules that do not exist: {unknown}"


@pytest.mark.slow
def test_slurm_profile_sends_every_gpu_rule_to_the_gpu_partition(repo, rule_names):
    """The rules that declare the gpu resource are the ones the cluster profile sends to GPU nodes."""
    settings = yaml.safe_load((repo / "workflow/profiles/slurm/config.yaml").read_text())
    gpu_rules = set()
    for path in (repo / "workflow" / "rules").glob("*.smk"):
        blocks = re.split(r"^\s*rule (\w+):", path.read_text(), flags=re.M)
        for name, body in zip(blocks[1::2], blocks[2::2]):
            if "gpu=gpu_resource(" in body:
                gpu_rules.add(name)
        # `use rule base as derived with:` keeps the base rule's resources
        for base, derived in re.findall(r"^use rule (\w+) as (\w+)", path.read_text(), flags=re.M):
            if base in gpu_rules:
                gpu_rules.add(derived)
    assert gpu_rules, "no rule declares a gpu resource"
    on_gpu = {r for r, res in settings["set-resources"].items() if res.get("slurm_partition") == "gpu"}
    assert gpu_rules == on_gpu
    assert "gres" not in (repo / "workflow/profiles/slurm/config.yaml").read_text().split("set-resources")[1]


@pytest.mark.parametrize("device, expected", [("cpu", 0), ("auto", 1), ("cuda", 1), ("cuda:1", 1)])
def test_gpu_resource_comes_from_params(device, expected):
    assert config.gpu_resource({"model": {"device": device}}) == expected
    assert config.gpu_resource({"model": {"device": device}}, processes=4) == 4 * expected


def test_gpu_resource_never_probes_the_submitting_host(subprocess_env):
    """Deciding the resource must not import torch (i.e. look at the GPUs of the machine parsing the DAG)."""
    code = (
        "import sys; from wikiref.config import gpu_resource; gpu_resource({'model': {'device': 'auto'}}); "
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=subprocess_env)
    assert res.returncode == 0, res.stderr
