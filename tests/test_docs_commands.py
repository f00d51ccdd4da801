"""Every command the ``docs/`` pages show in their ``bash`` blocks names a program that exists, with options it
has: the README's commands are run or dry-run (``test_readme.py``); the pages' are many and some take hours or a
GPU, so here each is checked against what it calls, cheaply, and a renamed script, subcommand, option, make
target, Snakemake rule, profile or config file fails.

* ``python[3] SCRIPT`` and ``scripts/X``: the script exists and every ``--option`` of the command is in its
  ``--help``; ``python -m pytest FILES``: the files exist; ``python -c CODE``: the code compiles.
* ``wikiref SUB ...``: ``wikiref SUB ... --help`` runs and lists every ``--option``.
* ``make TARGET [ARGS=...]``: ``make -n`` knows the target; the options in ``ARGS`` are in the ``--help`` of the
  script the recipe runs.
* ``snakemake``: every ``--option`` is one of Snakemake's, every ``--profile`` / ``--configfile`` exists (but the
  placeholder for a user's own profile, ``USER_PROFILES``), every target is a rule of the workflow.
* ``dvc``: the subcommand's ``--help`` lists every option; ``dvc exp run -S key=value``: as the README test.

Lines of shell control (``for ...; do``, ``done``) are skipped; a command continued with ``\\`` is joined; leading
``VAR=value`` assignments and ``nice -n N`` are dropped.
"""

from __future__ import annotations

import functools
import re
import shlex
import sys
from pathlib import Path

import pytest
from test_readme import BIN, FENCE, REPO, check_dvc, ok, run

DOCS = sorted((REPO / "docs").glob("*.md"))
USER_PROFILES = {"my-site"}  # docs/cluster.md: the overlay a user writes for their own cluster
SHELL_CONTROL = re.compile(r"^(for|while|if|do|done|then|fi|else)\b")
ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def doc_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) of every command line in the ``bash`` / ``sh`` blocks of a page."""
    out: list[tuple[int, str]] = []
    fence, pending, start = None, "", 0
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line.strip())
        if m:
            fence = None if fence is not None else m.group(1)
            continue
        if fence not in ("bash", "sh", "shell"):
            continue
        if not pending:
            start = n
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        words = shlex.split(pending + line, comments=True)
        pending = ""
        if words and not SHELL_CONTROL.match(words[0]):
            out.append((start, shlex.join(words)))
    return out


COMMANDS = [(page, n, c) for page in DOCS for n, c in doc_commands(page.read_text(encoding="utf-8"))]


def options(words: list[str]) -> list[str]:
    return sorted({w.split("=", 1)[0] for w in words if w.startswith("--") and len(w) > 2})


@functools.cache
def help_text(*cmd: str) -> str:
    res = run([*cmd, "--help"])
    ok(res, shlex.join([*cmd, "--help"]))
    return res.stdout + res.stderr


def assert_options(words: list[str], text: str, what: str) -> None:
    unknown = [o for o in options(words) if not re.search(rf"(?<![\w-]){re.escape(o)}(?![\w-])", text)]
    assert not unknown, f"{what} has no option {', '.join(unknown)}"


def check_script(words: list[str]) -> None:
    script = REPO / words[0]
    assert script.is_file(), f"{words[0]} does not exist"
    cmd = (sys.executable, str(script)) if script.suffix == ".py" else (str(script),)
    assert_options(words[1:], help_text(*cmd), words[0])


def check_python(words: list[str], tmp_path: Path) -> None:
    args = words[1:]
    if args[:2] == ["-m", "pytest"]:
        rest = args[2:]
        paths = [a for i, a in enumerate(rest) if not a.startswith("-") and (i == 0 or rest[i - 1] not in ("-m", "-k"))]
        for path in paths:
            assert (REPO / path.split("::")[0]).exists(), f"{path} does not exist"
        return
    if args[:1] == ["-c"]:
        compile(args[1], "<docs>", "exec")
        return
    assert args and not args[0].startswith("-"), f"no check for `{shlex.join(words)}`"
    check_script(args)


def check_wikiref(words: list[str], tmp_path: Path) -> None:
    sub = []
    for w in words[1:]:
        if w.startswith("-"):
            break
        sub.append(w)
    assert_options(words[1:], help_text(str(BIN / "wikiref"), *sub), shlex.join(["wikiref", *sub]))


def check_make(words: list[str], tmp_path: Path) -> None:
    res = run(["make", "-n", *words[1:]])
    ok(res, shlex.join(words))
    for w in words[1:]:
        if w.startswith("ARGS="):
            script = re.search(r"(scripts/[\w.-]+|bench/[\w.-]+\.py)", res.stdout)
            assert script, f"`{shlex.join(words)}`: ARGS given, but the recipe runs no script of the repository"
            check_script([script.group(1), *shlex.split(w[len("ARGS=") :])])


@functools.cache
def workflow_rules() -> set[str]:
    files = [REPO / "Snakefile", *(REPO / "workflow" / "rules").glob("*.smk")]
    return {m for f in files for m in re.findall(r"^(?:local)?rule\s+(\w+)\s*:", f.read_text(), flags=re.M)}


def check_snakemake(words: list[str], tmp_path: Path) -> None:
    args = words[1:]
    assert_options(args, help_text(str(BIN / "snakemake")), "snakemake")
    targets, i = [], 0
    while i < len(args):
        a = args[i]
        if a in ("--profile", "--configfile", "--directory", "--report", "--cores", "--config", "--resources"):
            value = args[i + 1]
            if a == "--profile" and value not in USER_PROFILES:
                assert (REPO / value).is_dir(), f"no profile {value}"
            if a == "--configfile":
                assert (REPO / value).is_file(), f"no config file {value}"
            i += 2
            continue
        if not a.startswith("-"):
            targets.append(a)
        i += 1
    unknown = sorted(set(targets) - workflow_rules())
    assert not unknown, f"no rule {', '.join(unknown)} in the workflow"


def check_dvc_command(words: list[str], tmp_path: Path) -> None:
    if words[1:3] == ["exp", "run"] and "-S" in words:
        check_dvc(words, tmp_path)
        return
    sub = [w for w in words[1:3] if not w.startswith("-")]
    assert_options(words[1:], help_text(str(BIN / "dvc"), *sub), shlex.join(["dvc", *sub]))


def check_doc_command(command: str, tmp_path: Path) -> None:
    words = shlex.split(command)
    assert not {"|", "||", "&&", ";"} & set(words) and not any(w.endswith(";") for w in words), (
        f"`{command}`: one command per line, no shell operators"
    )
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    if words[:1] == ["nice"]:
        words = words[3:] if words[1:2] == ["-n"] else words[1:]
    assert words, f"no command in `{command}`"
    first = words[0]
    if first in ("python", "python3"):
        check_python(words, tmp_path)
    elif first.startswith(("scripts/", "bench/")):
        check_script(words)
    elif first in HANDLERS:
        HANDLERS[first](words, tmp_path)
    else:
        raise AssertionError(f"no check for `{command}` (add one to tests/test_docs_commands.py)")


HANDLERS = {"wikiref": check_wikiref, "make": check_make, "snakemake": check_snakemake, "dvc": check_dvc_command}


@pytest.mark.parametrize("page,line,command", COMMANDS, ids=[f"{p.name}:L{n}:{c[:50]}" for p, n, c in COMMANDS])
def test_docs_command(page, line, command, tmp_path):
    check_doc_command(command, tmp_path)


def test_the_pages_show_commands_of_every_kind():
    """The parser finds the commands (a page rewritten in another markup would otherwise check nothing)."""
    firsts = {shlex.split(c)[0] for _, _, c in COMMANDS}
    assert firsts >= {"make", "snakemake", "dvc", "wikiref", "python", "python3", "scripts/recipe-study"}
    assert len(COMMANDS) >= 40


def test_parser_joins_continued_lines_and_skips_shell_control():
    text = "```bash\nfor s in 1 2; do\n  scripts/x --a $s \\\n    --b 2   # note\ndone\n```\n```python\nx = 1\n```\n"
    assert doc_commands(text) == [(3, "scripts/x --a '$s' --b 2")]


@pytest.mark.parametrize(
    "command,error",
    [
        ("python3 scripts/gpu-check --no-such-option", "has no option --no-such-option"),
        ("scripts/recipe-study --qmsum x --flds 2", "has no option --flds"),
        ("wikiref finetune run --no-such-option", "has no option"),
        ("snakemake --profile workflow/profiles/default no_such_rule", "no rule no_such_rule"),
        ("snakemake --configfile config/none.yaml", "no config file"),
        ("python bench/none.py", "does not exist"),
        ("make gpu-check ARGS='--no-such-option'", "has no option --no-such-option"),
        ("git status", "no check for"),
        ("dvc metrics show; dvc plots show", "one command per line"),
    ],
)
def test_a_wrong_command_fails(command, error, tmp_path):
    with pytest.raises(AssertionError, match=error):
        check_doc_command(command, tmp_path)
