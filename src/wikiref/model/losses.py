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

On an accelerator the ranking losses never make the host wait for the device: boolean indexing, ``any()``,
``unique`` and per-group loops each copy a value or a size to the host (a synchronisation per step, three to
four per group), so there they are written over masks of the batch's (sentences x sentences) pairs instead. On
the CPU, where nothing waits, the indexed forms are used (``tests/test_host_syncs.py``: the two forms agree to
float rounding, and a training step on an emulated accelerator makes no synchronisation of its own).
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
    diff = s.unsqueeze(1) - s.unsqueeze(0)  # diff[i, j] = s_i - s_j
    if s.device.type != "cpu":  # masked: the mean over the pairs without a host synchronisation (module docstring)
        terms = torch.where(pairs, -F.logsigmoid(diff), 0.0)
        return terms.sum() / pairs.sum().clamp(min=1)
    if not bool(pairs.any()):
        return s.sum() * 0.0
    return -F.logsigmoid(diff[pairs]).mean()


def listwise(
    outputs: torch.Tensor, targets: torch.Tensor, groups: torch.Tensor | None = None, temperature: float = 1.0
) -> torch.Tensor:
    """ListNet top-one cross-entropy per group (groups of one sentence carry no ranking and are left out)."""
    s, t = outputs.float(), targets.float()
    if groups is None:
        groups = torch.zeros(s.numel(), dtype=torch.long, device=s.device)
    if s.device.type != "cpu":
        return _listwise_masked(s, t / temperature, groups)
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


def _group_log_softmax(x: torch.Tensor, same: torch.Tensor) -> torch.Tensor:
    """``log_softmax`` of ``x`` within each sentence's group (``same[i, j]``: i and j share a group)."""
    rows = torch.where(same, x.unsqueeze(0), float("-inf"))
    return x - torch.logsumexp(rows, dim=1)


def _listwise_masked(s: torch.Tensor, t: torch.Tensor, groups: torch.Tensor) -> torch.Tensor:
    """:func:`listwise` over masks (no host synchronisation): every sentence's share of its group's
    cross-entropy, summed per group through the group sizes, the mean over groups of two or more."""
    same = _same_group(groups, s.numel(), s.device)
    size = same.sum(dim=1)  # each sentence's group size
    ranked = size >= 2
    share = -(_group_log_softmax(t, same).exp() * _group_log_softmax(s, same))
    n_groups = (ranked.float() / size.float()).sum().round()  # a group of k sentences counts k times 1/k
    total = torch.where(ranked, share, 0.0).sum()
    return total / n_groups.clamp(min=1.0)


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
