"""Weight interpolation between a scorer's start and its fine-tuned weights, the mixing weight chosen on dev.

``theta(alpha) = (1 - alpha) * theta_start + alpha * theta_tuned`` for every floating-point tensor of the state
(integer buffers such as position ids are the tuned model's): alpha 0 is the start (for a bi scorer started
from a sentence-embedding encoder, the encoder's own cosine ranking), alpha 1 the fine-tuned scorer. This is
WiSE-FT (Wortsman et al., "Robust fine-tuning of zero-shot models", CVPR 2022): fine-tuning on a few hundred
queries moves an embedding model away from what its pre-training learned, and a point between the two often
ranks queries unlike the training ones better than either end. :func:`choose` scores every alpha of a grid with
the caller's dev metric and leaves the best in the model.

Written here because it is a few lines over ``state_dict`` (``torch.lerp``); the libraries that offer model
merging (e.g. ``mergekit``) target causal language models and their files, not this scorer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import torch

log = logging.getLogger(__name__)


def snapshot(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A copy of the model's state on the CPU (what :func:`interpolate` reads as either end)."""
    return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}


def interpolate(
    model: torch.nn.Module, start: Mapping[str, torch.Tensor], tuned: Mapping[str, torch.Tensor], alpha: float
) -> None:
    """Load ``(1 - alpha) * start + alpha * tuned`` into ``model`` (each tensor on the device and in the dtype of
    the model's own); the two states must have the model's keys and shapes."""
    if not 0.0 <= alpha <= 1.0:
        raise ValueError(f"alpha {alpha} not in [0, 1]")
    own = model.state_dict()
    if set(start) != set(own) or set(tuned) != set(own):
        missing = sorted(set(own) ^ set(start)) + sorted(set(own) ^ set(tuned))
        raise ValueError(f"the states do not match the model: {missing[:5]}")
    mixed = {}
    for key, ref in own.items():
        a, b = start[key].to(ref.device), tuned[key].to(ref.device)
        if a.shape != ref.shape or b.shape != ref.shape:
            raise ValueError(f"{key}: shapes {tuple(a.shape)} / {tuple(b.shape)}, the model's {tuple(ref.shape)}")
        if ref.is_floating_point():
            mixed[key] = torch.lerp(a.float(), b.float(), alpha).to(ref.dtype)
        else:
            mixed[key] = b
    model.load_state_dict(mixed)


@dataclass
class Choice:
    """What :func:`choose` found: the chosen alpha, its dev metric, and every alpha's metric."""

    alpha: float
    metric: float
    by_alpha: dict[float, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"alpha": self.alpha, "metric": self.metric, "by_alpha": {str(a): m for a, m in self.by_alpha.items()}}


def choose(
    model: torch.nn.Module,
    start: Mapping[str, torch.Tensor],
    alphas: Sequence[float],
    metric: Callable[[torch.nn.Module], float],
) -> Choice:
    """Score ``model`` interpolated from ``start`` towards its current (fine-tuned) weights at every alpha of
    ``alphas`` with ``metric(model)`` (higher is better), leave the best in the model and return the choice. Ties
    go to the larger alpha (closer to the scorer that training chose). 1.0 is always tried."""
    grid = sorted({float(a) for a in alphas} | {1.0})
    tuned = snapshot(model)
    by_alpha = {}
    for a in grid:
        interpolate(model, start, tuned, a)
        by_alpha[a] = float(metric(model))
        log.info("interpolation alpha %.2f: dev metric %.4f", a, by_alpha[a])
    best = max(grid, key=lambda a: (by_alpha[a], a))
    interpolate(model, start, tuned, best)
    return Choice(best, by_alpha[best], by_alpha)
