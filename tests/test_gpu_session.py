"""scripts/gpu-session: the steps of one lent GPU session, each with its own time limit (run here on the CPU with
tiny settings; nothing is timed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "scripts" / "gpu-session"


def _run(tmp_path: Path, *args: str) -> tuple[int, dict]:
    out = tmp_path / "out"
    p = subprocess.run([sys.executable, str(SCRIPT), "--device", "cpu", "--quick", "--out", str(out), *args],
                       capture_output=True, text=True, timeout=300)  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert json.loads(p.stdout.strip().splitlines()[-1]) == summary
    return p.returncode, summary


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


def test_a_step_past_its_limit_is_killed_recorded_and_fails_the_session(tmp_path):
    rc, summary = _run(tmp_path, "--steps", "biencoder", "--limits", "biencoder=0.5")
    step = summary["steps"][0]
    assert rc == 1 and summary["ok"] is False
    assert step["timed_out"] is True and step["ok"] is False and step["seconds"] < 60


def test_unknown_steps_are_refused(tmp_path):
    p = subprocess.run([sys.executable, str(SCRIPT), "--steps", "train", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=60)  # fmt: skip
    assert p.returncode == 2 and "unknown steps ['train']" in p.stderr
