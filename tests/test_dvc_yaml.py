"""dvc.yaml is generated from the stage registry and must be in sync."""

from __future__ import annotations

import shutil
import subprocess

import pytest
import yaml

from wikiref import config
from wikiref.stages import dvc_yaml_dict, render_dvc_yaml, stages


def test_dvc_yaml_in_sync(repo):
    params = config.load_params(repo / "params.yaml")
    assert (repo / "dvc.yaml").read_text() == render_dvc_yaml(params), "run `wikiref dvc-yaml --write`"


def test_check_command_detects_staleness(repo, tmp_path):
    from wikiref.cli import main

    stale = tmp_path / "dvc.yaml"
    stale.write_text("stages: {}\n")
    assert main(["dvc-yaml", "--params", str(repo / "params.yaml"), "--output", str(stale), "--check"]) == 1
    assert main(["dvc-yaml", "--params", str(repo / "params.yaml"), "--output", str(stale), "--write"]) == 0
    assert main(["dvc-yaml", "--params", str(repo / "params.yaml"), "--output", str(stale), "--check"]) == 0


def test_registry_shape(repo):
    params = config.load_params(repo / "params.yaml")
    names = [s.name for s in stages(params)]
    assert names == ["sample", "collect", "curate", "split", "oracle", "duc_baselines", "pretrain", "finetune",
                     "ablations", "report"]
    doc = dvc_yaml_dict(params)
    schema_sections = set(config.load_schema()["properties"])
    for name, st in doc["stages"].items():
        assert st["cmd"].endswith(f"{name}_all")
        assert set(st["params"]) <= schema_sections
        for out in st["outs"]:
            assert list(out.values()) == [{"persist": True}]
        for m in st.get("metrics", []):
            assert list(m.values()) == [{"cache": False}]
    # every implemented stage has a Snakemake aggregate rule
    smk = "\n".join(p.read_text() for p in (repo / "workflow/rules").glob("*.smk"))
    for s in stages(params):
        assert f"rule {s.name}_all:" in smk


@pytest.mark.skipif(shutil.which("dvc") is None, reason="dvc not installed")
def test_dvc_repro_dry_runs(repo):
    # `dvc repro --dry` cannot be used once two implemented stages are chained: it fails when an
    # upstream output does not exist yet (treeverse/dvc#9021). `dvc dag` and `dvc status` load and
    # check the whole pipeline (dvc.yaml syntax, params, the stage graph) without running anything.
    for cmd in (["dvc", "dag"], ["dvc", "status"]):
        out = subprocess.run(cmd, cwd=repo, capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
