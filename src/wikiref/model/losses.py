"""Losses of the sentence scorer over one batch of sentences (``loss`` in params: mse | pairwise | listwise | bce).

Every loss takes the raw outputs (one per sentence of the batch), the targets and ``groups`` (one id per
sentence: the ranking unit, e.g. the QMSum query or DUC document a sentence belongs to; the scorer's
batches carry it as ``sent_group``). The ranking losses compare sentences of the same group only, and
only those that are in the batch (a batch holds windows, each a run of one document's sentences).

* ``mse`` - mean squared error (journal eq. 5/7);
* ``bce`` - binary cross-entropy on logits (eq. 4/6; targets are 0/1 labels, or soft labels in [0, 1]);
* ``pairwise`` - RankNet (Burges et al., 2005): ``log(1 + exp(-(s_i - s_j)))`` over every pair of one group
  with ``t_i > t_j``, the mean over the pairs of the batch;
* ``listwise`` - ListNet top-one (Cao et al., 2007): per group the cross-entropy between
  ``softmax(t / temperature)`` and ``softmax(s)``, the mean over groups of two or more sentences.

torch has MSE / BCE / margin-ranking losses but no grouped ListNet or RankNet; these are a few lines over
its primitives (``torch.nn.functional.logsigmoid``, ``log_softmax``). A batch with no pair (no group of two
sentences with different targets) gives a zero loss that still depends on the outputs, so backward works.
"""

from __future__ import annotations

import torch
from torch.nn import functional as F

LOSSES = ("mse", "pairwise", "listwise", "bce")


def mse(outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None) -> torch.Tensor:
    return F.mse_loss(outputs.float(), targets.float())


def bce(outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None) -> torch.Tensor:
    return F.binary_cross_entropy_with_logits(outputs.float(), targets.float())


def _same_group(groups: torch.Tensor | None, n: int, device: torch.device) -> torch.Tensor:
    if groups is None:
        return torch.ones((n, n), dtype=torch.bool, device=device)
    return groups.unsqueeze(0) == groups.unsqueeze(1)


def pairwise(outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None) -> torch.Tensor:
    """RankNet over the ordered pairs (i, j) of one group with targets[i] > targets[j]."""
    s, t = outputs.float(), targets.float()
    pairs = _same_group(groups, s.numel(), s.device) & (t.unsqueeze(1) > t.unsqueeze(0))
    if not bool(pairs.any()):
        return s.sum() * 0.0
    diff = s.unsqueeze(1) - s.unsqueeze(0)  # diff[i, j] = s_i - s_j
    return -F.logsigmoid(diff[pairs]).mean()


def listwise(
    outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """ListNet top-one cross-entropy per group (groups of one sentence carry no ranking and are left out)."""
    s, t = outputs.float(), targets.float()
    if groups is None:
        groups = torch.zeros(s.numel(), dtype=torch.long, device=s.device)
    losses = []
    for g in torch.unique(groups):  # a batch holds few groups (a handful of windows)
        member = groups == g
        if int(member.sum()) < 2:
            continue
        p = torch.softmax(t[member] / temperature, dim=0)
        losses.append(-(p * torch.log_softmax(s[member], dim=0)).sum())
    if not losses:
        return s.sum() * 0.0
    return torch.stack(losses).mean()


def compute(
    name: str, outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None
) -> torch.Tensor:
    """The loss ``name`` (one of :data:`LOSSES`) of one batch."""
    if name == "mse":
        return mse(outputs, targets)
    if name == "bce":
        return bce(outputs, targets)
    if name == "pairwise":
        return pairwise(outputs, targets, groups)
    if name == "listwise":
        return listwise(outputs, targets, groups)
    raise ValueError(f"loss {name!r} not in {LOSSES}")
