"""Sparse subnetwork fine-tuning (ST, journal §III-F, §V-B, Table IX).

One-step identification (the paper's ST): in every parameter tensor of the encoder's transformer
layers, the ``fraction`` (0.10 in the paper) of entries with the largest magnitude of the *starting*
weights are trainable; every other encoder-layer entry is frozen. The input embeddings, the pooling
parameters (Q-BERT's ``W_q``) and the output head are always fully trainable. All weights take part
in the forward pass: nothing is zeroed.

Iterative identification (Table IX "ITERATIVE"): gradual magnitude pruning (Zhu & Gupta 2017,
"To prune, or not to prune") while training on WikiRef. The sparsity follows the cubic schedule

    s_t = s_f + (s_i - s_f) * (1 - (t - t0) / (n * dt))**3,   t in {t0, t0 + dt, ..., t0 + n * dt}

(held between pruning steps, 0 before ``t0``); at each pruning step the smallest-magnitude surviving
entries of each tensor are pruned (set to zero and kept at zero). The survivors at the end are the
subnetwork that is then fine-tuned (pruned entries stay zero and frozen).

Both are applied with two hooks of :func:`wikiref.model.training.train`:

* ``grad_hook`` (after backward, before clipping): gradients of frozen entries are set to zero, so
  the clipping norm and AdamW's moments only see the subnetwork;
* ``step_hook`` (after each optimizer step): frozen entries are written back from a copy of their
  starting values (pruned entries: zero). AdamW's decoupled weight decay moves every entry of a
  decayed matrix, and momentum from before a pruning step would move newly pruned ones, so masking
  gradients alone is not enough; the write-back makes frozen entries bit-for-bit unchanged.

Which parameters are "encoder layers": :func:`maskable_parameters` - the parameters of
``model.encoder`` outside its embeddings module (``encoder.embeddings.*``); for BERT-family encoders
these are ``encoder.encoder.layer.<i>.*``. One-dimensional tensors (biases, LayerNorm) follow
``vectors``: ``topk`` (the same per-tensor rule as matrices; the paper's "each parameter matrix"
read as every parameter tensor), ``frozen`` or ``trainable``.

Ties in magnitude are broken by the lower flat index, so a mask is a pure function of the weights,
and every tensor keeps exactly :func:`keep_count` entries.

Masks are written as safetensors (uint8, one tensor per parameter name): :func:`save_masks` /
:func:`load_masks`.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import torch
from torch import nn

VECTOR_MODES = ("topk", "frozen", "trainable")
MASKS_FILE = "subnet_masks.safetensors"


# --------------------------------------------------------------------------- which parameters


def is_maskable(name: str) -> bool:
    """An encoder-layer parameter of a :class:`~wikiref.model.SentenceScorer` (not embeddings, pooling or head)."""
    return name.startswith("encoder.") and not name.startswith("encoder.embeddings.") and ".embeddings." not in name


def maskable_parameters(model: nn.Module) -> dict[str, nn.Parameter]:
    """Encoder-layer parameters by name, in ``named_parameters`` order."""
    return {n: p for n, p in model.named_parameters() if is_maskable(n)}


# --------------------------------------------------------------------------- masks (pure functions)


def keep_count(numel: int, fraction: float) -> int:
    """Entries kept out of ``numel`` for a keep ``fraction``: round(fraction * numel) (halves up),
    at least 1 when ``fraction > 0``; ``fraction`` is clamped to [0, 1]."""
    if numel <= 0:
        return 0
    f = min(1.0, max(0.0, float(fraction)))
    if f == 0.0:
        return 0
    # The 1e-9 absorbs binary noise such as 1 - 0.9 = 0.09999999999999998.
    return max(1, min(numel, int(math.floor(f * numel + 0.5 + 1e-9))))


def topk_mask(weight: torch.Tensor, k: int, eligible: torch.Tensor | None = None) -> torch.Tensor:
    """Bool mask (shape of ``weight``) with exactly ``k`` True entries: the largest ``|weight|``,
    ties -> lower flat index. With ``eligible``, only eligible entries can be chosen (``k`` is capped
    at their number)."""
    flat = weight.detach().reshape(-1).abs().to(torch.float64).cpu()
    n = flat.numel()
    if eligible is not None:
        elig = eligible.reshape(-1).cpu().bool()
        k = min(k, int(elig.sum()))
        flat = torch.where(elig, flat, torch.full_like(flat, -1.0))  # |w| >= 0 > -1: never chosen
    k = max(0, min(k, n))
    # A stable descending sort keeps equal magnitudes in index order: deterministic ties.
    order = torch.sort(flat, descending=True, stable=True).indices[:k]
    mask = torch.zeros(n, dtype=torch.bool)
    mask[order] = True
    return mask.reshape(weight.shape).to(weight.device)


def magnitude_masks(model: nn.Module, fraction: float, vectors: str = "topk") -> dict[str, torch.Tensor]:
    """One-step ST masks: per encoder-layer tensor, the top ``fraction`` by magnitude are trainable."""
    if vectors not in VECTOR_MODES:
        raise ValueError(f"vectors must be one of {VECTOR_MODES}, not {vectors!r}")
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"subnet fraction {fraction} is not in [0, 1]")
    masks: dict[str, torch.Tensor] = {}
    for name, p in maskable_parameters(model).items():
        if p.ndim < 2 and vectors != "topk":
            masks[name] = torch.full_like(p, vectors == "trainable", dtype=torch.bool)
        else:
            masks[name] = topk_mask(p, keep_count(p.numel(), fraction))
    if not masks:
        raise ValueError("the model has no encoder-layer parameters to mask (is it a SentenceScorer?)")
    return masks


def mask_stats(model: nn.Module, masks: Mapping[str, torch.Tensor]) -> dict:
    """Counts: trainable entries of the masked tensors, and of the whole model."""
    masked_total = sum(int(m.numel()) for m in masks.values())
    masked_kept = sum(int(m.sum()) for m in masks.values())
    all_total = sum(p.numel() for p in model.parameters())
    other = all_total - masked_total
    return {
        "masked_tensors": len(masks),
        "masked_params": masked_total,
        "masked_trainable": masked_kept,
        "masked_trainable_fraction": masked_kept / masked_total if masked_total else 0.0,
        "model_params": all_total,
        "model_trainable": masked_kept + other,
        "model_trainable_fraction": (masked_kept + other) / all_total if all_total else 0.0,
    }


# --------------------------------------------------------------------------- the training hooks


class GradientMask:
    """Freeze everything outside ``masks`` (True = trainable) while training with :func:`wikiref.model.training.train`.

    ``hooks()`` -> ``dict(grad_hook=..., step_hook=...)``. Frozen entries keep the values they had
    when this object was made (or ``values``), exactly.
    """

    def __init__(
        self, model: nn.Module, masks: Mapping[str, torch.Tensor], values: Mapping[str, torch.Tensor] | None = None
    ) -> None:
        params = dict(model.named_parameters())
        unknown = sorted(set(masks) - set(params))
        if unknown:
            raise KeyError(f"masks for parameters the model does not have: {unknown[:5]}")
        self.masks: dict[str, torch.Tensor] = {}
        self.frozen_values: dict[str, torch.Tensor] = {}
        for name, m in masks.items():
            p = params[name]
            if m.shape != p.shape:
                raise ValueError(f"mask {name}: shape {tuple(m.shape)} != parameter {tuple(p.shape)}")
            m = m.to(device=p.device, dtype=torch.bool)
            if bool(m.all()):
                continue  # fully trainable: nothing to do
            self.masks[name] = m
            src = values[name] if values is not None and name in values else p.detach()
            self.frozen_values[name] = src.to(device=p.device, dtype=p.dtype).clone()

    def _params(self, model: nn.Module):
        params = dict(model.named_parameters())
        for name, m in self.masks.items():
            p = params[name]
            if m.device != p.device:  # train() moves the model after the hooks were made
                self.masks[name] = m = m.to(p.device)
                self.frozen_values[name] = self.frozen_values[name].to(p.device)
            yield name, p, m

    def grad_hook(self, model: nn.Module) -> None:
        for _, p, m in self._params(model):
            if p.grad is not None:
                p.grad.mul_(m)

    @torch.no_grad()
    def step_hook(self, model: nn.Module) -> None:
        for name, p, m in self._params(model):
            p.copy_(torch.where(m, p, self.frozen_values[name]))

    def apply(self, model: nn.Module) -> None:
        """Write the frozen values into the model now (e.g. zero pruned entries)."""
        self.step_hook(model)

    def hooks(self) -> dict[str, Callable[[nn.Module], None]]:
        return {"grad_hook": self.grad_hook, "step_hook": self.step_hook}


# --------------------------------------------------------------------------- gradual magnitude pruning


@dataclass(frozen=True)
class PruningSchedule:
    """Zhu & Gupta (2017) cubic sparsity schedule, in optimizer steps."""

    final_sparsity: float  # s_f (1 - ST fraction, e.g. 0.9)
    begin_step: int = 0  # t0
    n_steps: int = 10  # n: pruning steps after t0 (the last one is at t0 + n * dt)
    frequency: int = 1  # dt
    initial_sparsity: float = 0.0  # s_i

    def __post_init__(self) -> None:
        if not (0.0 <= self.initial_sparsity <= self.final_sparsity <= 1.0):
            raise ValueError(f"need 0 <= s_i ({self.initial_sparsity}) <= s_f ({self.final_sparsity}) <= 1")
        if self.n_steps < 0 or self.frequency < 1 or self.begin_step < 0:
            raise ValueError("need n_steps >= 0, frequency >= 1, begin_step >= 0")

    @property
    def end_step(self) -> int:
        return self.begin_step + self.n_steps * self.frequency

    def sparsity(self, step: int) -> float:
        """s_t at optimizer step ``step`` (the value of the last pruning step at or before it)."""
        return gmp_sparsity(
            step, self.initial_sparsity, self.final_sparsity, self.begin_step, self.n_steps, self.frequency
        )

    def is_pruning_step(self, step: int) -> bool:
        return self.begin_step <= step <= self.end_step and (step - self.begin_step) % self.frequency == 0


def gmp_sparsity(step: int, initial: float, final: float, begin: int, n: int, frequency: int) -> float:
    """Zhu & Gupta: s_t = s_f + (s_i - s_f)(1 - (t - t0)/(n dt))^3, t snapped down to the last pruning
    step; 0 before t0 (nothing is pruned yet), s_f after t0 + n dt."""
    if step < begin:
        return 0.0
    if n == 0:
        return float(final)
    k = min(n, (step - begin) // frequency)  # pruning steps done after t0
    return float(final + (initial - final) * (1.0 - k / n) ** 3)


def schedule_from_fractions(
    total_steps: int, final_sparsity: float, *, begin: float, end: float, frequency: int, initial_sparsity: float = 0.0
) -> PruningSchedule:
    """A schedule that starts at ``begin`` and reaches ``final_sparsity`` at ``end`` (fractions of the
    run's ``total_steps`` optimizer steps), pruning every ``frequency`` steps."""
    if not 0.0 <= begin <= end <= 1.0:
        raise ValueError(f"need 0 <= begin ({begin}) <= end ({end}) <= 1")
    t0 = int(math.floor(begin * total_steps))
    t1 = max(t0, int(math.floor(end * total_steps)) - 1)  # the last step index of the span
    n = max(1, (t1 - t0) // frequency) if t1 > t0 else 0
    return PruningSchedule(
        final_sparsity=final_sparsity, begin_step=t0, n_steps=n, frequency=frequency, initial_sparsity=initial_sparsity
    )


class MagnitudePruner:
    """Gradual magnitude pruning of the encoder layers during :func:`wikiref.model.training.train`.

    Counts optimizer steps itself (``step_hook`` runs once per step): at each pruning step of the
    schedule, every maskable tensor keeps its ``keep_count(numel, 1 - s_t)`` largest surviving
    entries (never reviving a pruned one); pruned entries are zero, get no gradient and are
    re-zeroed after every step. ``masks`` (True = survives) is the subnetwork afterwards.
    """

    def __init__(self, model: nn.Module, schedule: PruningSchedule, vectors: str = "topk") -> None:
        if vectors not in VECTOR_MODES:
            raise ValueError(f"vectors must be one of {VECTOR_MODES}, not {vectors!r}")
        self.schedule = schedule
        self.vectors = vectors
        self.step = 0
        self.history: list[dict] = []
        self.masks = {n: torch.ones_like(p, dtype=torch.bool) for n, p in maskable_parameters(model).items()}
        self.current_sparsity = 0.0

    def _prunable(self, name: str, p: torch.Tensor) -> bool:
        return p.ndim >= 2 or self.vectors == "topk"

    @torch.no_grad()
    def prune(self, model: nn.Module, sparsity: float) -> None:
        params = dict(model.named_parameters())
        for name, m in self.masks.items():
            p = params[name]
            if not self._prunable(name, p):
                continue
            keep = keep_count(p.numel(), 1.0 - sparsity)
            new = topk_mask(p, keep, eligible=m)
            self.masks[name] = new.to(p.device)
        self.current_sparsity = sparsity
        self._zero(model)

    @torch.no_grad()
    def _zero(self, model: nn.Module) -> None:
        params = dict(model.named_parameters())
        for name, m in self.masks.items():
            p = params[name]
            if m.device != p.device:
                self.masks[name] = m = m.to(p.device)
            p.mul_(m)

    def grad_hook(self, model: nn.Module) -> None:
        params = dict(model.named_parameters())
        for name, m in self.masks.items():
            p = params[name]
            if p.grad is not None:
                p.grad.mul_(m.to(p.grad.device))

    def step_hook(self, model: nn.Module) -> None:
        t = self.step
        if self.schedule.is_pruning_step(t):
            s = self.schedule.sparsity(t)
            if s > self.current_sparsity:
                self.prune(model, s)
                self.history.append({"step": t, "sparsity": s})
        self._zero(model)
        self.step += 1

    def hooks(self) -> dict[str, Callable[[nn.Module], None]]:
        return {"grad_hook": self.grad_hook, "step_hook": self.step_hook}

    @property
    def done(self) -> bool:
        return self.current_sparsity >= self.schedule.final_sparsity - 1e-12


# --------------------------------------------------------------------------- files


def save_masks(
    path: str | os.PathLike, masks: Mapping[str, torch.Tensor], metadata: Mapping[str, str] | None = None
) -> None:
    from safetensors.torch import save_file

    from wikiref.files import atomic_path

    tensors = {n: m.detach().to("cpu", torch.uint8).contiguous() for n, m in sorted(masks.items())}
    with atomic_path(path) as tmp:
        save_file(tensors, str(tmp), metadata=dict(metadata or {}))


def load_masks(path: str | os.PathLike) -> dict[str, torch.Tensor]:
    from safetensors.torch import load_file

    return {n: t.bool() for n, t in load_file(str(path)).items()}


def check_fractions(
    masks: Mapping[str, torch.Tensor], fraction: float, names: Iterable[str] | None = None
) -> list[str]:
    """Names of masks whose True count is not exactly keep_count(numel, fraction) (empty = all right)."""
    names = list(masks) if names is None else list(names)
    return [n for n in names if int(masks[n].sum()) != keep_count(masks[n].numel(), fraction)]
