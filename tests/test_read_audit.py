"""scripts/read_audit.py: a job that reads a file its rule does not declare is reported (and exits 1); a workflow
whose jobs read only declared inputs, their own outputs and their own scratch files passes. The whole tiny
workflow is audited in tests/test_workflow_smoke.py (its one Snakemake run is traced)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent

# Rule b reads its declared input, a scratch file it writes itself, lists a directory it created, and
# (when PLANT is set) a file no rule declares. Rule c reads a file inside a declared input directory.
SNAKEFILE = """
rule all:
    input:
        "b.txt",
        "c.txt",


rule a:
    output:
        "a.txt",
        directory("d"),
    log:
        "logs/a.log",
    shell:
        "(echo hi > {{output[0]}} && mkdir -p d && echo x > d/inner.txt) > {{log}} 2>&1"


rule b:
    input:
        "a.txt",
    output:
        "b.txt",
    log:
        "logs/b.log",
    shell:
        "python3 -c \\"import os; open('{{input}}').read(); os.makedirs('scratch', exist_ok=True); "
        "open('scratch/t', 'w').write('t'); open('scratch/t').read(); os.listdir('scratch'); "
        "{plant}open('{{output}}', 'w').write('x')\\" > {{log}} 2>&1"


rule c:
    input:
        "d",
    output:
        "c.txt",
    log:
        "logs/c.log",
    shell:
        "cat {{input}}/inner.txt > {{output}} 2> {{log}}"
"""


def _audit(load_script, tmp_path: Path, plant: str, capsys) -> tuple[int, list[dict]]:
    audit = load_script("read_audit.py")
    (tmp_path / "Snakefile").write_text(SNAKEFILE.format(plant=plant))
    run = tmp_path / "run"
    run.mkdir()
    (run / "secret.txt").write_text("not declared")
    (run / "other").mkdir()
    (run / "other" / "file.txt").write_text("not declared either")
    cmd = [str(BIN / "snakemake"), "-s", str(tmp_path / "Snakefile"), "--cores", "1", "--directory", str(run), "-q"]
    rc = audit.main(["--run-dir", str(run), "--", *cmd])
    return rc, [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.startswith("{")]


needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="strace not found (.ci/install-deps)")


@pytest.mark.slow  # runs Snakemake under strace
@needs_strace
def test_a_workflow_reading_only_declared_files_passes(load_script, tmp_path, capsys):
    rc, lines = _audit(load_script, tmp_path, "", capsys)
    assert lines[-1] == {"jobs": 3, "undeclared": 0, "unmapped": 0}
    assert rc == 0


@pytest.mark.slow
@needs_strace
def test_a_planted_undeclared_read_is_reported(load_script, tmp_path, capsys):
    rc, lines = _audit(load_script, tmp_path, "open('secret.txt').read(); os.listdir('other'); ", capsys)
    assert rc == 1
    reads = {(x["rule"], x["read"]) for x in lines if "read" in x}
    assert reads == {("b", "secret.txt"), ("b", "other")}  # a file and a folder listing no rule declares
    assert lines[-1] == {"jobs": 3, "undeclared": 2, "unmapped": 0}


def test_a_job_whose_processes_were_not_seen_fails(load_script, tmp_path, capsys):
    """A recorded job that opened no log in the trace cannot be audited: that is a failure, not a pass."""
    audit = load_script("read_audit.py")
    run = tmp_path / "run"
    (run / ".snakemake" / "metadata").mkdir(parents=True)
    import base64

    name = base64.b64encode(b"out.txt").decode()
    (run / ".snakemake" / "metadata" / name).write_text(json.dumps({"rule": "x", "input": [], "log": ["logs/x.log"]}))
    trace = tmp_path / "trace"
    trace.write_text('100  execve("/bin/true", ["true"], 0x0 /* 1 var */) = 0\n')
    assert audit.main(["--run-dir", str(run), "--trace", str(trace)]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"jobs": 1, "undeclared": 0, "unmapped": 1}


def test_trace_lines_are_parsed_with_unfinished_calls_and_relative_paths(load_script, tmp_path):
    audit = load_script("read_audit.py")
    lines = [
        '10  chdir("/w") = 0',
        "10  clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD}, 88 <unfinished ...>",
        "10  <... clone3 resumed>) = 11",
        '11  openat(AT_FDCWD</w>, "logs/j.log", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 3</w/logs/j.log>',
        '11  openat(AT_FDCWD</w>, "in.txt", O_RDONLY|O_CLOEXEC <unfinished ...>',
        "11  <... openat resumed>) = 4</w/in.txt>",
        '11  openat(AT_FDCWD</w>, "missing.txt", O_RDONLY) = -1 ENOENT (No such file or directory)',
        '11  mkdir("tmp", 0777) = 0',
        '11  openat(5</w/tmp>, "x", O_RDONLY|O_DIRECTORY) = 6</w/tmp/x>',
    ]
    procs = audit.parse_trace(lines, "/")
    assert [p.pid for p in procs] == [10, 11]
    child = procs[1]
    assert child.parent == 0 and child.cwd == "/w"
    assert [p for p, _ in child.opens] == ["/w/logs/j.log", "/w/in.txt", "/w/tmp/x"]
    assert child.created == {"/w/tmp"}


def test_a_reused_pid_is_a_new_process_and_an_early_child_keeps_its_parent(load_script):
    audit = load_script("read_audit.py")
    lines = [
        '10  openat(AT_FDCWD</w>, "a", O_RDONLY) = 3</w/a>',
        "10  clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>",
        '11  openat(AT_FDCWD</w>, "b", O_RDONLY) = 3</w/b>',  # the child runs before clone returns
        "10  <... clone resumed>) = 11",
        "11  +++ exited with 0 +++",
        "10  vfork() = 11",  # the kernel reuses pid 11
        '11  openat(AT_FDCWD</w>, "c", O_RDONLY) = 3</w/c>',
    ]
    procs = audit.parse_trace(lines, "/w")
    assert [(p.pid, p.parent, [o for o, _ in p.opens]) for p in procs] == [
        (10, None, ["/w/a"]),
        (11, 0, ["/w/b"]),
        (11, 0, ["/w/c"]),
    ]
