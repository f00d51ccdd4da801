"""dvc.yaml is generated from the stage registry and must be in sync."""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys

import pytest

from wikiref import config
from wikiref.registry import JOB_KEYS, NAMES, code_deps, dvc_yaml_dict, render_dvc_yaml, stages


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
    assert names == list(NAMES)  # the one declaration (tests/test_stage_declaration.py checks the rest)
    doc = dvc_yaml_dict(params)
    schema_sections = set(config.load_schema()["properties"])
    for name, st in doc["stages"].items():
        assert st["cmd"].endswith(f"{name}_all")
        assert set(st["params"]) <= schema_sections
        for out in st["outs"]:
            assert list(out.values()) == [{"persist": True}]
        # DVC deletes non-persistent outputs before running a stage: metrics and plots persist, or
        # Snakemake would see finished jobs' metrics missing and rerun them (issue #20)
        for m in st.get("metrics", []):
            assert list(m.values()) == [{"persist": True}]  # cached: `dvc exp show` reads experiments' metrics
        for m in st.get("plots", []):
            assert list(m.values()) == [{"cache": False, "persist": True}]
    # one name per stage: its rules file (with the aggregate rule), its CLI subcommand, its module
    from wikiref.cli import COMMANDS

    commands = dict(COMMANDS)
    for s in stages(params):
        assert f"rule {s.name}_all:" in (repo / s.rules_file).read_text()
        assert commands.get(s.name) == s.name, f"no `wikiref {s.name}` subcommand in wikiref.cli.{s.name}"
        assert importlib.util.find_spec(f"wikiref.stages.{s.name}") is not None
        # every rule of the stage's file carries the stage's name
        for rule in re.findall(r"^\s*rule (\w+):", (repo / s.rules_file).read_text(), flags=re.M):
            assert rule == s.name or rule.startswith(f"{s.name}_"), f"{s.rules_file}: rule {rule}"
    assert sorted(p.stem for p in (repo / "workflow/rules").glob("*.smk")) == sorted(names)


def test_every_job_reads_only_known_parameters(repo):
    """The registry's job keys exist in every profile (a rule would fail to build its --params-json)."""
    for profile in ("params.yaml", "config/tiny.yaml", "config/paper.yaml"):
        params = config.load_params(repo / "params.yaml", [] if profile == "params.yaml" else [repo / profile])
        for keys in JOB_KEYS.values():
            config.validate_sections(json.loads(config.job_params(params, *keys)))


# One fresh interpreter imports the heavy third-party libraries once, then forks a child per stage that imports
# the stage's modules and reports which wikiref modules it loaded (one interpreter per stage took ~80 s: torch and
# transformers imported twenty times). The parent loads no wikiref module, so every child starts without any.
_IMPORT_CHECK = """
import importlib, json, os, sys
for lib in ("numpy", "pandas", "pyarrow", "torch", "transformers", "sklearn", "scipy", "matplotlib", "spacy"):
    try:
        importlib.import_module(lib)
    except ImportError:
        pass
assert not any(m == "wikiref" or m.startswith("wikiref.") for m in sys.modules)
for name, modules in json.loads(sys.argv[1]).items():
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        try:
            for m in modules:
                importlib.import_module(m)
            loaded = sorted(m for m in sys.modules if m == "wikiref" or m.startswith("wikiref."))
            print(json.dumps({"stage": name, "loaded": loaded}), flush=True)
            os._exit(0)
        except BaseException as e:
            print(json.dumps({"stage": name, "error": repr(e)}), flush=True)
            os._exit(1)
    os.waitpid(pid, 0)
"""


@pytest.mark.slow
def test_code_deps_cover_every_module_a_stage_runs(repo, subprocess_env):
    """The derived code deps of a stage hold every wikiref module its CLI and rules file import (also lazily,
    inside functions): import all of them in a fresh interpreter and check nothing outside the list loads."""
    params = config.load_params(repo / "params.yaml")
    modules = {}
    for st in stages(params):
        deps = set(code_deps(st.name))
        assert f"src/wikiref/cli/{st.name}.py" in deps
        assert any(d.startswith(f"src/wikiref/stages/{st.name}") for d in deps), st.name
        modules[st.name] = [
            d[len("src/") : -len(".py")].replace("/", ".").removesuffix(".__init__") for d in deps if d.endswith(".py")
        ]
    res = subprocess.run(
        [sys.executable, "-c", _IMPORT_CHECK, json.dumps(modules)], capture_output=True, text=True, env=subprocess_env
    )
    assert res.returncode == 0, res.stderr[-2000:]
    reports = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert [r["stage"] for r in reports] == list(modules), res.stderr[-2000:]
    for r in reports:
        assert "error" not in r, r
        loaded = set(r["loaded"])
        extra = loaded - set(modules[r["stage"]])
        assert not extra, f"{r['stage']}: modules loaded but not in its code deps: {extra}"
    # what the rules files import is part of the stage's code (finetune.smk's helpers, say)
    assert "src/wikiref/stages/ablations/cells.py" in code_deps("ablations")


def test_import_scan_sees_lazy_imports(tmp_path):
    from wikiref.codedeps import imported_modules

    src = "def f():\n    from wikiref.stages import curate\n    import wikiref.model.training as t\n"
    assert {"wikiref.stages.curate", "wikiref.model.training", "wikiref.stages", "wikiref.model"} <= imported_modules(
        src
    )


def _dvc() -> str | None:
    import sys
    from pathlib import Path

    local = Path(sys.executable).parent / "dvc"
    return str(local) if local.exists() else shutil.which("dvc")


@pytest.mark.skipif(_dvc() is None, reason="dvc not installed")
@pytest.mark.slow
def test_dvc_plans_every_stage_in_a_fresh_checkout(repo, tmp_path):
    """In a checkout with no outputs yet, DVC loads the pipeline and plans every stage.

    Plain `dvc repro --dry` cannot plan a chained pipeline before the upstream outputs exist: its
    run-cache probe hashes them first (treeverse/dvc#9021, #9818). `--force` skips that probe, so
    `dvc repro --dry --force` prints the whole plan; `dvc status` and `dvc dag` need no outputs.
    """
    import os

    for name in ("dvc.yaml", "params.yaml", ".dvcignore"):
        if (repo / name).exists():
            shutil.copy(repo / name, tmp_path / name)
    env = dict(os.environ, PATH=os.path.dirname(_dvc()) + os.pathsep + os.environ.get("PATH", ""))

    def run(*cmd):
        return subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True, env=env)

    assert run("git", "init", "-q").returncode == 0
    assert run(_dvc(), "init", "-q").returncode == 0
    for cmd in ([_dvc(), "dag"], [_dvc(), "status"], [_dvc(), "repro", "--dry", "--force"]):
        out = run(*cmd)
        assert out.returncode == 0, f"{cmd}: {out.stderr}"
    params = config.load_params(repo / "params.yaml")
    for st in stages(params):
        assert f"snakemake --profile workflow/profiles/default {st.target}" in out.stdout
