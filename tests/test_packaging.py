"""pyproject.toml and environment.yml declare the same dependencies; the CLI is usable on its own."""

from __future__ import annotations

import subprocess
import sys

import pytest
import tomllib
import yaml
from packaging.requirements import Requirement

from wikiref.cli import COMMANDS, build_parser


def _norm(spec: str) -> tuple[str, str]:
    r = Requirement(spec)
    return r.name.lower().replace("_", "-"), str(r.specifier)


def test_environment_yml_mirrors_pyproject(repo):
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    declared = {_norm(s) for s in project["dependencies"] + project["optional-dependencies"]["dev"]}
    env = yaml.safe_load((repo / "environment.yml").read_text())
    pip_block = next(d["pip"] for d in env["dependencies"] if isinstance(d, dict))
    mirrored = {_norm(s) for s in pip_block if not s.startswith("-e")}
    assert declared == mirrored, (
        f"only in pyproject: {declared - mirrored}; only in environment.yml: {mirrored - declared}"
    )
    assert any(s.startswith("-e .") for s in pip_block)


def test_cpu_constraint_pins_torch(repo):
    lines = [
        ln.strip()
        for ln in (repo / "constraints/cpu.txt").read_text().splitlines()
        if ln.strip() and not ln.startswith("#")
    ]
    assert "torch==2.13.0" in lines
    project = tomllib.loads((repo / "pyproject.toml").read_text())["project"]
    torch = next(Requirement(d) for d in project["dependencies"] if d.startswith("torch"))
    assert "2.13.0" in torch.specifier and torch.specifier.contains("2.14.1"), "pyproject must not forbid a CUDA build"


@pytest.mark.parametrize("name", [n for n, _ in COMMANDS])
def test_every_subcommand_has_useful_help(name):
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    p = sub.choices[name]
    text = p.format_help()
    assert len(p.description or "") > 40, f"`wikiref {name} --help` should say what goes in and comes out"
    assert "usage: wikiref " + name in text


def test_console_script_runs():
    out = subprocess.run([sys.executable, "-m", "wikiref.cli", "--help"], capture_output=True, text=True)
    assert out.returncode == 0
    for name, _ in COMMANDS:
        assert name in out.stdout
