"""bench/abstractive.py (nothing is timed): a --quick run's output shape and exit code, exit 1 when batched and
one-at-a-time decoding differ, the GPU-hours arithmetic, the synthetic data and the padding counts."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench" / "abstractive.py"


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("abstractive")


@pytest.fixture(scope="module")
def quick_run(subprocess_env):
    res = subprocess.run(
        [sys.executable, str(BENCH), "--quick", "--threads", "1", "--max-decode", "6"],
        capture_output=True,
        text=True,
        env=subprocess_env,
    )
    return res


@pytest.mark.slow
def test_quick_run_output(bench, quick_run):
    assert quick_run.returncode == 0, quick_run.stderr[-3000:]
    lines = [json.loads(line) for line in quick_run.stdout.splitlines()]
    cases, summary = lines[:-1], lines[-1]
    assert [(c["model"], c["size"]) for c in cases] == [(m, "tiny") for m in bench.MODELS]
    assert [c["variant"] for c in cases] == ["s2s", "pgn", "baseline", "hs-joint[hierarchical+ordering+query]"]
    for c in cases:
        assert c["bench"] == "abstractive" and c["identical"] is True and c["data"] == "synthetic (seeded)"
        train = c["train"]
        assert set(train) == {"bucketed", "random"}
        assert train["bucketed"]["tokens"] == train["random"]["tokens"] > 0
        for mode in train.values():
            assert mode["tokens_per_s"] > 0 and 0 <= mode["padding_fraction"] < 1
            assert mode["padded_slots"] > mode["tokens"]
        # length bucketing pads less than random batches of the same examples
        assert train["bucketed"]["padding_fraction"] < train["random"]["padding_fraction"]
        assert set(c["decode"]) == {"beam5", "greedy"}
        for d in c["decode"].values():
            assert d["identical"] is True and d["differing_examples"] == []
            assert d["batched"]["summaries_per_s"] > 0 and d["one_at_a_time"]["summaries_per_s"] > 0
        assert c["decode_settings"]["beam5"] == {"beam": 5, "block_trigrams": True, "length_penalty": 0.4}
        assert c["child_maxrss_mb"] > 0 and "VmRSS" in c["memory_method"]
    assert summary["summary"] is True and summary["all_identical"] is True and summary["quick"] is True
    keys = {f"{m}:tiny" for m in bench.MODELS}
    for key in ("train_tokens_per_s", "padding_fraction", "decode_summaries_per_s", "rss_growth_mb", "identical"):
        assert set(summary[key]) == keys
    assert "VmRSS" in summary["memory_method"]
    assert "speedup_note" in summary["estimate"]["assumptions"]


@pytest.mark.slow
def test_a_decoding_difference_exits_1(bench, monkeypatch, capsys):
    """One-at-a-time decoding that drops a word of the first summary: the run must report it and exit 1."""
    real = bench.one_at_a_time

    def broken(cfg, model, vocab, examples, settings):
        out = real(cfg, model, vocab, examples, settings)
        return [out[0][:-1] if out[0] else ["x"], *out[1:]]

    monkeypatch.setattr(bench, "one_at_a_time", broken)
    code = bench.main(["--quick", "--in-process", "--models", "s2s", "--threads", "1", "--max-decode", "5"])
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert code == 1
    case, summary = lines
    assert case["identical"] is False
    assert all(d["differing_examples"] == [0] and d["identical"] is False for d in case["decode"].values())
    assert summary["all_identical"] is False and summary["identical"] == {"s2s:tiny": False}


def _fake_case(tokens_per_s: float, target_share: float = 0.1) -> dict:
    return {"train": {"bucketed": {"tokens_per_s": tokens_per_s, "tokens": 1000}}, "target_share": target_share}


def test_gpu_hours_estimate(bench):
    args = bench.parse_args(["--speedup", "10", "--psg2sum-epochs", "2"])
    results = {("s2s", "paper"): _fake_case(100.0), ("hs-base", "paper"): _fake_case(1000.0, 0.2)}
    est = bench.estimate(results, args)
    assert est["assumptions"]["speedup_gpu_over_this_cpu"] == 10
    tokens = 92_118 * (118.26 + 22.20 + 1) * 2
    assert est["psg2sum"]["train_tokens"] == pytest.approx(tokens)
    assert est["psg2sum"]["s2s"]["gpu_hours"] == pytest.approx(tokens / 1000 / 3600)
    assert est["psg2sum"]["s2s"]["cpu_hours"] == pytest.approx(tokens / 100 / 3600)
    assert "pgn" not in est["psg2sum"]
    hs_tokens = 500_000 * (8_000 / 0.8) * 2 * 4
    hs = est["herosumm"]
    assert hs["train_tokens"] == pytest.approx(hs_tokens)
    assert hs["hs-base"]["gpu_hours"] == pytest.approx(hs_tokens / 10_000 / 3600)
    assert hs["paper_reported_gpu_hours"] == pytest.approx(2.2 * 24 * 4)
    assert hs["hs-base"]["speedup_matching_reported"] == pytest.approx(hs_tokens / 1000 / 3600 / (2.2 * 24 * 4))
    assert "not given" in est["psg2sum"]["assumptions"]["epochs_note"]
    assert bench.estimate({}, args).keys() == {"assumptions", "psg2sum"}


def test_synthetic_data_and_token_counts(bench):
    a = bench.synthetic_items("seq2seq", 20, 2000, seed=0)
    assert a == bench.synthetic_items("seq2seq", 20, 2000, seed=0)
    assert all(q == [] and len(docs) == 1 and 10 <= len(docs[0]) <= 400 and 3 <= len(s) <= 100 for q, docs, s in a)
    h = bench.synthetic_items("hiersumm", 10, 2000, seed=1)
    assert all(4 <= len(docs) <= 8 and all(10 <= len(d) <= 200 for d in docs) and q for q, docs, _ in h)
    for name, items in (("pgn", a[:4]), ("hs-base", h[:3]), ("hs-all", h[:3])):
        cfg, vocab, examples = bench.build(name, "tiny", items)
        assert len(vocab) == cfg.vocab_size == 2000
        batch = bench.collate(cfg, examples)
        real, slots = bench.token_counts(cfg, examples, batch)
        if name == "pgn":
            expected = sum(len(d[0]) + len(s) + 1 for _, d, s in items)
            assert any(n > 0 for n in batch["n_oov"].tolist())  # the synthetic words go past the vocabulary
        else:
            query = 0 if cfg.query_encoder else sum(len(q) for q, _, _ in items)
            expected = sum(sum(len(x) for x in d) + len(s) + 1 for _, d, s in items) + query
        assert real == expected and slots == sum(
            int(t.numel()) for k, t in batch.items() if k in ("src", "docs", "dec_in")
        )
    assert bench.build("hs-all", "paper", h[:1])[0].local_layers == 5  # HS A.3: 5 local + 1 query + 2 global


def test_argument_errors(bench):
    with pytest.raises(SystemExit):
        bench.parse_args(["--models", "s2s,transformer"])
    assert bench.parse_args(["--quick"]).sizes == ["tiny"]
    assert bench.parse_args([]).sizes == list(bench.SIZES)


def test_gpu_hours_from_measured_rates(bench, tmp_path):
    """--gpu-rates (scripts/gpu-check --rates): GPU-hours from the measured tokens/s, beside the --speedup ones."""
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"device": "x", "abstractive_seq2seq_tokens_per_second": 5000.0}))
    args = bench.parse_args(["--psg2sum-epochs", "2", "--gpu-rates", str(rates)])
    results = {("s2s", "paper"): _fake_case(100.0), ("hs-base", "paper"): _fake_case(1000.0, 0.2)}
    est = bench.estimate(results, args)
    tokens = 92_118 * (118.26 + 22.20 + 1) * 2
    assert est["psg2sum"]["s2s"]["gpu_hours_measured"] == pytest.approx(tokens / 5000 / 3600)
    assert "gpu_hours_measured" not in est["herosumm"]["hs-base"]  # no hiersumm rate in the file
    assert "gpu_hours_measured" not in bench.estimate(results, bench.parse_args([]))["psg2sum"]["s2s"]
