"""Smoke test: the whole workflow on config/tiny.yaml, in a scratch directory.

Checks that every target of every stage is produced, that a second run has nothing
to do, and that changing one parameter makes Snakemake plan exactly the dependent jobs.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from wikiref import config
from wikiref.registry import all_targets

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def tiny_snakemake(repo, snakemake):
    """snakemake on config/tiny.yaml (2 cores, one GPU slot) in ``workdir``, then ``extra`` arguments."""

    def run(workdir: Path, *extra: str) -> subprocess.CompletedProcess:
        tiny = ("--configfile", str(repo / "config/tiny.yaml"), "--cores", "2", "--resources", "gpu=1")
        return snakemake(workdir, *tiny, *extra, timeout=1500)

    return run


def _planned_rules(out: str) -> set[str]:
    # `snakemake -n` prints a job-stats table: "job   count" rows.
    rules = set()
    in_table = False
    for line in out.splitlines():
        if line.startswith("job") and "count" in line:
            in_table = True
            continue
        if in_table:
            m = re.match(r"^(\w+)\s+(\d+)$", line.strip())
            if m:
                if m.group(1) != "total":
                    rules.add(m.group(1))
            elif line.strip() and not line.startswith("-"):
                in_table = False
    return rules


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory, tiny_snakemake):
    workdir = tmp_path_factory.mktemp("tiny-run")
    res = tiny_snakemake(workdir)
    assert res.returncode == 0, res.stderr[-6000:]
    return workdir


def test_all_targets_exist(repo, tiny_run):
    params = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    targets = all_targets(params)
    missing = [t for t in targets if not (tiny_run / t).exists()]
    assert not missing, f"missing outputs: {missing}"


def test_second_run_does_nothing(tiny_run, tiny_snakemake):
    res = tiny_snakemake(tiny_run, "-n")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Nothing to be done" in res.stdout + res.stderr


def test_param_change_plans_exactly_dependent_steps(repo, tiny_run, tmp_path, tiny_snakemake):
    """Changing one value of a section re-plans the rules that read it and everything downstream."""
    changed = yaml.safe_load((repo / "config/tiny.yaml").read_text())
    changed["curate"]["min_lemma_recall"] = round(changed["curate"]["min_lemma_recall"] + 0.01, 4)
    overlay = tmp_path / "changed.yaml"
    overlay.write_text(yaml.safe_dump(changed))
    res = tiny_snakemake(tiny_run, "-n", "--configfile", str(overlay))
    assert res.returncode == 0, res.stderr[-3000:]
    planned = _planned_rules(res.stdout + res.stderr)
    assert "curate_merge" in planned
    assert "curate_part" not in planned, "a filter threshold must not re-run the spaCy annotation"
    for upstream in ("sample", "collect_part"):
        assert upstream not in planned, f"{upstream} should not rerun when only curate params change"
