"""bench/biencoder.py: the bi scorer's length-bucketed training step against one padded block (tiny encoder,
synthetic items); nothing is timed or compared with a speed here."""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.slow

ARGS = ["--encoder", "tiny-random", "--data", "synthetic", "--steps", "1", "--warmup-steps", "0", "--repeats", "2"]


def _lines(capsys) -> dict:
    out = [json.loads(x) for x in capsys.readouterr().out.splitlines() if x.startswith("{")]
    return {(x["bench"], x.get("mode"), x.get("repeat")): x for x in out}


def test_bench_compares_the_two_layouts_and_agrees(load_bench, capsys):
    bench = load_bench("biencoder")
    assert bench.main(ARGS) == 0
    lines = _lines(capsys)
    assert lines[("env", None, None)]["data"] == "synthetic"
    assert {(m, r) for (b, m, r) in lines if b == "biencoder"} == {(m, r) for m in bench.MODES for r in (0, 1)}
    s = lines[("summary", None, None)]
    assert s["differs"] is False and s["max_score_difference"] <= 1e-3
    # the encoder saw fewer padded tokens per real token with the buckets (synthetic lengths: mostly short)
    assert 1.0 <= s["padded_tokens_ratio"]["bucketed"] < s["padded_tokens_ratio"]["padded"]
    assert s["speedup"] > 0 and set(s["seconds_per_step"]) == set(bench.MODES)


def test_bench_exits_1_when_the_layouts_score_differently(load_bench, capsys, monkeypatch):
    from wikiref.model import biencoder

    bench = load_bench("biencoder")
    # buckets 8 tokens wide: every longer sentence is cut, so the bucketed scores are not the padded ones
    monkeypatch.setattr(biencoder, "length_buckets", lambda lengths: ((0, len(lengths), 8),))
    assert bench.main(ARGS) == 1
    assert _lines(capsys)[("summary", None, None)]["differs"] is True


def test_bench_runs_a_random_encoder_of_gpu_check_shape_with_amp_requested(load_bench, capsys):
    """What a GPU machine without the MiniLM weights runs (``--encoder random-minilm``), here in its tiny shape;
    ``--amp on`` is a no-op off CUDA, and the env line says what was asked."""
    bench = load_bench("biencoder")
    assert bench.main(["--encoder", "random-tiny", "--data", "synthetic", "--steps", "1", "--warmup-steps", "0",
                       "--repeats", "1", "--amp", "on"]) == 0  # fmt: skip
    lines = _lines(capsys)
    env = lines[("env", None, None)]
    assert env["amp"] is True and env["encoder"] == "random-tiny"
    assert lines[("summary", None, None)]["differs"] is False
