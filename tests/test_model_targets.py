"""Target transforms (wikiref.model.targets) and scorer losses (wikiref.model.losses)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from wikiref.model import losses
from wikiref.model.targets import TargetTransform, load_transform, save_transform, top_labels, transform_groups

GROUPS = [[0.0, 0.01, 0.03, 0.0], [0.02, 0.005], [0.0]]


def _value(t: torch.Tensor) -> float:
    """A scalar loss as a float, without autograd's warning about converting a tensor that requires grad."""
    return float(t.detach())


@pytest.mark.parametrize("name", ["standardise", "cluster_norm", "query_norm", "rank"])
def test_transforms_do_not_depend_on_the_rouge_magnitude(name):
    a = transform_groups(TargetTransform(name).fit(GROUPS), GROUPS)
    scaled = [[100 * x for x in g] for g in GROUPS]
    b = transform_groups(TargetTransform(name).fit(scaled), scaled)
    for ga, gb in zip(a, b):
        assert np.allclose(ga, gb)


def test_raw_scales_and_inverts():
    t = TargetTransform("raw", scale=100.0)
    assert t.apply([0.01, 0.5]) == pytest.approx([1.0, 50.0])
    assert t.inverse(t.apply([0.01, 0.5])) == pytest.approx([0.01, 0.5])


def test_standardise_uses_training_statistics_only_and_inverts():
    t = TargetTransform("standardise").fit(GROUPS)
    flat = np.concatenate([np.asarray(g) for g in GROUPS])
    assert t.mean == pytest.approx(flat.mean()) and t.std == pytest.approx(flat.std())
    assert np.mean(np.concatenate(transform_groups(t, GROUPS))) == pytest.approx(0.0, abs=1e-9)
    dev = [[0.2, 0.0]]  # applied with the training statistics, not its own
    out = t.apply(dev[0])
    assert out[0] == pytest.approx((0.2 - t.mean) / t.std)
    assert t.inverse(out) == pytest.approx(dev[0])
    with pytest.raises(ValueError, match="fit"):
        TargetTransform("standardise").apply([1.0])
    with pytest.raises(ValueError, match="no inverse"):
        TargetTransform("rank").inverse([1.0])


def test_group_transforms_normalise_within_the_named_group():
    t = TargetTransform("cluster_norm")
    per_example = transform_groups(t, [[1.0, 3.0], [5.0, 7.0]])
    assert per_example == [pytest.approx([-1.0, 1.0]), pytest.approx([-1.0, 1.0])]
    together = transform_groups(t, [[1.0, 3.0], [5.0, 7.0]], groups=["c", "c"])
    flat = np.array([1.0, 3.0, 5.0, 7.0])
    assert np.concatenate(together) == pytest.approx((flat - flat.mean()) / flat.std())
    assert transform_groups(TargetTransform("rank"), [[0.3, 0.1, 0.3, 0.0], [4.0]]) == [
        pytest.approx([5 / 6, 1 / 3, 5 / 6, 0.0]),
        [0.5],
    ]
    assert transform_groups(t, [[2.0, 2.0]]) == [[0.0, 0.0]]  # constant group: no division by zero


def test_transform_round_trips_through_its_file(tmp_path):
    t = TargetTransform("standardise").fit(GROUPS)
    save_transform(t, tmp_path)
    back = load_transform(tmp_path)
    assert back == t
    assert load_transform(tmp_path / "missing") is None
    with pytest.raises(ValueError, match="not in"):
        TargetTransform("log")
    with pytest.raises(ValueError, match="positive"):
        TargetTransform("raw", scale=0)


def test_top_labels():
    assert top_labels([0.1, 0.0, 0.3, 0.1], 2) == [1.0, 0.0, 1.0, 0.0]
    assert top_labels([0.0, 0.0], 3) == [0.0, 0.0]  # only positive values are labelled


def _batch():
    out = torch.tensor([0.5, -0.2, 1.0, 0.3, 0.0], requires_grad=True)
    tgt = torch.tensor([1.0, 0.0, 2.0, 0.5, 0.1])
    grp = torch.tensor([0, 0, 0, 1, 1])
    return out, tgt, grp


def test_pairwise_is_ranknet_over_pairs_of_one_group():
    out, tgt, grp = _batch()
    s = out.detach().tolist()
    pairs = [(0, 1), (2, 0), (2, 1), (3, 4)]  # (better, worse) within groups 0 and 1
    expected = np.mean([math.log1p(math.exp(-(s[i] - s[j]))) for i, j in pairs])
    loss = losses.pairwise(out, tgt, grp)
    assert _value(loss) == pytest.approx(expected, rel=1e-6)
    loss.backward()
    assert out.grad is not None and torch.isfinite(out.grad).all()


def test_listwise_is_listnet_per_group():
    out, tgt, grp = _batch()
    expected = []
    for members in ([0, 1, 2], [3, 4]):
        p = torch.softmax(tgt[members], 0)
        expected.append(float(-(p * torch.log_softmax(out.detach()[members], 0)).sum()))
    assert _value(losses.listwise(out, tgt, grp)) == pytest.approx(np.mean(expected), rel=1e-6)
    # a perfect ordering scores lower than the reversed one
    good = losses.listwise(tgt * 3, tgt, grp)
    bad = losses.listwise(-tgt * 3, tgt, grp)
    assert _value(good) < _value(bad)


def test_ranking_losses_without_pairs_are_zero_but_differentiable():
    out = torch.tensor([0.5, 0.1], requires_grad=True)
    tgt = torch.tensor([1.0, 2.0])
    grp = torch.tensor([0, 1])  # two groups of one sentence: nothing to rank
    for fn in (losses.pairwise, losses.listwise):
        loss = fn(out, tgt, grp)
        assert _value(loss) == 0.0
        loss.backward()


def test_compute_matches_torch_for_mse_and_bce():
    out, tgt, grp = _batch()
    assert _value(losses.compute("mse", out, tgt, grp)) == pytest.approx(_value(torch.nn.functional.mse_loss(out, tgt)))
    labels = (tgt > 0.4).float()
    assert _value(losses.compute("bce", out, labels)) == pytest.approx(
        _value(torch.nn.functional.binary_cross_entropy_with_logits(out, labels))
    )
    with pytest.raises(ValueError, match="not in"):
        losses.compute("hinge", out, tgt)


def test_scorer_config_checks_the_loss_against_the_head():
    from wikiref.model.scorer import ScorerConfig

    assert ScorerConfig(encoder="tiny-random", head="regression").loss_name == "mse"
    assert ScorerConfig(encoder="tiny-random", head="classification").loss_name == "bce"
    assert "loss" not in ScorerConfig(encoder="tiny-random").to_dict()  # old config.json files unchanged
    c = ScorerConfig(encoder="tiny-random", head="regression", loss="listwise")
    assert ScorerConfig.from_dict(c.to_dict()).loss == "listwise"
    with pytest.raises(ValueError, match="does not fit"):
        ScorerConfig(encoder="tiny-random", head="regression", loss="bce")
    with pytest.raises(ValueError, match="not in"):
        ScorerConfig(encoder="tiny-random", head="regression", loss="hinge")
