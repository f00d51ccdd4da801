"""scripts/gpu-check (issue 29) end to end on the CPU, on a subset of its jobs with a tiny encoder: every line
is valid JSON, the jobs pass their own checks (resume, reload, decoding, frozen entries, DDP, parity) and the
rates file is written. The whole list runs with ``scripts/gpu-check --device cpu --quick`` (slower)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# the jobs the test selects: by name, and by pattern (with the one job each pattern selects on the CPU)
NAMED_JOBS = [
    "pretrain/classification/query",
    "finetune/subnet",
    "finetune/iterative",
    "finetune/bi",
    "abstractive/seq2seq/pgn/lstm",
    "abstractive/hiersumm/hs-joint",
]
PATTERN_JOBS = {"ltr/*": "ltr/embed-rank", "ddp/*": "ddp/one-process", "parity/*": "parity/cpu-vs-cpu"}


@pytest.mark.slow
def test_gpu_check_quick_on_cpu(repo, subprocess_env, tmp_path):
    rates = tmp_path / "rates.json"
    jobs = ",".join([*NAMED_JOBS, *PATTERN_JOBS])
    cmd = [sys.executable, "scripts/gpu-check", "--device", "cpu", "--quick", "--jobs", jobs]
    proc = subprocess.run(
        [*cmd, "--rates", str(rates)], cwd=repo, env=subprocess_env, capture_output=True, text=True, timeout=1200
    )
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    by_job = {x["job"]: x for x in lines}
    assert set(by_job) == {*NAMED_JOBS, *PATTERN_JOBS.values(), "summary"}
    assert all(x["ok"] for x in lines)
    assert by_job["pretrain/classification/query"]["resumed"] is True
    assert by_job["pretrain/classification/query"]["windows_per_second"] > 0
    assert by_job["abstractive/hiersumm/hs-joint"]["beam_summary_tokens"] > 0
    assert by_job["finetune/iterative"]["sparsity"] >= 0.9 - 1e-9
    assert by_job["finetune/bi"]["resumed"] is True
    assert by_job["parity/cpu-vs-cpu"]["dev_loss_rel_diff"] == 0.0  # the same device twice: identical
    assert by_job["ltr/embed-rank"]["embed_max_abs_diff"] == 0.0  # the same device twice: identical
    assert by_job["ltr/embed-rank"]["mean_spearman_cpu_vs_device"] == 1.0
    assert by_job["ddp/one-process"]["backend"] == "gloo" and by_job["ddp/one-process"]["dev_loss_rel_diff"] == 0.0
    assert json.loads(rates.read_text())["device"] == "cpu"


@pytest.mark.slow
def test_gpu_check_fails_without_cuda_when_asked_for_it(repo, subprocess_env):
    import pytest
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the no-device path is not reachable")
    proc = subprocess.run(
        [sys.executable, "scripts/gpu-check"], cwd=repo, env=subprocess_env, capture_output=True, text=True
    )
    assert proc.returncode == 1
    assert json.loads(proc.stdout.splitlines()[-1])["ok"] is False


def test_parity_models_draw_no_dropout(load_script, tmp_path):
    """The CPU / CUDA parity job compares two trainings; CUDA and the CPU draw dropout masks from different
    generators (the first H100 run: dev losses 6 % apart), so its models must have every dropout off."""
    import argparse

    import torch

    gc = load_script("gpu-check")
    r = gc.Runner(argparse.Namespace(device="cpu", quick=True, jobs="*", rates=None, keep=None), tmp_path)
    off, _ = gc.scorer(r, "regression", "query", dropout=False)
    on, _ = gc.scorer(r, "regression", "query")
    assert off.encoder.config.attention_probs_dropout_prob == 0.0
    assert all(m.p == 0.0 for m in off.modules() if isinstance(m, torch.nn.Dropout))
    assert any(m.p > 0.0 for m in on.modules() if isinstance(m, torch.nn.Dropout))  # the other jobs keep theirs
    a, b = {k: v for k, v in off.state_dict().items()}, on.state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)  # same seed, same weights


@pytest.mark.slow
def test_selecting_a_fine_tuning_job_runs_the_pre_training_it_starts_from(repo, subprocess_env):
    """``--jobs finetune/full`` alone failed on an H100 (its pre-trained folder was never written): the job it
    starts from now runs first, and only that one."""
    cmd = [sys.executable, "scripts/gpu-check", "--device", "cpu", "--quick", "--jobs", "finetune/full"]
    proc = subprocess.run(cmd, cwd=repo, env=subprocess_env, capture_output=True, text=True, timeout=600)
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert [x["job"] for x in lines] == ["pretrain/classification/query", "finetune/full", "summary"]
