"""wikiref.extractive.official: per-example official scores and the paired comparison of two systems."""

from __future__ import annotations

import numpy as np
import pytest

from wikiref.extractive import official

REFS = {
    "q1": ["the council approved the new budget for schools"],
    "q2": ["the team discussed the remote control design and its buttons"],
    "q3": ["costs of the project rose because of the new materials"],
}
GOOD = {
    "q1": ["the council approved the budget for schools"],
    "q2": ["the remote control design and its buttons were discussed"],
    "q3": ["the new materials made the costs of the project rise"],
}
BAD = {"q1": ["we talked about lunch"], "q2": ["the remote is grey"], "q3": ["costs were discussed"]}


def test_per_example_f1_averages_to_the_system_score():
    res = official.score(GOOD, REFS, per_example=True)
    for metric in official.MEASURE_OF:
        per = res[metric]["f1_by_example"]
        assert sorted(per) == sorted(REFS)
        # ROUGE-1.5.5 prints the mean of its bootstrap resamples' means: the plain mean within a few 1e-3 here
        assert np.mean(list(per.values())) == pytest.approx(res[metric]["f1"], abs=0.05)
    assert "f1_by_example" not in official.score(GOOD, REFS)["rouge2"]  # opt-in: the stages' files do not change


def test_paired_difference_of_a_better_system():
    good = official.score(GOOD, REFS, per_example=True)["rouge2"]["f1_by_example"]
    bad = official.score(BAD, REFS, per_example=True)["rouge2"]["f1_by_example"]
    d = official.paired_difference(good, bad, resamples=2000, seed=1)
    assert d["n"] == 3 and d["difference"] == pytest.approx(np.mean([good[k] - bad[k] for k in REFS]))
    assert d["difference"] > 0 and d["ci"][0] > 0 and d["p"] == 0.0  # every query better: every resample too
    back = official.paired_difference(bad, good, resamples=2000, seed=1)
    assert back["difference"] == pytest.approx(-d["difference"]) and back["p"] == 1.0


def test_paired_difference_knows_noise_from_a_difference():
    rng = np.random.default_rng(0)
    base = {str(i): float(v) for i, v in enumerate(rng.uniform(0, 20, 400))}
    noisy = {k: v + float(rng.normal(0, 3)) for k, v in base.items()}  # no true difference
    shifted = {k: v + 1.0 + float(rng.normal(0, 3)) for k, v in base.items()}  # +1 on average
    same = official.paired_difference(noisy, base, seed=2)
    assert same["ci"][0] < 0 < same["ci"][1] and 0.05 < same["p"] < 0.95
    better = official.paired_difference(shifted, base, seed=2)
    assert better["ci"][0] > 0 and better["p"] < 0.01
    assert official.paired_difference(shifted, base, seed=2) == better  # seeded


def test_paired_result_scaled_and_as_text():
    d = {"difference": 0.008712, "ci": [0.00301, 0.01449], "p": 0.0031, "n": 40}
    x = official.scaled(d, 100)
    assert x == {"difference": 0.8712, "ci": [0.301, 1.449], "p": 0.0031, "n": 40} and d["difference"] == 0.008712
    assert official.paired_text(x) == "+0.87 (p 0.003)"
    assert official.paired_text(x, ci=True) == "+0.87 (+0.30 to +1.45, p 0.003)"
    assert official.paired_text({**x, "difference": -1.5}) == "-1.50 (p 0.003)"


def test_paired_difference_refuses_different_examples():
    with pytest.raises(ValueError, match="same examples; 1 differ"):
        official.paired_difference({"a": 1.0, "b": 2.0}, {"a": 1.0})
    with pytest.raises(ValueError, match="no examples"):
        official.paired_difference({}, {})
