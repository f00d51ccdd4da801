"""bench/train.py (nothing is timed): a small run of its three modes and the loss check (tiny-random encoder,
synthetic data), the loss comparison, and exit status 1 when padding changes a loss."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "train.py"
SMALL = ["--encoder", "tiny-random", "--max-length", "256", "--stride", "64", "--windows", "12", "--batch-size", "4"]


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("train")


def _args(perturb: bool) -> argparse.Namespace:
    return argparse.Namespace(
        threads=1,
        encoder="tiny-random",
        max_length=256,
        stride=64,
        attention_dropout=None,
        windows=12,
        batch_size=4,
        perturb=perturb,
    )


@pytest.fixture(scope="module")
def checks(bench):
    """The loss check without and with the padding bug (``--perturb``), on the synthetic data."""
    old = bench.SHARED
    bench.SHARED = Path("/nonexistent/shared/data")
    try:
        return {p: bench.loss_child(_args(p)) for p in (False, True)}
    finally:
        bench.SHARED = old


def test_the_loss_check_pads_three_ways_and_the_losses_agree(bench, checks):
    check = checks[False]
    assert check["data"] == "synthetic"
    pads = check["pad_tokens"]
    # the comparison means something: the batches are padded, to max_length more than to their longest window
    assert 0 < pads["collate"] == pads["hf-collator"] < pads["pad-to-max"]
    assert len(set(check["sentences"].values())) == 1
    assert all(len(v) == check["batches"] for v in check["per_batch_loss"].values())
    cmp = bench.compare_losses(check)
    assert cmp["same"] is True and cmp["max_per_batch_diff"] <= 1e-4 and cmp["max_mean_diff"] <= 1e-4


def test_a_padding_bug_is_caught(bench, checks):
    """--perturb lets the pad-to-max batches attend to their pad tokens: the per-batch losses differ."""
    cmp = bench.compare_losses(checks[True])
    assert cmp["same"] is False and cmp["max_per_batch_diff"] > 1e-4
    assert checks[True]["per_batch_loss"]["collate"] == checks[False]["per_batch_loss"]["collate"]


def test_compare_losses(bench):
    check = {
        "per_batch_loss": {"collate": [1.0, 2.0], "hf-collator": [1.0, 2.0], "pad-to-max": [1.00005, 2.0]},
        "mean_sentence_loss": {"collate": 0.5, "hf-collator": 0.5, "pad-to-max": 0.5, "bucketed": 0.50002},
        "sentences": {"collate": 6, "hf-collator": 6, "pad-to-max": 6, "bucketed": 6},
    }
    cmp = bench.compare_losses(check)
    assert cmp["same"] is True
    assert cmp["max_per_batch_diff"] == pytest.approx(5e-5) and cmp["max_mean_diff"] == pytest.approx(2e-5)
    assert bench.compare_losses(check, tolerance=1e-5)["same"] is False
    other = json.loads(json.dumps(check))
    other["mean_sentence_loss"]["bucketed"] = 0.6
    assert bench.compare_losses(other)["same"] is False
    other = json.loads(json.dumps(check))
    other["sentences"]["bucketed"] = 5
    assert bench.compare_losses(other)["same"] is False
    other = json.loads(json.dumps(check))
    other["per_batch_loss"]["pad-to-max"].pop()
    assert bench.compare_losses(other)["max_per_batch_diff"] == float("inf")


def test_padded_tokens(bench):
    assert bench.padded_tokens([3, 9, 16], [[0, 1], [2]], None) == 2 * 16 + 16
    assert bench.padded_tokens([3, 9, 16], [[0, 1], [2]], 32) == 3 * 32
    assert bench.padded_tokens([3, 9, 16], [[0], [1], [2]], None) == 8 + 16 + 16


def test_dynamic_mode_is_unbucketed(bench):
    """bucket_batches=1 makes epoch_batches a plain shuffled cut: not sorted by length, every window once."""
    from wikiref.model.packing import PackedWindow
    from wikiref.model.training import epoch_batches

    windows = [PackedWindow(0, [1] * n, [0] * n, (1, 1)) for n in range(1, 41)]
    dyn = epoch_batches(windows, 4, bench.BUCKET_BATCHES["dynamic"], 0, 0)
    buck = epoch_batches(windows, 4, bench.BUCKET_BATCHES["real"], 0, 0)
    assert sorted(i for b in dyn for i in b) == list(range(40))
    spread = [max(b) - min(b) for b in dyn]  # lengths are index + 1
    assert max(spread) > 3 and max(max(b) - min(b) for b in buck) == 3


def test_main_exits_1_when_losses_or_tokens_differ(bench, monkeypatch, capsys):
    mode_rec = {
        k: 1.0
        for k in (
            "train_tokens_per_s",
            "train_tokens_per_cpu_s",
            "infer_tokens_per_s",
            "train_windows_per_s",
            "infer_windows_per_s",
            "train_windows_per_cpu_s",
            "infer_windows_per_cpu_s",
            "peak_rss_mb",
        )
    }
    mode_rec.update(train_padded_tokens=10, real_tokens=8)
    good = {
        "per_batch_loss": {"collate": [1.0], "hf-collator": [1.0], "pad-to-max": [1.0]},
        "mean_sentence_loss": {"collate": 0.5, "hf-collator": 0.5, "pad-to-max": 0.5, "bucketed": 0.5},
        "sentences": {"collate": 2, "hf-collator": 2, "pad-to-max": 2, "bucketed": 2},
    }
    bad = json.loads(json.dumps(good))
    bad["per_batch_loss"]["pad-to-max"] = [1.1]
    for check, tokens, code in ((good, 8, 0), (bad, 8, 1), (good, 7, 1)):

        def fake(args, mode, out, check=check, tokens=tokens):
            if mode == "losses":
                return check
            return dict(mode_rec, real_tokens=tokens if mode == "naive" else 8)

        monkeypatch.setattr(bench, "_run_child", fake)
        assert bench.main([]) == code
        summary = json.loads(capsys.readouterr().out.splitlines()[-1])
        assert summary["same_losses"] is (check is good) and summary["same_real_tokens"] is (tokens == 8)


@pytest.mark.slow
def test_small_run(tmp_path, subprocess_env):
    env = dict(subprocess_env, WIKIREF_SHARED_DATA=str(tmp_path / "no-shared"))
    res = subprocess.run(
        [sys.executable, str(BENCH), *SMALL, "--threads", "1", "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0, res.stderr[-3000:]
    lines = [json.loads(line) for line in res.stdout.splitlines()]
    check, modes, summary = lines[0], lines[1:4], lines[4]
    assert check["loss_check"] is True and check["data"] == "synthetic" and check["perturbed"] is False
    assert [m["mode"] for m in modes] == ["bucketed-dynamic", "dynamic-unbucketed", "naive-pad-to-max"]
    assert len({m["real_tokens"] for m in modes}) == 1 and len({m["windows"] for m in modes}) == 1
    padded = summary["train_padded_tokens"]
    assert summary["real_tokens"] <= padded["bucketed-dynamic"] <= padded["dynamic-unbucketed"]
    assert padded["dynamic-unbucketed"] < padded["naive-pad-to-max"] == 256 * modes[0]["windows"]
    for key in ("train_tokens_per_s", "train_tokens_per_cpu_s", "infer_tokens_per_s", "peak_rss_mb"):
        assert set(summary[key]) == {"bucketed-dynamic", "dynamic-unbucketed", "naive-pad-to-max"}
        assert all(v > 0 for v in summary[key].values())
    ratio = summary["train_tokens_per_s"]["bucketed-dynamic"] / summary["train_tokens_per_s"]["dynamic-unbucketed"]
    assert summary["train_speedup_bucketed_vs_dynamic"] == pytest.approx(ratio)
    assert summary["same_losses"] is True and summary["losses"]["same"] is True and summary["same_real_tokens"]
