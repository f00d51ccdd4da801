"""The README stays short, its links resolve, and every command it shows runs or dry-runs.

Commands are the lines of its fenced ``bash`` blocks and every inline code span whose first word is a
program (a known command name, something on PATH, or an executable file of the repository). Each is
checked by the handler of its program: ``make -n``, ``snakemake -n`` in a scratch directory, ``wikiref
... --help`` (the real command where it is cheap and writes nothing), ``dvc exp run -S`` as a check of
the parameter against the schema, ``python -m pytest`` as ``--collect-only``, a script's ``--help``.
A command no handler knows fails, so a new README command must get a check here. Nothing is skipped: a
make target or a page the README names that does not exist fails.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from wikiref import config

REPO = Path(__file__).resolve().parents[1]
README = REPO / "README.md"
BIN = Path(sys.executable).parent
MAX_LINES = 120
# Words that start a command even when they are not on this machine's PATH (so they are never taken for prose)
KNOWN_PROGRAMS = {"make", "snakemake", "dvc", "wikiref", "python", "python3", "pip", "source", "git", "bash"}
SHELL_OPERATORS = re.compile(r"(?:&&|\|\||[;|<>]|\$\()")
FENCE = re.compile(r"^```(\w*)\s*$")
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
LINK = re.compile(r"\]\(([^)\s]+)\)")
TIMEOUT = 300


# ------------------------------------------------------------------------------------------------ parsing
def is_command(text: str) -> bool:
    """Whether an inline code span is a command: its first word names a program."""
    try:
        words = shlex.split(text)
    except ValueError:
        return False
    if not words:
        return False
    first = words[0]
    if first in KNOWN_PROGRAMS or shutil.which(first, path=f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"):
        return True
    path = REPO / first
    return "/" in first and path.is_file() and os.access(path, os.X_OK)


def readme_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) for every command the README shows."""
    out: list[tuple[int, str]] = []
    fence = None  # the language of the fenced block we are in, None outside
    for n, line in enumerate(text.splitlines(), 1):
        m = FENCE.match(line.strip())
        if m:
            fence = None if fence is not None else m.group(1)
            continue
        if fence is not None:
            words = shlex.split(line, comments=True) if fence in ("bash", "sh", "shell") else []
            if words:
                out.append((n, shlex.join(words)))
            continue
        out += [(n, span.strip()) for span in INLINE.findall(line) if is_command(span)]
    return out


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, markup and punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]|\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {github_anchor(h) for h in re.findall(r"^#{1,6}\s+(.+?)\s*#*$", text, flags=re.M)}


COMMANDS = readme_commands(README.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------------ handlers
def run(cmd: list[str], cwd: Path = REPO, timeout: float = TIMEOUT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false", DVC_NO_ANALYTICS="1")
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def ok(res: subprocess.CompletedProcess, what: str) -> None:
    assert res.returncode == 0, f"{what}: exit {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-3000:]}"


def check_make(words: list[str], tmp_path: Path) -> None:
    """``make -n``: the recipe is printed, nothing runs; a missing target fails."""
    ok(run(["make", "-n", *words[1:]]), shlex.join(words))


def check_snakemake(words: list[str], tmp_path: Path) -> None:
    """``snakemake ... -n`` with the work directory replaced by a scratch one: plans, runs nothing."""
    args = list(words[1:])
    if "--directory" in args:
        del args[args.index("--directory") : args.index("--directory") + 2]
    workdir = tmp_path / "workdir"
    workdir.mkdir()
    flags = [] if {"-n", "--dry-run", "--dryrun"} & set(args) else ["-n"]
    res = run([str(BIN / "snakemake"), *args, *flags, "--quiet", "rules", "--directory", str(workdir)])
    ok(res, shlex.join(words))
    assert not (set(p.name for p in workdir.iterdir()) - {".snakemake"}), "a dry run wrote outputs"


def check_dvc(words: list[str], tmp_path: Path) -> None:
    """``dvc exp run -S key=value``: each key exists and its value passes the schema (running the experiment
    would change params.yaml); ``dvc exp show``: runs for real (read-only)."""
    args = words[1:]
    if args[:2] == ["exp", "show"]:
        ok(run([str(BIN / "dvc"), *args]), shlex.join(words))
        return
    assert args[:2] == ["exp", "run"], f"no check for `{shlex.join(words)}`: add one to tests/test_readme.py"
    rest = args[2:]
    assert rest and len(rest) % 2 == 0 and all(f == "-S" for f in rest[::2]), f"unsupported: {shlex.join(words)}"
    params = config.load_params(REPO / "params.yaml")
    for setting in rest[1::2]:
        key, _, value = setting.partition("=")
        assert ":" not in key, f"{setting}: only params.yaml keys are checked"
        node = params
        *parents, leaf = key.split(".")
        for part in parents:
            node = node[part]
        assert leaf in node, f"{key} is not a parameter"
        node[leaf] = yaml.safe_load(value)
    config.validate(params)
    res = run([str(BIN / "dvc"), "exp", "run", "--help"])
    ok(res, "dvc exp run --help")
    assert "--set-param" in res.stdout


# `wikiref` subcommands run for real: cheap, and they only read
WIKIREF_REAL = {("params",)}


def check_wikiref(words: list[str], tmp_path: Path) -> None:
    """``wikiref <stage> ... --help`` (the real command for WIKIREF_REAL)."""
    args = words[1:]
    sub = tuple(a for a in args if not a.startswith("-"))[:1]
    real = sub in WIKIREF_REAL or "--help" in args
    ok(run([str(BIN / "wikiref"), *args, *([] if real else ["--help"])]), shlex.join(words))


def check_python(words: list[str], tmp_path: Path) -> None:
    """``python -m pytest ...`` as ``--collect-only``; ``python <script>`` as ``--help``."""
    args = words[1:]
    if args[:2] == ["-m", "pytest"]:
        for path in (a for a in args[2:] if not a.startswith("-")):
            assert (REPO / path.split("::")[0]).exists(), f"{path} does not exist"
        ok(run([sys.executable, *args, "--collect-only", "-p", "no:cacheprovider"]), shlex.join(words))
        return
    assert args and args[0].endswith(".py") and (REPO / args[0]).is_file(), f"no check for `{shlex.join(words)}`"
    ok(run([sys.executable, args[0], "--help"]), f"{args[0]} --help")


def check_source(words: list[str], tmp_path: Path) -> None:
    """``source .venv/bin/activate``: the Makefile's environment is that folder and a venv has that script."""
    assert words[1:] == [".venv/bin/activate"], f"no check for `{shlex.join(words)}`"
    assert re.search(r"^VENV\s*\?=\s*\.venv\s*$", (REPO / "Makefile").read_text(), flags=re.M)
    assert (BIN / "activate").is_file()


def check_script(words: list[str], tmp_path: Path) -> None:
    """``scripts/<name> ...``: the executable script exists and answers ``--help``."""
    script = REPO / words[0]
    assert script.is_file() and os.access(script, os.X_OK), f"{words[0]} is not an executable script"
    ok(run([sys.executable, str(script), "--help"]), f"{words[0]} --help")


HANDLERS: dict[str, Callable[[list[str], Path], None]] = {
    "make": check_make,
    "snakemake": check_snakemake,
    "dvc": check_dvc,
    "wikiref": check_wikiref,
    "python": check_python,
    "source": check_source,
}


# ------------------------------------------------------------------------------------------------ tests
def test_readme_is_short():
    n = len(README.read_text(encoding="utf-8").splitlines())
    assert n <= MAX_LINES, f"README.md has {n} lines (at most {MAX_LINES}: move the rest into docs/)"


def test_readme_starts_with_the_two_commands():
    assert [c for _, c in COMMANDS[:2]] == ["make sample", "make test"]


def check_link(target: str) -> None:
    """A relative link names an existing file (and, with an anchor, one of its headings)."""
    if re.match(r"\w+://|mailto:", target):
        return
    path, _, anchor = target.partition("#")
    page = REPO / path
    assert page.is_file(), f"README links to {path}, which does not exist"
    if anchor:
        assert anchor in anchors(page), f"{path} has no heading with anchor #{anchor}"


@pytest.mark.parametrize("target", sorted(set(LINK.findall(README.read_text(encoding="utf-8")))))
def test_readme_link_resolves(target):
    check_link(target)


def check_command(line: int, command: str, tmp_path: Path) -> None:
    assert not SHELL_OPERATORS.search(command), f"README line {line}: one command per line, no shell operators"
    words = shlex.split(command)
    handler = HANDLERS.get(words[0]) or (check_script if words[0].startswith("scripts/") else None)
    assert handler, f"README line {line}: no check for `{command}` (add a handler to tests/test_readme.py)"
    handler(words, tmp_path)


def slow_command(command: str) -> bool:
    """Whether checking the command runs Snakemake (it builds the DAG), `dvc exp show` (it scans the workspace) or
    pytest (it collects): seconds each, so the test is marked slow (left out of `make test-fast`)."""
    words = shlex.split(command)
    return words[0] == "snakemake" or words[:3] in (["dvc", "exp", "show"], ["python", "-m", "pytest"])


@pytest.mark.parametrize(
    "line,command",
    [pytest.param(n, c, id=f"L{n}:{c[:60]}", marks=pytest.mark.slow if slow_command(c) else ()) for n, c in COMMANDS],
)
def test_readme_command(line, command, tmp_path):
    check_command(line, command, tmp_path)


def test_every_kind_of_readme_command_is_seen():
    """The parser finds the commands (a README rewritten in another markup would otherwise check nothing)."""
    assert {shlex.split(c)[0] for _, c in COMMANDS} >= {"make", "snakemake", "dvc", "wikiref", "python"}


@pytest.mark.parametrize(
    "text,found",
    [
        ("```bash\nmake sample   # comment\n```\n", ["make sample"]),
        ("Run `make tiny` or read `results/README.md`.\n", ["make tiny"]),
        ("```python\nmake = 1\n```\n", []),
        ("`unknown-tool --flag`, `params.yaml`, `pretrain.epochs`\n", []),
    ],
)
def test_parser(text, found):
    assert [c for _, c in readme_commands(text)] == found


@pytest.mark.parametrize("command", ["git status", "dvc repro", "python -c 'print(1)'", "wikiref params; rm -rf x"])
def test_a_command_without_a_check_fails(command, tmp_path):
    with pytest.raises(AssertionError, match="no check for|unsupported|no shell operators"):
        check_command(1, command, tmp_path)


def test_a_missing_make_target_or_page_fails(tmp_path):
    """No escape hatch: a README line naming a make target or a page that does not exist fails (never skips)."""
    with pytest.raises(AssertionError, match="No rule to make target 'no-such-target'"):
        check_command(1, "make no-such-target", tmp_path)
    with pytest.raises(AssertionError, match="docs/no-such-page.md, which does not exist"):
        check_link("docs/no-such-page.md")
    with pytest.raises(AssertionError, match="no heading with anchor #no-such-heading"):
        check_link("docs/tests.md#no-such-heading")
