#!/usr/bin/env python3
"""Run the tiny profile through Snakemake's SLURM executor plugin on a one-node SLURM on loopback.

    python scripts/slurm_check.py                       # everything below; exit 1 when any check fails
    python scripts/slurm_check.py --local-run DIR       # compare against an existing local tiny run
    python scripts/slurm_check.py --broken-overlay      # partitions the scheduler rejects: must exit non-zero
    python scripts/slurm_check.py --print-overlay       # the overlay profile it would use, then exit

Needs root and a Debian-like system (apt-get installs slurmctld, slurmd, slurm-client, slurmdbd, munge,
mariadb-server when missing); no systemd: the daemons (munged, mariadbd, slurmdbd, slurmctld, slurmd) are
started by hand, listen on 127.0.0.1 only, keep every file under the scratch folder (--scratch, default
$WIKIREF_SLURM_DIR or /tmp/wikiref-slurm, wiped at the start) and are stopped at the end, also on failure
or Ctrl-C. The node advertises 8 CPUs, 128 GiB and two fake GPUs (gres.conf on two copies of /dev/null;
slurm.conf SlurmdParameters=config_overrides), so the shipped profile's requests (4 CPUs, up to 64 GB,
--gpus=N) are accepted as written; jobs still run on the machine's real cores.

The workflow runs as `snakemake --profile workflow/profiles/slurm --profile OVERLAY --configfile
config/tiny.yaml --directory SCRATCH/runs/slurm`, where OVERLAY (generated from the shipped profile) only
renames the partitions (cpu -> local-cpu, gpu -> local-gpu), names the local account and shortens the
plugin's first status check. Checks (each prints PASS/FAIL; the figures go to SCRATCH/summary.json):
  env          a job submitted with sbatch imports wikiref from this checkout (PATH/PYTHONPATH reach it)
  submitted    every non-local job of the DAG went through sbatch once and COMPLETED (sacct)
  resources    every job's partition, account, CPUs, memory, time limit and GPUs, read back from sacct,
               are the profile's (after the overlay); `gpu` = 0 (model.device cpu) -> no GPU requested
  outputs      scripts/output_digest.py: identical to a local tiny run
  second-run   a second run submits nothing
  cancel       a pre-training job (pretrain.epochs 6) cancelled with scancel once its first epoch left a
               complete checkpoint in last/ (state.json, written last) makes Snakemake fail; a rerun finishes
               it, resuming from last/ (training.json resumed_from_epoch)
  ddp          one pre-training job with pretrain.nproc_per_node 2 and model.device auto: --gpus=2 on
               local-gpu, torchrun with 2 gloo processes on the CPU, rank 0's checkpoint as documented
               (docs/design.md: world_size 2, each rank takes every 2nd batch, last/ removed)
Run it with the project's Python (make slurm-check does): it needs PyYAML, Snakemake and wikiref from the venv.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import csv
import io
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SHIPPED_PROFILE = REPO / "workflow" / "profiles" / "slurm"
CLUSTER = "wikiref"
ACCOUNT = "wikiref-local"
PARTITIONS = {"cpu": "local-cpu", "gpu": "local-gpu"}  # shipped profile's name -> local partition
BROKEN_PARTITION = "no-such-partition"
PORTS = {"slurmctld": 16817, "slurmd": 16818, "slurmdbd": 16819, "mariadb": 13306}
NODE = {"cpus": 8, "memory_mb": 131072, "gpus": 2}  # advertised (config_overrides), not probed
PACKAGES = {  # command -> Debian package
    "slurmctld": "slurmctld",
    "slurmd": "slurmd",
    "sbatch": "slurm-client",
    "slurmdbd": "slurmdbd",
    "munged": "munge",
    "mariadbd": "mariadb-server",
}
# The jobstep executor inside each job drops SLURM_* variables (SLURM_CONF too) before it calls srun, so srun
# reads the compiled-in default path: a link to the generated file is put there for the run (never over a file).
DEFAULT_CONF = Path("/etc/slurm/slurm.conf")
# snakemake-executor-plugin-slurm 2.8.0 reads job states with sacct, which prints 'CANCELLED by <uid>' for a job
# a user cancelled; the plugin knows only 'CANCELLED' and keeps waiting for that job forever (seen here with
# SLURM 22.05). squeue prints 'CANCELLED' (jobs stay listed for MinJobAge = 300 s), so the cancelled run asks
# squeue; every other run keeps the default (sacct).
CANCEL_STATUS = ("--slurm-status-command", "squeue")
CANCEL_VARIANT = "reg_bert"
DDP_VARIANT = "reg_bert"
SACCT_FIELDS = "JobIDRaw,JobName,Account,Partition,AllocCPUS,ReqMem,TimelimitRaw,ReqTRES,State,ExitCode,Comment"


# --------------------------------------------------------------------------- pure logic (unit-tested)


def render_slurm_conf(scratch: Path, host: str, node: dict = NODE, ports: dict = PORTS) -> str:
    """slurm.conf of a one-node cluster on 127.0.0.1 whose every file lives under scratch."""
    munge = scratch / "munge" / "munge.socket"
    lines = [
        f"ClusterName={CLUSTER}",
        f"SlurmctldHost={host}(127.0.0.1)",
        f"SlurmctldPort={ports['slurmctld']}",
        f"SlurmdPort={ports['slurmd']}",
        "SlurmUser=root",
        "SlurmdUser=root",
        "AuthType=auth/munge",
        f"AuthInfo=socket={munge}",
        f"StateSaveLocation={scratch / 'state' / 'ctld'}",
        f"SlurmdSpoolDir={scratch / 'state' / 'd'}",
        f"SlurmctldPidFile={scratch / 'run' / 'slurmctld.pid'}",
        f"SlurmdPidFile={scratch / 'run' / 'slurmd.pid'}",
        f"SlurmctldLogFile={scratch / 'log' / 'slurmctld.log'}",
        f"SlurmdLogFile={scratch / 'log' / 'slurmd.log'}",
        # no cgroups (containers, no systemd): processes tracked by parent pid, no CPU binding
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "MpiDefault=none",
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_Core_Memory",
        "SchedulerType=sched/backfill",
        "ReturnToService=2",
        # the node below advertises more than the machine has, so the shipped requests fit as written
        "SlurmdParameters=config_overrides",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=127.0.0.1",
        f"AccountingStoragePort={ports['slurmdbd']}",
        f"AccountingStoragePass={munge}",  # for slurmdbd connections: the munge socket
        "AccountingStorageTRES=gres/gpu",
        "AccountingStoreFlags=job_comment",  # the plugin's --comment (rule and wildcards) in sacct
        "AccountingStorageEnforce=associations",  # an unknown account is rejected, as on real clusters
        "JobAcctGatherType=jobacct_gather/linux",
        "MinJobAge=300",
        "KillWait=5",
        "GresTypes=gpu",
        f"NodeName={host} NodeAddr=127.0.0.1 CPUs={node['cpus']} Boards=1 SocketsPerBoard=1 "
        f"CoresPerSocket={node['cpus']} ThreadsPerCore=1 RealMemory={node['memory_mb']} "
        f"Gres=gpu:{node['gpus']} State=UNKNOWN",
        f"PartitionName={PARTITIONS['cpu']} Nodes={host} Default=YES MaxTime=INFINITE State=UP",
        f"PartitionName={PARTITIONS['gpu']} Nodes={host} MaxTime=INFINITE State=UP",
    ]
    return "\n".join(lines) + "\n"


def render_gres_conf(scratch: Path, host: str, node: dict = NODE) -> str:
    """Fake GPUs: character devices made like /dev/null (slurmd only needs device files to count)."""
    return f"NodeName={host} Name=gpu File={scratch / 'dev' / 'fakegpu'}[0-{node['gpus'] - 1}]\n"


def render_slurmdbd_conf(scratch: Path, password: str, ports: dict = PORTS) -> str:
    return (
        "\n".join(
            [
                "AuthType=auth/munge",
                f"AuthInfo=socket={scratch / 'munge' / 'munge.socket'}",
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                f"DbdPort={ports['slurmdbd']}",
                "SlurmUser=root",
                f"LogFile={scratch / 'log' / 'slurmdbd.log'}",
                f"PidFile={scratch / 'run' / 'slurmdbd.pid'}",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={ports['mariadb']}",
                "StorageUser=slurm",
                f"StoragePass={password}",
                "StorageLoc=slurm_acct_db",
            ]
        )
        + "\n"
    )


def overlay_profile(shipped: dict, partitions: dict, account: str, init_status_seconds: int = 5) -> dict:
    """The local overlay: the shipped default-resources and set-resources with partitions renamed and the
    account added (a later --profile replaces whole top-level keys, so both are repeated in full), plus the
    plugin's first status check after init_status_seconds (default 40 s; a one-node cluster answers at once)."""
    default = copy.deepcopy(shipped.get("default-resources") or {})
    per_rule = copy.deepcopy(shipped.get("set-resources") or {})
    for res in [default, *per_rule.values()]:
        if "slurm_partition" in res:
            name = res["slurm_partition"]
            if name not in partitions:
                raise ValueError(f"partition {name!r} of the shipped profile has no local counterpart")
            res["slurm_partition"] = partitions[name]
    default["slurm_account"] = account
    return {
        "default-resources": default,
        "set-resources": per_rule,
        "slurm-init-seconds-before-status-checks": init_status_seconds,
        "slurm-keep-successful-logs": True,
    }


def expected_resources(profile: dict, rule: str, gpu: int = 0) -> dict:
    """What sacct must show for a job of rule: default-resources overlaid by the rule's set-resources."""
    res = {**(profile.get("default-resources") or {}), **((profile.get("set-resources") or {}).get(rule) or {})}
    return {
        "partition": res.get("slurm_partition"),
        "account": res.get("slurm_account"),
        "cpus": int(res["cpus_per_task"]),
        "mem_mb": int(res["mem_mb"]),
        "time_min": int(res["runtime"]),
        "gpus": gpu,
    }


def parse_sacct(text: str) -> list[dict]:
    """`sacct --parsable2` output with its header line -> one dict per line."""
    text = text.strip()
    if not text:
        return []
    return list(csv.DictReader(io.StringIO(text), delimiter="|", quoting=csv.QUOTE_NONE))


def mem_mb(req_mem: str) -> int:
    """sacct ReqMem (e.g. 16000M, 62.50G, 4000Mc/4000Mn in old versions) -> MB."""
    m = re.fullmatch(r"([\d.]+)([KMGT]?)[cn]?", req_mem.strip())
    if not m:
        raise ValueError(f"unreadable ReqMem {req_mem!r}")
    scale = {"K": 1 / 1024, "": 1, "M": 1, "G": 1024, "T": 1024 * 1024}[m.group(2)]
    return round(float(m.group(1)) * scale)


def tres_gpus(tres: str) -> int:
    """gres/gpu=N in a TRES string (ReqTRES / AllocTRES), 0 when absent."""
    m = re.search(r"(?:^|,)gres/gpu=(\d+)", tres or "")
    return int(m.group(1)) if m else 0


def rule_of(comment: str) -> str:
    """The rule name from the plugin's job comment `rule_<name>_wildcards_<...>` (or `rule_<name>`)."""
    m = re.match(r"rule_(.+?)(?:_wildcards_.*)?$", comment or "")
    if not m:
        raise ValueError(f"job comment {comment!r} does not name a rule")
    return m.group(1)


def record_resources(rec: dict) -> dict:
    return {
        "partition": rec["Partition"],
        "account": rec["Account"],
        "cpus": int(rec["AllocCPUS"]),
        "mem_mb": mem_mb(rec["ReqMem"]),
        "time_min": int(rec["TimelimitRaw"]),
        "gpus": tres_gpus(rec["ReqTRES"]),
    }


def resource_mismatches(records: list[dict], profile: dict, gpu_of_rule=lambda rule: 0) -> list[str]:
    """One line per job whose sacct record differs from what the profile declares for its rule."""
    out = []
    for rec in records:
        rule = rule_of(rec["Comment"])
        want, got = expected_resources(profile, rule, gpu_of_rule(rule)), record_resources(rec)
        diff = {k: (want[k], got[k]) for k in want if want[k] != got[k]}
        if diff:
            out.append(
                f"job {rec['JobIDRaw']} ({rule}): " + ", ".join(f"{k} {w!r} != {g!r}" for k, (w, g) in diff.items())
            )
    return out


def submissions(log: str) -> dict[int, int]:
    """Snakemake job id -> SLURM job id, from the plugin's 'Job N has been submitted with SLURM jobid M'."""
    return {int(a): int(b) for a, b in re.findall(r"Job (\d+) has been submitted with SLURM jobid (\d+)", log)}


def job_to_cancel(log: str, model_dir: Path) -> int | None:
    """The SLURM job the cancel check scancels: the run's first submission, once ``model_dir/last/`` holds a
    complete checkpoint (wikiref's own test: ``state.json``, which the training loop writes last); None until then.
    A ``last/`` folder alone is not enough: cancelled between its first file and ``state.json``, the job left
    nothing to resume from and the rerun started over."""
    from wikiref.model.checkpoint import LAST_DIR, checkpoint_complete

    subs = submissions(log)
    return next(iter(subs.values())) if subs and checkpoint_complete(model_dir / LAST_DIR) else None


def run_id(log: str) -> str:
    """The plugin's run UUID (every sbatch of one Snakemake invocation has it as job name)."""
    m = re.search(r"SLURM run ID: ([0-9a-f-]{36})", log)
    if not m:
        raise ValueError("no 'SLURM run ID' in the Snakemake log")
    return m.group(1)


def job_counts(log: str) -> tuple[int, int]:
    """(jobs in the DAG, local jobs) from Snakemake's 'Job stats' table and its 'localrule' lines."""
    m = re.search(r"^total\s+(\d+)\s*$", log, re.M)
    total = int(m.group(1)) if m else 0
    local = len(re.findall(r"^localrule \S+:", log, re.M))
    return total, local


# --------------------------------------------------------------------------- the cluster


def sh(cmd: list[str], env: dict | None = None, check: bool = True, **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, env=env, check=False, text=True, capture_output=True, **kw)
    if check and res.returncode:
        raise RuntimeError(f"{' '.join(cmd)}: exit {res.returncode}\n{res.stdout[-2000:]}{res.stderr[-2000:]}")
    return res


def wait_for(what: str, test, timeout: float = 60.0, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            if test():
                return
        time.sleep(0.5)
    tail = log.read_text(errors="replace")[-2000:] if log and log.exists() else ""
    raise RuntimeError(f"{what} not ready after {timeout:.0f} s\n{tail}")


def install_missing() -> None:
    missing = sorted({pkg for cmd, pkg in PACKAGES.items() if not shutil.which(cmd, path=_sbin_path())})
    if not missing:
        return
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise RuntimeError(f"missing {' '.join(missing)}: install them (apt-get, as root)")
    print(f"installing {' '.join(missing)} (apt-get)", flush=True)
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    sh(["apt-get", "update", "-qq"], env=env)
    sh(["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing], env=env)


def _sbin_path() -> str:
    return os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


class Cluster:
    """munged, mariadbd, slurmdbd, slurmctld, slurmd under scratch; stop() ends exactly those it started."""

    def __init__(self, scratch: Path):
        self.dir = scratch / "cluster"
        self.host = socket.gethostname().split(".")[0]
        self.env = {**os.environ, "SLURM_CONF": str(self.dir / "etc" / "slurm.conf")}
        self.env["PATH"] = _sbin_path()
        self.pids: list[tuple[str, Path]] = []  # (name, pid file) in start order

    def up(self) -> None:
        d = self.dir
        if d.exists():
            shutil.rmtree(d)
        for sub in ("etc", "munge", "db", "log", "state/ctld", "state/d", "run", "dev"):
            (d / sub).mkdir(parents=True)
        self._munge()
        self._mariadb()
        self._write_slurm_conf()
        self._link_default_conf()
        self._start("slurmdbd", ["slurmdbd"], d / "run" / "slurmdbd.pid", d / "log" / "slurmdbd.log")
        wait_for("slurmdbd", lambda: sh(["sacctmgr", "-n", "list", "cluster"], env=self.env).returncode == 0)
        for args in (
            ["add", "cluster", CLUSTER],
            ["add", "account", ACCOUNT, f"Cluster={CLUSTER}", "Description=wikiref", "Organization=wikiref"],
            ["add", "user", "root", f"Account={ACCOUNT}", f"Cluster={CLUSTER}"],
        ):
            sh(["sacctmgr", "-i", *args], env=self.env)
        self._start("slurmctld", ["slurmctld", "-i"], d / "run" / "slurmctld.pid", d / "log" / "slurmctld.log")
        self._start("slurmd", ["slurmd"], d / "run" / "slurmd.pid", d / "log" / "slurmd.log")
        wait_for(
            "the node",
            lambda: sh(["sinfo", "-h", "-n", self.host, "-o", "%T"], env=self.env).stdout.split()[0] == "idle",
            log=d / "log" / "slurmd.log",
        )

    def _munge(self) -> None:
        m = self.dir / "munge"
        (m / "munge.key").write_bytes(os.urandom(128))
        os.chmod(m / "munge.key", 0o400)
        shutil.chown(m, "munge", "munge")
        shutil.chown(m / "munge.key", "munge", "munge")
        sh(
            ["runuser", "-u", "munge", "--", "munged", f"--key-file={m / 'munge.key'}", f"--socket={m / 'munge.socket'}",
             f"--pid-file={m / 'munged.pid'}", f"--log-file={m / 'munged.log'}", f"--seed-file={m / 'seed'}"],
            env=self.env,
        )  # fmt: skip
        self.pids.append(("munged", m / "munged.pid"))

    def _mariadb(self) -> None:
        db, sock = self.dir / "db", self.dir / "db" / "mysqld.sock"
        shutil.chown(db, "mysql", "mysql")
        sh(["mariadb-install-db", "--no-defaults", f"--datadir={db}", "--user=mysql", "--skip-test-db",
            "--auth-root-authentication-method=socket"], env=self.env)  # fmt: skip
        log = self.dir / "log" / "mariadb.log"
        subprocess.Popen(
            ["runuser", "-u", "mysql", "--", "mariadbd", "--no-defaults", f"--datadir={db}", f"--socket={sock}",
             f"--port={PORTS['mariadb']}", "--bind-address=127.0.0.1", f"--pid-file={db / 'mysqld.pid'}",
             f"--log-error={log}", "--innodb-buffer-pool-size=128M", "--innodb-lock-wait-timeout=900"],
            env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )  # fmt: skip
        self.pids.append(("mariadbd", db / "mysqld.pid"))
        client = ["mariadb", "--no-defaults", "-S", str(sock), "-u", "root"]
        wait_for("mariadbd", lambda: sh([*client, "-e", "select 1"], env=self.env).returncode == 0, log=log)
        self.db_password = os.urandom(12).hex()
        grants = "".join(
            f"CREATE USER 'slurm'@'{h}' IDENTIFIED BY '{self.db_password}'; GRANT ALL ON slurm_acct_db.* TO 'slurm'@'{h}';"
            for h in ("localhost", "127.0.0.1")
        )
        sh([*client, "-e", grants], env=self.env)

    def _write_slurm_conf(self) -> None:
        etc = self.dir / "etc"
        (etc / "slurm.conf").write_text(render_slurm_conf(self.dir, self.host))
        (etc / "gres.conf").write_text(render_gres_conf(self.dir, self.host))
        (etc / "slurmdbd.conf").write_text(render_slurmdbd_conf(self.dir, self.db_password))
        os.chmod(etc / "slurmdbd.conf", 0o600)
        for i in range(NODE["gpus"]):
            os.mknod(self.dir / "dev" / f"fakegpu{i}", 0o666 | 0o020000, os.makedev(1, 3))  # like /dev/null

    def _link_default_conf(self) -> None:
        conf = self.dir / "etc" / "slurm.conf"
        if DEFAULT_CONF.is_symlink() and "wikiref" in str(DEFAULT_CONF.readlink()):
            DEFAULT_CONF.unlink()  # left behind by a killed run of this script
        if DEFAULT_CONF.exists() or DEFAULT_CONF.is_symlink():
            raise RuntimeError(f"{DEFAULT_CONF} exists: this machine has its own SLURM; run the check elsewhere")
        DEFAULT_CONF.parent.mkdir(parents=True, exist_ok=True)
        DEFAULT_CONF.symlink_to(conf)
        self.linked_conf = True

    def _start(self, name: str, cmd: list[str], pid_file: Path, log: Path) -> None:
        sh(cmd, env=self.env)  # each daemonizes and writes its pid file
        self.pids.append((name, pid_file))
        wait_for(f"{name} pid file", pid_file.exists, timeout=30, log=log)

    def stop(self) -> None:
        for name, pid_file in reversed(self.pids):
            with contextlib.suppress(FileNotFoundError, ValueError, ProcessLookupError):
                pid = int(pid_file.read_text().split()[0])
                os.kill(pid, signal.SIGTERM)
                deadline = time.monotonic() + 30
                while time.monotonic() < deadline and _alive(pid):
                    time.sleep(0.2)
                if _alive(pid):
                    print(f"{name} (pid {pid}) ignored SIGTERM: SIGKILL", flush=True)
                    os.kill(pid, signal.SIGKILL)
        self.pids.clear()
        if getattr(self, "linked_conf", False) and DEFAULT_CONF.is_symlink():
            DEFAULT_CONF.unlink()
            self.linked_conf = False

    def sacct(self, *args: str) -> list[dict]:
        out = sh(["sacct", "-X", "--parsable2", "--units=M", f"--format={SACCT_FIELDS}", "--starttime", "now-1days",
                  *args], env=self.env).stdout  # fmt: skip
        return parse_sacct(out)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError):  # a zombie child of ours counts as gone
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return True


# --------------------------------------------------------------------------- the workflow runs


class Check:
    """The workflow runs and the checks on them; results collects PASS/FAIL lines and figures."""

    def __init__(self, args: argparse.Namespace, cluster: Cluster):
        import yaml  # the venv's (Snakemake depends on PyYAML)

        self.args, self.cluster, self.scratch = args, cluster, args.scratch
        self.shipped = yaml.safe_load((SHIPPED_PROFILE / "config.yaml").read_text())
        partitions = PARTITIONS if not args.broken_overlay else {k: BROKEN_PARTITION for k in PARTITIONS}
        self.overlay = overlay_profile(self.shipped, partitions, ACCOUNT)
        self.profile = {**self.shipped, **self.overlay}  # what Snakemake sees: later profiles win per key
        self.overlay_dir = self.scratch / "profile-local"
        self.overlay_dir.mkdir(parents=True, exist_ok=True)
        (self.overlay_dir / "config.yaml").write_text(yaml.safe_dump(self.overlay, sort_keys=False))
        self.env = {**cluster.env}
        # the jobs find this checkout's package and the venv's commands (sbatch --export=ALL carries both)
        self.env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), self.env["PATH"]])
        self.env["PYTHONPATH"] = os.pathsep.join(p for p in [str(REPO / "src"), os.environ.get("PYTHONPATH")] if p)
        for key in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
            self.env[key] = "1"
        self.env.update(TOKENIZERS_PARALLELISM="false", DVC_NO_ANALYTICS="1")
        self.results: list[tuple[str, bool, str]] = []
        self.figures: dict = {}

    def record(self, name: str, ok: bool, detail: str = "") -> bool:
        self.results.append((name, ok, detail))
        print(f"{'PASS' if ok else 'FAIL'} {name}{': ' + detail if detail else ''}", flush=True)
        return ok

    def snakemake(
        self, workdir: Path, log_name: str, *extra: str, configs=(), slurm: bool = True, background: bool = False
    ):
        """One Snakemake invocation from the repository root; its log goes to SCRATCH/logs/<log_name>.log.
        Extra config files follow tiny.yaml in the same --configfile (a second --configfile replaces the first)."""
        cmd = [sys.executable, "-m", "snakemake", "--configfile", "config/tiny.yaml", *map(str, configs)]
        cmd += ["--directory", str(workdir)]
        if slurm:
            cmd += ["--profile", str(SHIPPED_PROFILE.relative_to(REPO)), "--profile", str(self.overlay_dir)]
        else:
            cmd += ["--profile", "workflow/profiles/default", "--cores", str(os.cpu_count() or 1)]
        cmd += list(extra)
        log = self.scratch / "logs" / f"{log_name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        print(f"$ {' '.join(cmd)}  > {log}", flush=True)
        with open(log, "w") as fh:
            proc = subprocess.Popen(
                cmd, cwd=REPO, env=self.env, stdout=fh, stderr=subprocess.STDOUT, text=True, preexec_fn=_default_sigint
            )
        RUNNING.append(proc)
        if background:
            return proc, log
        start = time.monotonic()
        rc = proc.wait()
        return rc, time.monotonic() - start, log.read_text(errors="replace")

    def env_probe(self) -> bool:
        out = self.scratch / "logs" / "env-probe.out"
        out.parent.mkdir(parents=True, exist_ok=True)
        probe = "import sys, wikiref; print(wikiref.__file__); print(sys.executable)"
        sh(["sbatch", "--wait", "--parsable", "-p", PARTITIONS["cpu"], "-A", ACCOUNT, "-o", str(out),
            "--wrap", f"python -c {shlex_quote(probe)}"], env=self.env)  # fmt: skip
        lines = out.read_text().split()
        want = str(REPO / "src" / "wikiref" / "__init__.py")
        return self.record("env", lines[:1] == [want], f"a job imports {lines[:1]}, python {lines[1:2]}")

    def local_run(self) -> Path:
        if self.args.local_run:
            return self.args.local_run
        rc, wall, _ = self.snakemake(self.scratch / "runs" / "local", "local", slurm=False)
        self.figures["local_wall_s"] = round(wall, 1)
        if rc:
            raise RuntimeError("the local tiny run failed (SCRATCH/logs/local.log)")
        return self.scratch / "runs" / "local"

    def main_run(self) -> bool:
        workdir = self.scratch / "runs" / "slurm"
        rc, wall, log = self.snakemake(workdir, "slurm")
        self.figures["slurm_wall_s"] = round(wall, 1)
        if not self.record("run", rc == 0, f"exit {rc}, {wall:.0f} s (SCRATCH/logs/slurm.log)"):
            errors = [line for line in log.splitlines() if re.search(r"error|refused|failed", line, re.I)]
            print("\n".join(line[:400] for line in errors[-8:]), flush=True)
            return False
        subs, (total, local) = submissions(log), job_counts(log)
        records = self.cluster.sacct("--name", run_id(log))
        states = {r["State"] for r in records}
        ids_ok = sorted(subs.values()) == sorted(int(r["JobIDRaw"]) for r in records)
        self.figures.update(
            jobs_in_dag=total, local_jobs=local, jobs_submitted=len(subs), slurm_job_ids=sorted(subs.values())
        )
        self.record(
            "submitted",
            ids_ok and len(subs) == total - local > 0 and states == {"COMPLETED"},
            f"{len(subs)} sbatch jobs for {total} DAG jobs ({local} local), sacct states {sorted(states)}",
        )
        bad = resource_mismatches(records, self.profile)
        training = sorted({rule_of(r["Comment"]) for r in records} & set(self.shipped.get("set-resources") or {}))
        self.record("resources", not bad and bool(training), "; ".join(bad[:5]) or f"{len(records)} jobs as declared, "
                    f"incl. {len(training)} rules with their own resources ({', '.join(training)})")  # fmt: skip
        self.figures["training_rule_resources"] = {
            rule: record_resources(next(r for r in records if rule_of(r["Comment"]) == rule)) for rule in training
        }
        return True

    def outputs(self, local: Path) -> bool:
        res = sh([sys.executable, str(REPO / "scripts" / "output_digest.py"), str(self.scratch / "runs" / "slurm"),
                  "--compare", str(local)], env=self.env, check=False)  # fmt: skip
        summary = json.loads(res.stdout.strip().splitlines()[-1]) if res.stdout.strip() else {}
        self.figures["digest"] = summary
        return self.record("outputs", res.returncode == 0, f"{summary} vs {local}")

    def second_run(self) -> bool:
        before = len(self.cluster.sacct("--allusers"))
        rc, wall, log = self.snakemake(self.scratch / "runs" / "slurm", "slurm-second")
        after = len(self.cluster.sacct("--allusers"))
        self.figures["second_run_wall_s"] = round(wall, 1)
        ok = rc == 0 and not submissions(log) and after == before and "Nothing to be done" in log
        return self.record(
            "second-run", ok, f"exit {rc}, {len(submissions(log))} submitted, sacct {before} -> {after} jobs"
        )

    def _copy_run(self, name: str) -> Path:
        dest = self.scratch / "runs" / name
        if dest.exists():
            shutil.rmtree(dest)
        shutil.copytree(self.scratch / "runs" / "slurm", dest, symlinks=True)  # copy2 keeps the mtimes
        return dest

    def _configfile(self, name: str, params: dict) -> Path:
        path = self.scratch / f"{name}.yaml"
        path.write_text(json.dumps(params))  # JSON is YAML
        return path

    def cancel(self) -> bool:
        """scancel a pre-training job once its first epoch left a complete last/; Snakemake fails; a rerun resumes."""
        from wikiref.model.checkpoint import LAST_DIR, checkpoint_complete

        workdir = self._copy_run("cancel")
        conf = self._configfile("cancel", {"pretrain": {"epochs": 6}})
        model_dir = workdir / "models" / "pretrain" / CANCEL_VARIANT
        target = f"models/pretrain/{CANCEL_VARIANT}/model.safetensors"
        proc, log = self.snakemake(
            workdir, "cancel", *CANCEL_STATUS, "--retries", "0", target, configs=[conf], background=True
        )
        deadline, cancelled = time.monotonic() + 900, None
        while proc.poll() is None and time.monotonic() < deadline:
            cancelled = job_to_cancel(log.read_text(errors="replace"), model_dir)
            if cancelled is not None:
                sh(["scancel", str(cancelled)], env=self.env)
                break
            time.sleep(0.2)
        try:
            rc = proc.wait(timeout=600)
        except subprocess.TimeoutExpired:
            stop_running()
            rc = None  # Snakemake never noticed the cancelled job

        text = log.read_text(errors="replace")
        failed_ok = (
            cancelled is not None
            and rc != 0
            and re.search(rf"SLURM-job '{cancelled}' failed, SLURM status is: 'CANCELLED", text) is not None
            and not (model_dir / "model.safetensors").exists()
            and checkpoint_complete(model_dir / LAST_DIR)
        )
        detail = f"scancel {cancelled} after epoch 1: Snakemake exit {rc}, complete last/ kept"
        self.record("cancel-fails", failed_ok, detail)
        rc2, wall, text2 = self.snakemake(workdir, "cancel-rerun", target, configs=[conf])
        training = (
            json.loads((model_dir / "training.json").read_text()) if (model_dir / "training.json").exists() else {}
        )
        resumed = training.get("resumed_from_epoch", 0)
        ok = rc2 == 0 and len(submissions(text2)) == 1 and resumed >= 1 and not (model_dir / "last").exists()
        self.figures["cancel"] = {
            "slurm_job": cancelled,
            "rerun_resumed_from_epoch": resumed,
            "rerun_wall_s": round(wall, 1),
        }
        return self.record("cancel-rerun", ok, f"rerun exit {rc2}, resumed from epoch {resumed} of 6")

    def ddp(self) -> bool:
        """One pre-training job with nproc_per_node 2 (model.device auto -> gpu=2 -> --gpus=2), torchrun inside."""
        workdir = self._copy_run("ddp")
        conf = self._configfile("ddp", {"pretrain": {"nproc_per_node": 2}, "model": {"device": "auto"}})
        model_dir = workdir / "models" / "pretrain" / DDP_VARIANT
        single = json.loads(
            (self.scratch / "runs" / "slurm" / model_dir.relative_to(workdir) / "training.json").read_text()
        )
        rc, wall, log = self.snakemake(
            workdir, "ddp", f"models/pretrain/{DDP_VARIANT}/model.safetensors", configs=[conf]
        )
        if not self.record("ddp-run", rc == 0, f"exit {rc}, {wall:.0f} s"):
            return False
        records = self.cluster.sacct("--name", run_id(log))
        bad = resource_mismatches(records, self.profile, gpu_of_rule=lambda rule: 2)
        self.record("ddp-resources", len(records) == 1 and not bad, "; ".join(bad) or f"{record_resources(records[0])}")
        job_log = (workdir / "logs" / "pretrain" / f"{DDP_VARIANT}.log").read_text(errors="replace")
        training = json.loads((model_dir / "training.json").read_text())
        steps, single_steps = training["history"][-1]["global_step"], single["history"][-1]["global_step"]
        files = sorted(p.name for p in model_dir.iterdir())
        single_files = sorted(
            p.name for p in (self.scratch / "runs" / "slurm" / model_dir.relative_to(workdir)).iterdir()
        )
        ok = (
            "relaunching under torchrun" in job_log
            and training["world_size"] == 2
            and steps == single_steps // 2  # each rank takes every 2nd batch (docs/design.md)
            and files == single_files  # the same checkpoint files, written once (rank 0), no last/
        )
        self.figures["ddp"] = {"world_size": training["world_size"], "steps": steps, "single_process_steps": single_steps,
                               "files": files, "wall_s": round(wall, 1)}  # fmt: skip
        return self.record("ddp", ok, f"world_size {training['world_size']}, {steps} steps vs {single_steps} "
                           f"single-process, files {files}")  # fmt: skip


def _default_sigint() -> None:
    """In a started Snakemake: SIGINT to its default, so stop_running's SIGINT reaches it even when this
    script was started in the background of a non-interactive shell (which ignores SIGINT for its children)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


RUNNING: list[subprocess.Popen] = []  # Snakemake processes started, ended first when the check is interrupted


def stop_running() -> None:
    """SIGINT to each live Snakemake (it cancels its SLURM jobs while the cluster is still up), then SIGKILL."""
    for proc in RUNNING:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def shlex_quote(s: str) -> str:
    import shlex

    return shlex.quote(s)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--scratch", type=Path, default=Path(os.environ.get("WIKIREF_SLURM_DIR", "/tmp/wikiref-slurm")))
    ap.add_argument("--local-run", type=Path, help="an existing local tiny run to compare with (else one is made)")
    ap.add_argument("--broken-overlay", action="store_true", help=f"partitions -> {BROKEN_PARTITION}: must fail")
    ap.add_argument(
        "--skip", action="append", default=[], choices=["cancel", "ddp", "outputs"], help="leave a check out"
    )
    ap.add_argument(
        "--slurm-run",
        type=Path,
        help="a finished SLURM run folder (SCRATCH/runs/slurm of an earlier check) to start the cancel and ddp "
        "checks from, instead of the whole run and its checks",
    )
    ap.add_argument("--print-overlay", action="store_true", help="print the overlay profile and exit")
    args = ap.parse_args(argv)
    args.scratch = args.scratch.resolve()
    return args


def run_checks(check: Check) -> None:
    if not check.env_probe():
        return
    if check.args.slurm_run:
        shutil.copytree(check.args.slurm_run, check.scratch / "runs" / "slurm", symlinks=True)
    else:
        if not check.main_run():
            return
        check.second_run()
        if "outputs" not in check.args.skip:
            check.outputs(check.local_run())
    if "cancel" not in check.args.skip:
        check.cancel()
    if "ddp" not in check.args.skip:
        check.ddp()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.print_overlay:
        import yaml

        shipped = yaml.safe_load((SHIPPED_PROFILE / "config.yaml").read_text())
        print(yaml.safe_dump(overlay_profile(shipped, PARTITIONS, ACCOUNT), sort_keys=False), end="")
        return 0
    if os.geteuid() != 0:
        print("slurm_check: needs root (it installs and starts SLURM's daemons)", file=sys.stderr)
        return 2
    if args.scratch.exists():
        shutil.rmtree(args.scratch)
    args.scratch.mkdir(parents=True)
    start = time.monotonic()
    install_missing()
    cluster = Cluster(args.scratch)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # -> finally: the daemons stop
    check = None
    try:
        cluster.up()
        check = Check(args, cluster)
        run_checks(check)
    finally:
        stop_running()
        cluster.stop()
    if check is None:
        return 1
    check.figures["total_wall_s"] = round(time.monotonic() - start, 1)
    failed = [name for name, ok, _ in check.results if not ok]
    summary = {"passed": not failed, "failed": failed, "checks": check.results, **check.figures}
    (args.scratch / "summary.json").write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: summary[k] for k in summary if k not in ("checks", "slurm_job_ids")}))
    return 1 if failed or not check.results else 0


if __name__ == "__main__":
    sys.exit(main())
