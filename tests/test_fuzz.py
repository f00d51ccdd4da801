"""bench/fuzz.py: every stored crashing input is now handled cleanly (accepted or rejected with the reader's own
error), every target runs a small fixed budget of derandomized inputs without a crash (and accepts some of them:
the structured strategies reach past the first check), and the harness itself detects a crash (counted, the shrunk
input saved, exit status 1), a hang, and tells a clean rejection from a crash."""

from __future__ import annotations

import importlib.util
import io
import json
import sys
import time
from pathlib import Path

import pytest
from hypothesis import strategies as st

BENCH = Path(__file__).resolve().parents[1] / "bench" / "fuzz.py"
REGRESSIONS = Path(__file__).resolve().parent / "fuzz_regressions"
BUDGET = 100  # generated inputs per target: the whole file stays well under a minute on one core


def _load():
    spec = importlib.util.spec_from_file_location("bench_fuzz", BENCH)
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_fuzz"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


fuzz = _load()


@pytest.mark.parametrize("path", sorted(REGRESSIONS.glob("*.json")), ids=lambda p: p.stem)
def test_regression_inputs_are_handled(path):
    record = json.loads(path.read_text(encoding="utf-8"))
    assert record["target"] in fuzz.TARGETS, f"{path.name}: unknown target {record['target']!r}"
    outcome, exc = fuzz.replay(path)
    assert outcome in ("ok", "rejected"), f"{path.name} ({record['error']}) still crashes: {exc!r}"


def test_regressions_exist_for_the_fixed_crashes():
    # One stored input per crash found and fixed (bench/fuzz.py's first campaign); replayed above.
    assert len(list(REGRESSIONS.glob("*.json"))) >= 5


@pytest.mark.parametrize("name", list(fuzz.TARGETS))
@pytest.mark.slow
def test_target_short_budget(name, tmp_path):
    result = fuzz.fuzz(fuzz.TARGETS[name], max_examples=BUDGET, derandomize=True, out_dir=tmp_path, timeout=60)
    assert not result.crashes, f"{name}: {result.to_json()['errors']} (inputs saved in {tmp_path})"
    assert result.inputs >= BUDGET
    assert result.inputs > result.rejected, f"{name}: every input was rejected: the strategy reaches nothing"


def _dummy(run, strategy=None, rejects=()):
    return fuzz.Target("dummy", strategy if strategy is not None else st.text(max_size=30), run, rejects)


def _crash_on_long(text: str) -> None:
    if len(text) >= 3:
        [][len(text)]  # IndexError: the kind of bug the harness is looking for


def test_harness_counts_saves_and_fails_on_a_crash(tmp_path):
    out = io.StringIO()
    argv = ["--max-examples", "200", "--targets", "dummy", "--derandomize", "--out-dir", str(tmp_path)]
    status = fuzz.main(argv, targets={"dummy": _dummy(_crash_on_long)}, out=out)
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert status == 1
    assert lines[0]["target"] == "dummy" and lines[0]["crashes"] == 1 and lines[0]["inputs"] >= 1
    assert lines[-1] == {"summary": True, "targets": 1, "inputs": lines[0]["inputs"], "crashes": 1}
    saved = list(tmp_path.glob("dummy-*.json"))
    assert [str(p) for p in saved] == lines[0]["crash_files"] == [lines[0]["crash_file"]]
    record = json.loads(saved[0].read_text(encoding="utf-8"))
    assert record["error"].startswith("IndexError") and "IndexError at" in record["where"]
    assert len(fuzz.decode(record["input"])) == 3  # shrunk by hypothesis to the shortest crashing text
    outcome, exc = fuzz.replay(saved[0], targets={"dummy": _dummy(_crash_on_long)})
    assert outcome == "crash" and isinstance(exc, IndexError)


def test_harness_passes_clean_rejections(tmp_path):
    def reject(text: str) -> None:
        if text:
            raise ValueError("bad input")

    out = io.StringIO()
    argv = ["--max-examples", "50", "--targets", "dummy", "--derandomize", "--out-dir", str(tmp_path)]
    status = fuzz.main(argv, targets={"dummy": _dummy(reject, rejects=(ValueError,))}, out=out)
    line = json.loads(out.getvalue().splitlines()[0])
    assert status == 0 and line["crashes"] == 0 and line["rejected"] > 0
    assert not list(tmp_path.iterdir())


@pytest.mark.slow
def test_harness_reports_a_hang_and_a_systemexit(tmp_path):
    def spin(_value) -> None:
        end = time.monotonic() + 10
        while time.monotonic() < end:
            pass

    result = fuzz.fuzz(_dummy(spin, st.just(0)), max_examples=1, timeout=0.2, out_dir=tmp_path)
    assert [e.split(":")[0] for e in result.to_json()["errors"]] == ["Hang"]
    outcome, exc = fuzz.check(_dummy(lambda _v: sys.exit(2), rejects=(ValueError,)), "x")
    assert outcome == "crash" and isinstance(exc, SystemExit)


def test_stored_inputs_round_trip():
    value = (b"\x00\xff", ["a", {"k": (1, None)}], "t")
    assert fuzz.decode(json.loads(json.dumps(fuzz.encode(value)))) == value
