"""Smoke test: the whole workflow on config/tiny.yaml, in a scratch copy of the project, then DVC on top.

The copy holds the repository's tracked files with ``params.yaml`` = params.yaml merged with the overlay
``config/tiny.yaml`` (what ``wikiref params --configfile config/tiny.yaml --show`` prints; ``dvc.yaml``
regenerated for it) in its own git repository, so Snakemake and DVC run there exactly as in a clone.
In order (one Snakemake run, shared by every test of this module):

* every target of every stage is produced, with the content it promises: row counts that agree across
  stages (checked against a second count taken another way), every CSV row and every metrics file
  labelled STAND-IN, no WikiRef article or document in the STAND-IN DUC, the metrics keys of the profile;
* a second run has nothing to do; a parameter change plans exactly the jobs that depend on it;
* ``git status`` lists nothing after the run, and only ``dvc.lock`` after ``dvc commit`` (``make dvc-commit``);
* DVC shares Snakemake's state: after ``dvc commit`` ``dvc status`` is clean; a report setting reruns the
  report stage alone, and inside it the report job alone; a curation threshold reruns curate and what depends
  on it, and inside curate the merge, not the spaCy part jobs; afterwards both tools agree again that nothing
  is left to do.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml

from wikiref import config, layout
from wikiref.registry import all_targets, stages

pytestmark = [pytest.mark.slow, pytest.mark.first]  # its one Snakemake run bounds the suite: started first

BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def env(subprocess_env) -> dict:
    return {
        **subprocess_env,
        "DVC_NO_ANALYTICS": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }


def _run(cmd: list[str], cwd: Path, env: dict, timeout: float = 1500) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def project(repo, tmp_path_factory, env) -> Path:
    """A scratch project: the tracked files (as in the working tree), params.yaml = params.yaml + config/tiny.yaml."""
    root = tmp_path_factory.mktemp("tiny-project")
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=repo, capture_output=True, check=True).stdout
    for name in filter(None, tracked.decode().split("\0")):
        src = repo / name
        if src.is_file():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, root / name)
    tiny = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    (root / "params.yaml").write_text(yaml.safe_dump(tiny, sort_keys=False, default_flow_style=None, width=120))
    for cmd in (
        [str(BIN / "wikiref"), "dvc-yaml", "--write"],
        ["git", "init", "-q"],
        ["git", "add", "-A"],
        ["git", "commit", "-q", "-m", "tiny project"],
    ):
        res = _run(cmd, root, env)
        assert res.returncode == 0, res.stderr[-3000:]
    return root


def snakemake(project: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    cmd = [str(BIN / "snakemake"), "--profile", "workflow/profiles/default", "--cores", "2", "--resources", "gpu=1"]
    return _run(cmd + list(args), project, env)


def dvc(project: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return _run([str(BIN / "dvc"), *args], project, env)


@pytest.fixture(scope="module")
def read_audit(project, env, repo, tmp_path_factory) -> subprocess.CompletedProcess | None:
    """The one Snakemake run of this module, under scripts/read_audit.py (strace) when strace is installed:
    its output lists every file a job read without its rule declaring it."""
    if shutil.which("strace") is None:
        res = snakemake(project, env)
        assert res.returncode == 0, res.stderr[-6000:]
        return None
    trace = tmp_path_factory.mktemp("read-audit") / "trace"
    cmd = [str(BIN / "snakemake"), "--profile", "workflow/profiles/default", "--cores", "2", "--resources", "gpu=1"]
    audit = [sys.executable, str(repo / "scripts" / "read_audit.py"), "--run-dir", ".", "--trace", str(trace)]
    res = _run([*audit, "--", *cmd], project, env)
    assert "traced command exited" not in res.stdout, res.stderr[-6000:]
    return res


@pytest.fixture(scope="module")
def tiny_run(project, read_audit) -> Path:
    return project


def test_every_job_reads_only_declared_files(tiny_run, read_audit):
    """Every file a job opened for reading inside the run directory (strace) is a declared input of its rule,
    its own output or scratch: a change to any file a job reads reruns it (scripts/read_audit.py)."""
    if read_audit is None:
        pytest.skip("strace not found (.ci/install-deps installs it)")
    lines = [json.loads(x) for x in read_audit.stdout.splitlines() if x.startswith("{")]
    assert lines and lines[-1]["jobs"] > 50, read_audit.stdout[-3000:]
    assert [x for x in lines if "read" in x or "unmapped_job_log" in x] == []
    assert read_audit.returncode == 0


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


def _descendants(edges, start: str) -> set[str]:
    """The nodes reachable from ``start`` (itself included) over ``edges`` ((parent, child) pairs)."""
    children: dict[str, set[str]] = {}
    for a, b in edges:
        children.setdefault(a, set()).add(b)
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(children.get(node, ()))
    return seen


def _rule_descendants(dot: str, start: str) -> set[str]:
    """The rules downstream of ``start`` in `snakemake --rulegraph` (DOT) output, ``start`` included."""
    names = dict(re.findall(r'^\s*(\d+)\[label = "(\w+)"', dot, flags=re.M))
    return _descendants(((names[a], names[b]) for a, b in re.findall(r"^\s*(\d+) -> (\d+)", dot, flags=re.M)), start)


def _ran_jobs(out: str) -> set[str]:
    """The Snakemake rules that ran, from its log lines ("rule x:" / "localrule x:")."""
    return set(re.findall(r"^(?:local)?rule (\w+):$", out, flags=re.M))


def _ran_stages(out: str) -> set[str]:
    return set(re.findall(r"^Running stage '(\w+)'", out, flags=re.M))


# ---------------------------------------------------------------------------------------------- Snakemake


def test_all_targets_exist(tiny_run):
    params = config.load_params(tiny_run / "params.yaml")
    missing = [t for t in all_targets(params) if not (tiny_run / t).exists()]
    assert not missing, f"missing outputs: {missing}"


def test_outputs_agree_and_are_labelled(tiny_run):
    """Content, not existence: counts agree across stages, labels reach every CSV and metrics file."""
    r = tiny_run
    params = config.load_params(r / "params.yaml")
    metrics = {p.name: json.loads(p.read_text()) for p in (r / layout.METRICS).glob("*.json")}
    # row counts: curate kept == split examples == sum of the split files (parquet metadata) == oracle rows
    split_rows = {s: pq.ParquetFile(r / layout.SPLIT_FILE.format(split=s)).metadata.num_rows for s in layout.SPLITS}
    assert metrics["curate.json"]["kept"] == metrics["split.json"]["examples"] == sum(split_rows.values()) > 0
    assert metrics["split.json"]["sizes"] == split_rows
    for s in layout.SPLITS:
        assert len(pd.read_parquet(r / layout.ORACLE_FILE.format(split=s))) == split_rows[s]
        assert metrics["oracle.json"]["splits"][s]["examples"] == split_rows[s]
    # every page of the tiny profile is a stand-in: the data says so, and so does every metrics file
    assert metrics["curate.json"]["standin_examples"] == metrics["curate.json"]["kept"]
    unlabelled = [name for name, m in metrics.items() if m.get("standin") is not True]
    assert not unlabelled, f"metrics files without standin: true: {unlabelled}"
    # every CSV of a table or figure says STAND-IN on every row (rows quoting the paper say "paper")
    csvs = sorted((r / layout.TABLES).glob("*.csv")) + sorted((r / layout.FIGURES).glob("*.csv"))
    declared = {o for st in stages(params) for o in st.outs if o.endswith(".csv")}
    assert {str(c.relative_to(r)) for c in csvs} == declared  # every CSV written is a declared output
    for csv in csvs:
        df = pd.read_csv(csv)
        assert "Data" in df.columns and "STAND-IN" in set(df["Data"]), csv.name
        assert set(df["Data"]) <= {"STAND-IN", "paper"}, csv.name
    # the STAND-IN DUC shares no article and no cited document with the WikiRef splits
    manifest = json.loads((r / params["duc"]["root"] / "MANIFEST.json").read_text())
    topics = [t for y in manifest["years"].values() for t in y["topics"]]
    splits = pd.concat(pd.read_parquet(r / layout.SPLIT_FILE.format(split=s)) for s in layout.SPLITS)
    assert topics and not {t["article"] for t in topics} & set(splits["article"])
    assert not {k for t in topics for k in t["doc_keys"]} & set(splits["doc_key"])
    assert manifest["held_out"]["wikiref_examples"] == len(splits)
    # metrics keys of this profile
    assert set(metrics["pretrain.json"]["variants"]) == {v["name"] for v in params["pretrain"]["variants"]}
    assert set(metrics["duc_baselines.json"]["systems"]) == set(params["duc"]["baselines"])
    assert metrics["report.json"]["standin"] is True and metrics["report.json"]["figures"] >= 1


def test_second_run_does_nothing(tiny_run, env):
    res = snakemake(tiny_run, env, "-n")
    assert res.returncode == 0, res.stderr[-3000:]
    assert "Nothing to be done" in res.stdout + res.stderr


# A curation threshold re-plans the merge and everything downstream of the curated examples, nothing else
# (not the spaCy part jobs, not the other sources, not QMSum's or WCEP's own steps).
CURATE_DEPENDANTS = {
    "curate_merge",
    "split",
    "oracle",
    "duc_standin",
    "duc_prepare",
    "duc_baselines",
    "duc_table5",
    "abstractive_train",  # the runs with duc: true read data/duc
    "abstractive_table",
    "pretrain_variant",
    "pretrain_table",
    "finetune_job",
    "finetune_prune",
    "finetune_table",
    "ablations_pretrain",
    "ablations_finetune",
    "ablations_collect",
    "compare_oracle",
    "compare_pretrain",
    "compare_duc",
    "compare_qmsum",
    "compare_abstractive",  # trains on the compare oracle's rows (the split's WikiRef examples) and reads data/duc
    "compare_table",
    "humaneval_sample",  # samples the oracle split (and DUC / finetune outputs)
    "humaneval_score",
    "report",
    "all",
}


def test_param_change_plans_exactly_dependent_steps(tiny_run, tmp_path, env):
    """Changing one value of a section re-plans the rules that read it and everything downstream, exactly."""
    changed = yaml.safe_load((tiny_run / "params.yaml").read_text())
    changed["curate"]["min_lemma_recall"] = round(changed["curate"]["min_lemma_recall"] + 0.01, 4)
    overlay = tmp_path / "changed.yaml"
    overlay.write_text(yaml.safe_dump(changed))
    res = snakemake(tiny_run, env, "-n", "--configfile", str(overlay))
    assert res.returncode == 0, res.stderr[-3000:]
    planned = _planned_rules(res.stdout + res.stderr)
    assert planned == CURATE_DEPENDANTS
    # cross-check: the same set is what the rule graph puts downstream of the merge
    graph = snakemake(tiny_run, env, "--rulegraph")
    assert graph.returncode == 0, graph.stderr[-3000:]
    assert _rule_descendants(graph.stdout, "curate_merge") == CURATE_DEPENDANTS


# ----------------------------------------------------------------------------------------------------- DVC


def _set_param(project: Path, path: str, value) -> None:
    params = yaml.safe_load((project / "params.yaml").read_text())
    node = params
    *parents, leaf = path.split(".")
    for key in parents:
        node = node[key]
    node[leaf] = value
    (project / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def _dvc_descendants(project: Path, env: dict, stage: str) -> set[str]:
    """Stages downstream of ``stage`` (itself included), from `dvc dag --dot`."""
    res = dvc(project, env, "dag", "--dot")
    assert res.returncode == 0, res.stderr[-3000:]
    return _descendants(re.findall(r'^\s*"?(\w+)"?\s*->\s*"?(\w+)"?', res.stdout, flags=re.M), stage)


def test_a_sample_run_leaves_a_clean_tree(tiny_run, env):
    """What `make sample` writes (the workflow's outputs, DVC's .gitignore entries, dvclive's folders) is ignored
    by git, in a project holding the tracked files as a clone does: `git status` lists nothing. `make dvc-commit`
    then writes dvc.lock, the one file a DVC user commits (DVC refuses a git-ignored lock). The report step of
    `make sample` is left out: it writes results/report.html, under the ignored results/ like every other result."""
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], tiny_run, env)
    assert status.returncode == 0, status.stderr[-3000:]
    assert status.stdout.splitlines() == [], status.stdout[-3000:]
    res = dvc(tiny_run, env, "commit", "--force", "--quiet")  # make dvc-commit
    assert res.returncode == 0, res.stderr[-3000:]
    status = _run(["git", "status", "--porcelain", "--untracked-files=all"], tiny_run, env)
    assert status.stdout.splitlines() == ["?? dvc.lock"], status.stdout[-3000:]


def test_dvc_shares_snakemakes_state(tiny_run, env):
    p = tiny_run
    res = dvc(p, env, "commit", "--force", "--quiet")  # make dvc-commit
    assert res.returncode == 0, res.stderr[-3000:]
    status = dvc(p, env, "status")
    assert status.returncode == 0 and "Data and pipelines are up to date." in status.stdout, status.stdout[-3000:]

    # a report setting: the report stage alone, and inside it the report job alone
    params = yaml.safe_load((p / "params.yaml").read_text())
    _set_param(p, "report.dpi", int(params["report"]["dpi"]) + 10)
    changed = json.loads(dvc(p, env, "status", "--json").stdout)
    assert set(changed) == {"report"}
    res = dvc(p, env, "repro")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    assert _ran_stages(out) == {"report"}
    assert _ran_jobs(out) == {"report", "report_all"}
    assert "Data and pipelines are up to date." in dvc(p, env, "status").stdout

    # a QMSum setting: the stages that read it (qmsum, compare) and their dependants; inside qmsum the baselines only
    # (prepare does not read it), inside compare the QMSum-scoring jobs only. (A curation threshold, tried first,
    # reruns the whole model chain: about six of the suite's twenty minutes; `-n` plans of such changes are
    # test_param_change_plans_exactly_dependent_steps.)
    _set_param(p, "qmsum.summary_words", int(params["qmsum"]["summary_words"]) + 5)
    assert set(json.loads(dvc(p, env, "status", "--json").stdout)) == {"qmsum", "compare"}
    res = dvc(p, env, "repro")
    out = res.stdout + res.stderr
    assert res.returncode == 0, out[-6000:]
    stages = _ran_stages(out)
    assert {"qmsum", "compare"} <= stages <= _dvc_descendants(p, env, "qmsum") | _dvc_descendants(p, env, "compare")
    assert not stages & {"sample", "collect", "curate", "split", "oracle", "pretrain", "finetune", "duc"}
    jobs = _ran_jobs(out)
    assert {"qmsum_baselines", "compare_qmsum", "compare_table"} <= jobs, jobs
    assert not jobs & {"qmsum_standin", "qmsum_prepare", "compare_pretrain", "compare_duc", "compare_oracle"}, jobs
    # both tools agree again: nothing left to do
    assert "Data and pipelines are up to date." in dvc(p, env, "status").stdout
    res = snakemake(p, env, "-n")
    assert "Nothing to be done" in res.stdout + res.stderr
