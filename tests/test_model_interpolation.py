"""wikiref.model.interpolation: the start-to-fine-tuned weight path and the dev choice along it."""

from __future__ import annotations

import pytest
import torch
from emulated_device import emulated_accelerator
from torch import nn

from wikiref.model import interpolation


class Tiny(nn.Module):
    def __init__(self, fill: float) -> None:
        super().__init__()
        self.lin = nn.Linear(2, 1)
        self.register_buffer("steps", torch.tensor([int(fill)], dtype=torch.long))
        with torch.no_grad():
            self.lin.weight.fill_(fill)
            self.lin.bias.fill_(-fill)


def test_interpolate_walks_float_weights_and_keeps_the_tuned_integer_buffers():
    start, tuned = interpolation.snapshot(Tiny(0.0)), interpolation.snapshot(Tiny(4.0))
    model = Tiny(9.0)
    for alpha, want in ((0.0, 0.0), (0.25, 1.0), (0.5, 2.0), (1.0, 4.0)):
        interpolation.interpolate(model, start, tuned, alpha)
        assert torch.equal(model.lin.weight, torch.full((1, 2), want))
        assert torch.equal(model.lin.bias, torch.full((1,), -want))
        assert model.steps.tolist() == [4]  # not interpolated: the fine-tuned model's


def test_interpolate_refuses_a_foreign_state_or_an_alpha_off_the_path():
    model, start = Tiny(1.0), interpolation.snapshot(Tiny(0.0))
    with pytest.raises(ValueError, match="not in"):
        interpolation.interpolate(model, start, start, 1.5)
    with pytest.raises(ValueError, match="do not match"):
        interpolation.interpolate(model, {"lin.weight": start["lin.weight"]}, start, 0.5)
    wide = {**start, "lin.weight": torch.zeros(1, 3)}
    with pytest.raises(ValueError, match="shapes"):
        interpolation.interpolate(model, wide, start, 0.5)


def test_choose_leaves_the_best_dev_point_in_the_model():
    """The metric peaks at weight 1.0 (alpha 0.25 between 0 and 4); 1.0 is tried although not asked for."""
    model, start = Tiny(4.0), interpolation.snapshot(Tiny(0.0))
    seen = []

    def metric(m):
        seen.append(m.lin.weight.detach()[0, 0].item())
        return -abs(m.lin.weight.detach()[0, 0].item() - 1.0)

    choice = interpolation.choose(model, start, [0.5, 0.25, 0.0], metric)
    assert seen == [0.0, 1.0, 2.0, 4.0]  # the grid in order, ending at the fine-tuned weights
    assert choice.alpha == 0.25 and choice.metric == 0.0 and set(choice.by_alpha) == {0.0, 0.25, 0.5, 1.0}
    assert model.lin.weight.detach()[0, 0].item() == 1.0  # the chosen point stays loaded
    assert choice.to_dict()["by_alpha"]["0.25"] == 0.0


def test_choose_breaks_ties_towards_the_fine_tuned_end():
    model, start = Tiny(4.0), interpolation.snapshot(Tiny(0.0))
    choice = interpolation.choose(model, start, [0.0, 0.5], lambda m: 7.0)
    assert choice.alpha == 1.0 and model.lin.weight.detach()[0, 0].item() == 4.0


def test_a_scorer_on_the_accelerator_interpolates_from_a_cpu_snapshot():
    """The start is kept on the CPU; each mixed tensor is made on the device of the model's own."""
    from wikiref.model.scorer import ScorerConfig, build_scorer

    config = ScorerConfig(encoder="tiny-random", pooling="mean", max_length=32, stride=16, pairing="bi")
    torch.manual_seed(0)
    start_model, _ = build_scorer(config)
    start = interpolation.snapshot(start_model)
    torch.manual_seed(1)
    tuned_model, _ = build_scorer(config)
    tuned = interpolation.snapshot(tuned_model)
    assert all(v.device.type == "cpu" for v in start.values())
    with emulated_accelerator() as device:
        model = tuned_model.to(device)
        interpolation.interpolate(model, start, tuned, 0.5)
        got = {k: v for k, v in model.state_dict().items()}
        assert all(v.device == device for v in got.values())
        key = next(k for k, v in start.items() if v.is_floating_point() and not torch.equal(v, tuned[k]))
        want = (start[key] + tuned[key]) / 2
        assert torch.allclose(got[key].cpu(), want, atol=1e-6)
