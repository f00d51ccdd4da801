"""bench/train_gpu.py (issue 29) on the CPU with a tiny encoder: the real loop, the bare loop over the same
batches and the bare loop with a 4D mask print their rates; their mean losses agree (the bench's own check),
and a tolerance no run can meet makes it exit 1."""

from __future__ import annotations

import json
import subprocess
import sys


def _run(repo, env, *args):
    cmd = [sys.executable, "bench/train_gpu.py", "--device", "cpu", "--quick", "--examples", "64", *args]
    return subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, timeout=600)


def test_train_gpu_bench_on_cpu(repo, subprocess_env, tmp_path):
    proc = _run(repo, subprocess_env, "--profile", str(tmp_path / "prof"))
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    lines = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert lines[0]["matmul_tflops"] > 0
    modes = {x["mode"]: x for x in lines if x.get("shape") == "tiny"}
    assert set(modes) == {"real", "bare", "bare-mask4d", "profile"}
    for m in ("real", "bare", "bare-mask4d"):
        assert modes[m]["windows_per_second"] > 0 and modes[m]["achieved_tflops"] >= 0
        assert modes[m]["windows"] == modes["real"]["windows"] and modes[m]["steps"] == modes["real"]["steps"]
    summary = lines[-1]["summary"]["tiny"]
    assert summary["loss_rel_diff"] <= 0.05 and lines[-1]["losses_differ"] == []
    assert (tmp_path / "prof" / "tiny" / "by_cpu.txt").read_text().strip()
    assert modes["profile"]["profiled_steps"] >= 1


def test_train_gpu_bench_exits_1_when_losses_differ(repo, subprocess_env):
    proc = _run(repo, subprocess_env, "--loss-tolerance", "-1")
    assert proc.returncode == 1
    assert json.loads(proc.stdout.splitlines()[-1])["losses_differ"] == ["tiny"]
