#!/usr/bin/env python3
"""Check that every job of a workflow run reads only the files its rule declares.

    python scripts/read_audit.py --run-dir DIR -- snakemake --profile workflow/profiles/default \\
        --configfile config/tiny.yaml --cores 2 --directory DIR     # run under strace, then check
    python scripts/read_audit.py --run-dir DIR --trace TRACE        # check a trace recorded earlier

The run is traced with ``strace -f`` (only the file-opening, process-creating, renaming and directory
syscalls, filtered in the kernel with seccomp-bpf, so the workflow runs at nearly full speed). Each
process is mapped to its job: every shell rule redirects its output to its log file, so the process that
opens a log file for writing belongs to the job of that log, and so does every process descending from
the same child of Snakemake. Snakemake's own records (``.snakemake/metadata``: rule, declared inputs and
log of every output) give each job's declared inputs and outputs.

A read is undeclared when a job opens, for reading, a file (or lists a directory) inside the run
directory that is none of: a declared input or a path inside a declared input directory, one of the job's
own outputs or its log (or inside an output directory), a path the job itself created (scratch files,
temporary files renamed into place), or Snakemake's own state (``.snakemake/``). Reads outside the run
directory (the package, the Python environment, the parameter files the rules pass as JSON) are not
workflow inputs and are not checked.

Prints one JSON line per undeclared read, then a summary line (``{"jobs": N, "undeclared": M}``); exits 1
when M > 0 or when a job could not be mapped. strace is used rather than a Python audit hook because
safetensors and tokenizers open checkpoint files from Rust, which an audit hook does not see.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

SYSCALLS = "openat,open,creat,execve,clone,clone3,fork,vfork,chdir,mkdir,mkdirat,rename,renameat,renameat2"
LINE = re.compile(r"^(\d+)\s+(.*)$")
CALL = re.compile(r"^(\w+)\((.*)$")
RESUMED = re.compile(r"^<\.\.\. (\w+) resumed>(.*)$")
RESULT = re.compile(r"\)\s+=\s+(-?\d+)(?:<([^>]*)>)?(?:\s.*)?$")
STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
AT_CWD = re.compile(r"AT_FDCWD<([^>]*)>")
FD_PATH = re.compile(r"^\s*(?:AT_FDCWD(?:<[^>]*>)?|-?\d+<([^>]*)>)")
WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC")


@dataclass
class Process:
    pid: int
    parent: int | None  # index of the parent in parse_trace's list
    cwd: str
    thread: bool = False
    opens: list[tuple[str, str]] = field(default_factory=list)  # (absolute path, flags) of successful opens
    created: set[str] = field(default_factory=set)  # paths it created: mkdir, rename targets


@dataclass
class Job:
    rule: str
    log: str
    inputs: set[str]
    outputs: set[str]


def _unescape(text: str) -> str:
    """A path as strace prints it (C escapes such as \\x41 or \\n) back to text."""
    raw = text.encode("latin-1", "backslashreplace").decode("unicode_escape").encode("latin-1")
    return raw.decode("utf-8", errors="surrogateescape")


def _resolve(cwd: str, path: str, base: str | None = None) -> str:
    return os.path.normpath(os.path.join(base or cwd, path))


def parse_trace(lines, root_cwd: str) -> list[Process]:
    """Processes of an ``strace -f -y`` trace, in the order they appear (the first is the traced command):
    parent, working directory, files opened and created. A pid the kernel reuses after a process exits
    starts a new process; a child whose first calls are printed before its parent's clone returns is
    still linked to that parent."""
    procs: list[Process] = []
    alive: dict[int, int] = {}  # pid -> index in procs of the live process with that pid
    pending: dict[int, str] = {}  # pid -> the start of an unfinished call

    def proc(pid: int) -> Process:
        if pid not in alive:
            alive[pid] = len(procs)
            procs.append(Process(pid, None, root_cwd))
        return procs[alive[pid]]

    for raw in lines:
        m = LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        pid, rest = int(m.group(1)), m.group(2)
        if rest.startswith("+++ "):  # exited or killed: a later process may get this pid
            alive.pop(pid, None)
            pending.pop(pid, None)
            continue
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest[: -len("<unfinished ...>")]
            continue
        resumed = RESUMED.match(rest)
        if resumed:
            rest = pending.pop(pid, resumed.group(1) + "(") + resumed.group(2)
        call = CALL.match(rest)
        result = RESULT.search(rest)
        if not call or not result:
            continue
        name, args, ret, ret_path = call.group(1), call.group(2), int(result.group(1)), result.group(2)
        p = proc(pid)
        at_cwd = AT_CWD.search(args)
        if at_cwd:  # -y prints AT_FDCWD with the process's working directory
            p.cwd = _unescape(at_cwd.group(1))
        if ret < 0:
            continue
        if name in ("clone", "clone3", "fork", "vfork"):
            child = proc(ret)  # already there when the child's first calls were printed first
            child.parent, child.thread = alive[pid], "CLONE_THREAD" in args
            if not child.opens and not child.created:  # else its own calls have shown its directory
                child.cwd = p.cwd
        elif name == "chdir":
            strings = STRING.findall(args)
            if strings:
                p.cwd = _resolve(p.cwd, _unescape(strings[0]))
        elif name in ("open", "openat", "creat"):
            strings = STRING.findall(args)
            if not strings:
                continue
            path = _unescape(ret_path) if ret_path else None
            if path is None or not path.startswith("/"):
                base = FD_PATH.match(args) if name == "openat" else None
                path = _resolve(p.cwd, _unescape(strings[0]), base.group(1) if base and base.group(1) else None)
            flags = "O_WRONLY|O_CREAT" if name == "creat" else args.rsplit(",", 1)[-1]
            if name == "openat" and args.count(",") >= 3:  # openat(dirfd, path, flags, mode)
                flags = args.split(",")[2]
            p.opens.append((path, flags))
        elif name in ("mkdir", "mkdirat", "rename", "renameat", "renameat2"):
            strings = [_unescape(s) for s in STRING.findall(args)]
            bases = [
                b.group(1) or b.group(2)
                for b in re.finditer(r"(?:^|,\s*)(?:AT_FDCWD<([^>]*)>|AT_FDCWD|-?\d+<([^>]*)>)", args)
            ]
            target = strings[-1] if strings else None
            if target is not None:
                base = bases[-1] if name in ("mkdirat", "renameat", "renameat2") and bases else None
                p.created.add(_resolve(p.cwd, target, base))
    return procs


def read_jobs(run_dir: Path) -> list[Job]:
    """Every job Snakemake recorded in ``run_dir``: its rule, log, declared inputs and outputs."""
    run_dir = run_dir.resolve()
    by_log: dict[str, Job] = {}
    meta_dir = run_dir / ".snakemake" / "metadata"
    for entry in sorted(meta_dir.rglob("*")) if meta_dir.is_dir() else ():
        if not entry.is_file():
            continue
        # The record of an output is at its path's urlsafe base64, cut into folders named "@<chunk>" when long.
        b64 = "".join(part.lstrip("@") for part in entry.relative_to(meta_dir).parts)
        output = base64.urlsafe_b64decode(b64).decode()
        record = json.loads(entry.read_text(encoding="utf-8"))
        logs = record.get("log") or []
        if not logs:
            continue
        log = _resolve(str(run_dir), logs[0])
        job = by_log.setdefault(log, Job(record["rule"], log, set(), set()))
        job.inputs.update(_resolve(str(run_dir), p) for p in record.get("input") or ())
        job.outputs.add(_resolve(str(run_dir), output))
        job.outputs.update(_resolve(str(run_dir), p) for p in logs)
    return list(by_log.values())


def _under(path: str, roots) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def _is_write(flags: str) -> bool:
    return any(f in flags for f in WRITE_FLAGS)


def job_processes(procs: list[Process], jobs: list[Job]) -> tuple[dict[str, set[int]], list[str]]:
    """The processes (indices into ``procs``) of each job, by log path, and the logs no process opened."""
    children: dict[int, list[int]] = defaultdict(list)
    for i, p in enumerate(procs):
        if p.parent is not None:
            children[p.parent].append(i)
    # Snakemake itself: the traced command (the first process) and its threads.
    main = {0} if procs else set()
    frontier = list(main)
    while frontier:
        for c in children[frontier.pop()]:
            if procs[c].thread and c not in main:
                main.add(c)
                frontier.append(c)
    logs = {j.log for j in jobs}
    out: dict[str, set[int]] = {}
    for i, p in enumerate(procs):
        for path, flags in p.opens:
            if path in logs and _is_write(flags) and path not in out:
                root = i
                while procs[root].parent is not None and procs[root].parent not in main:
                    root = procs[root].parent
                members, todo = set(), [root]
                while todo:
                    j = todo.pop()
                    members.add(j)
                    todo.extend(children[j])
                out[path] = members
    return out, sorted(logs - set(out))


def undeclared_reads(run_dir: Path, procs: list[Process], jobs: list[Job]) -> tuple[list[dict], list[str]]:
    """(undeclared reads, logs of jobs that could not be mapped to processes)."""
    run = os.path.normpath(str(run_dir.resolve()))
    members, unmapped = job_processes(procs, jobs)
    found: list[dict] = []
    for job in jobs:
        pids = members.get(job.log, set())
        created = set().union(*(procs[p].created for p in pids)) if pids else set()
        created |= {path for p in pids for path, flags in procs[p].opens if _is_write(flags)}
        folders = {os.path.dirname(f) for f in job.inputs | job.outputs}
        seen: set[str] = set()
        for pid in sorted(pids):
            for path, flags in procs[pid].opens:
                if _is_write(flags) or not _under(path, [run]) or path == run and "O_DIRECTORY" not in flags:
                    continue
                rel = os.path.relpath(path, run)
                allowed = (
                    _under(path, job.inputs)
                    or _under(path, job.outputs)
                    or _under(path, created)
                    or rel.startswith(".snakemake/")
                    # a listing of a folder that holds declared inputs or outputs (not a read of its other files)
                    or ("O_DIRECTORY" in flags and path in folders)
                )
                if not allowed and rel not in seen:
                    seen.add(rel)
                    found.append({"rule": job.rule, "log": os.path.relpath(job.log, run), "read": rel})
    return found, [os.path.relpath(log, run) for log in unmapped]


def run_traced(cmd: list[str], trace: Path) -> int:
    strace = shutil.which("strace")
    if strace is None:
        sys.exit("read_audit: strace not found (apt-get install strace)")
    full = [strace, "-f", "-y", "-q", "--seccomp-bpf", "-s", "4096", "-e", f"trace={SYSCALLS}", "-o", str(trace)]
    return subprocess.call(full + ["--", *cmd])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--run-dir", type=Path, required=True, help="the workflow's working directory")
    parser.add_argument("--trace", type=Path, help="an strace -f -y trace (default: RUN_DIR/.read-audit.trace)")
    parser.add_argument("--cwd", type=Path, default=Path.cwd(), help="where the traced command started")
    parser.add_argument("cmd", nargs=argparse.REMAINDER, help="-- then the command to run under strace")
    args = parser.parse_args(argv)
    cmd = args.cmd[1:] if args.cmd[:1] == ["--"] else args.cmd
    trace = args.trace or args.run_dir / ".read-audit.trace"
    if cmd:
        args.run_dir.mkdir(parents=True, exist_ok=True)
        rc = run_traced(cmd, trace)
        if rc != 0:
            print(json.dumps({"error": f"traced command exited {rc}"}))
            return rc
    with open(trace, encoding="utf-8", errors="replace") as fh:
        procs = parse_trace(fh, str(args.cwd.resolve()))
    jobs = read_jobs(args.run_dir)
    found, unmapped = undeclared_reads(args.run_dir, procs, jobs)
    for item in found:
        print(json.dumps(item, sort_keys=True))
    for log in unmapped:
        print(json.dumps({"unmapped_job_log": log}))
    print(json.dumps({"jobs": len(jobs), "undeclared": len(found), "unmapped": len(unmapped)}))
    return 1 if found or unmapped or not jobs else 0


if __name__ == "__main__":
    sys.exit(main())
