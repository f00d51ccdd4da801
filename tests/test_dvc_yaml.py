"""dvc.yaml is generated from the stage registry and must be in sync."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from wikiref import config
from wikiref.registry import dvc_yaml_dict, render_dvc_yaml, stages


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


def _dvc() -> str | None:
    import sys
    from pathlib import Path

    local = Path(sys.executable).parent / "dvc"
    return str(local) if local.exists() else shutil.which("dvc")


@pytest.mark.skipif(_dvc() is None, reason="dvc not installed")
def test_dvc_plans_every_stage_in_a_fresh_checkout(repo, tmp_path):
    """In a checkout with no outputs yet, DVC loads the pipeline and plans every implemented stage.

    Plain `dvc repro --dry` cannot plan a chained pipeline before the upstream outputs exist: its
    run-cache probe hashes them first (treeverse/dvc#9021, #9818). `--force` skips that probe, so
    `dvc repro --dry --force` prints the whole plan; `dvc status` and `dvc dag` need no outputs.
    """
    import os

    for name in ("dvc.yaml", "params.yaml", ".dvcignore"):
        if (repo / name).exists():
            shutil.copy(repo / name, tmp_path / name)
    env = dict(os.environ, PATH=os.path.dirname(_dvc()) + os.pathsep + os.environ.get("PATH", ""))
    run = lambda *cmd: subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)
    assert run("git", "init", "-q").returncode == 0
    assert run(_dvc(), "init", "-q").returncode == 0
    for cmd in ([_dvc(), "dag"], [_dvc(), "status"], [_dvc(), "repro", "--dry", "--force"]):
        out = run(*cmd)
        assert out.returncode == 0, f"{cmd}: {out.stderr}"
    params = config.load_params(repo / "params.yaml")
    for st in stages(params):
        if st.implemented:
            assert f"snakemake --profile workflow/profiles/default {st.target}" in out.stdout
