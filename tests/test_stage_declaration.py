"""The stages are declared once (wikiref.registry.DECLARATIONS -> NAMES); every other place a stage appears
derives from that list or is checked against it here, with a message naming the missing piece.

The places: the Snakefile's includes (it loops over registry.rules_files(): no literal include), the rules
files and their ``<name>_all`` targets, the CLI's subcommands (wikiref.cli.COMMANDS = the stages + TOOLS),
the stage packages under src/wikiref/stages, dvc.yaml, and the stage table of docs/stages.md. Each check
also runs on a copy of those files with a violation planted.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
import yaml

from wikiref import cli, registry

STAGE_PLACES = ("Snakefile", "workflow/rules", "src/wikiref/cli", "src/wikiref/stages", "docs/stages.md", "dvc.yaml")
CLI_HELPERS = {"__init__", "__main__"}


def _stage_table(text: str) -> list[str]:
    """The first column of the first table of docs/stages.md that lists stages (backticks dropped)."""
    rows: list[list[str]] = []
    for block in re.split(r"\n\s*\n", text):
        lines = [ln for ln in block.splitlines() if ln.startswith("|")]
        cells = [ln.strip("|").split("|")[0].strip().strip("`") for ln in lines[2:]]
        if {"sample", "report"} <= set(cells):
            rows.append(cells)
    return rows[0] if rows else []


def declaration_problems(root: Path, names: tuple[str, ...], tools: list[tuple[str, str]]) -> list[str]:
    """Every place under ``root`` that disagrees with the declared stages ``names``."""
    problems: list[str] = []
    snakefile = (root / "Snakefile").read_text(encoding="utf-8")
    literal = re.findall(r"^\s*include:\s*[\"'](.+?)[\"']", snakefile, flags=re.M)
    problems += [f"Snakefile includes {p} by hand (it includes registry.rules_files())" for p in literal]
    if "rules_files()" not in snakefile:
        problems.append("Snakefile does not include registry.rules_files()")
    rules = {p.stem for p in (root / "workflow/rules").glob("*.smk")}
    problems += [f"stage {n!r} has no rules file workflow/rules/{n}.smk" for n in names if n not in rules]
    problems += [f"workflow/rules/{r}.smk belongs to no declared stage" for r in sorted(rules - set(names))]
    for n in sorted(rules & set(names)):
        if not re.search(rf"^rule {n}_all:", (root / f"workflow/rules/{n}.smk").read_text(encoding="utf-8"), re.M):
            problems.append(f"workflow/rules/{n}.smk has no rule {n}_all")
    modules = {p.stem for p in (root / "src/wikiref/cli").glob("*.py")} - CLI_HELPERS
    tool_modules = {module for _, module in tools}
    problems += [f"stage {n!r} has no CLI module src/wikiref/cli/{n}.py" for n in names if n not in modules]
    problems += [
        f"src/wikiref/cli/{m}.py is neither a declared stage nor a tool in wikiref.cli.TOOLS"
        for m in sorted(modules - set(names) - tool_modules)
    ]
    stages_dir = root / "src/wikiref/stages"
    packages = {p.stem for p in stages_dir.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} - {
        "__init__"
    }
    problems += [f"stage {n!r} has no package src/wikiref/stages/{n}" for n in names if n not in packages]
    problems += [f"src/wikiref/stages/{p} belongs to no declared stage" for p in sorted(packages - set(names))]
    dvc = list((yaml.safe_load((root / "dvc.yaml").read_text(encoding="utf-8")) or {}).get("stages", {}))
    if dvc != list(names):
        problems.append(f"dvc.yaml stages {dvc} != declared {list(names)} (wikiref dvc-yaml --write)")
    table = _stage_table((root / "docs/stages.md").read_text(encoding="utf-8"))
    if table != list(names):
        missing = [n for n in names if n not in table]
        extra = [t for t in table if t not in names]
        problems.append(
            f"docs/stages.md's stage table {table} != declared stages in order"
            f" (missing: {missing}, not a stage: {extra})"
        )
    return problems


def test_every_place_agrees_with_the_declared_stages(repo):
    assert declaration_problems(repo, registry.NAMES, cli.TOOLS) == []


def test_cli_commands_derive_from_the_registry():
    assert [name for name, _ in cli.COMMANDS] == [*registry.NAMES, *(name for name, _ in cli.TOOLS)]
    parser = cli.build_parser()
    assert " -> ".join(registry.NAMES) in parser.epilog


def test_snakefile_includes_every_stage_rules_file_in_order(repo):
    assert registry.rules_files() == [f"workflow/rules/{n}.smk" for n in registry.NAMES]
    assert all((repo / f).is_file() for f in registry.rules_files())


@pytest.fixture
def planted(repo, tmp_path) -> Path:
    """A copy of every place a stage appears, for planting violations."""
    for place in STAGE_PLACES:
        src, dst = repo / place, tmp_path / place
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dst)
    assert declaration_problems(tmp_path, registry.NAMES, cli.TOOLS) == []
    return tmp_path


@pytest.mark.parametrize(
    ("plant", "message"),
    [
        (
            lambda r: (r / "workflow/rules/extra.smk").write_text("rule extra_all:\n    input: []\n"),
            "extra.smk belongs",
        ),
        (lambda r: (r / "workflow/rules/qmsum.smk").unlink(), "'qmsum' has no rules file"),
        (lambda r: (r / "src/wikiref/cli/qmsum.py").unlink(), "'qmsum' has no CLI module"),
        (lambda r: (r / "src/wikiref/cli/extra.py").write_text(""), "cli/extra.py is neither"),
        (lambda r: shutil.rmtree(r / "src/wikiref/stages/qmsum"), "'qmsum' has no package"),
        (
            lambda r: (r / "Snakefile").write_text(
                (r / "Snakefile").read_text() + '\ninclude: "workflow/rules/extra.smk"\n'
            ),
            "includes workflow/rules/extra.smk by hand",
        ),
        (
            lambda r: (r / "docs/stages.md").write_text(
                re.sub(r"^\|\s*`?qmsum`?\s*\|.*\n", "", (r / "docs/stages.md").read_text(), flags=re.M)
            ),
            "missing: ['qmsum']",
        ),
        (
            lambda r: (r / "workflow/rules/report.smk").write_text(
                (r / "workflow/rules/report.smk").read_text().replace("rule report_all:", "rule report_every:")
            ),
            "has no rule report_all",
        ),
    ],
)
def test_a_planted_violation_is_named(planted, plant, message):
    plant(planted)
    problems = declaration_problems(planted, registry.NAMES, cli.TOOLS)
    assert any(message in p for p in problems), problems
