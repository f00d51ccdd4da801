"""Training targets of the sentence scorer: how each sentence's oracle score becomes what the loss sees.

The oracle scores (a sentence's ROUGE-2 recall against the reference) are small (DUC: mean ~0.008,
QMSum turns: ~0.02) and their magnitude depends on the ROUGE variant. Trained on them raw with a mean
squared error, a scorer learns little beyond their mean. :class:`TargetTransform` names the
mapping (``model.target`` / ``finetune.target`` in params):

* ``raw`` - ``value x scale`` (``scale`` 1 = the paper);
* ``standardise`` - ``(value - mean) / std`` with the mean and standard deviation of every training
  sentence's value (:meth:`TargetTransform.fit`; dev and test never enter them). Affine and the same for
  every document, so scores stay comparable across documents; :meth:`TargetTransform.inverse` maps
  predictions back to the ROUGE scale;
* ``cluster_norm`` / ``query_norm`` - z-scores within one group (a DUC cluster / a QMSum query): the
  same formula, the group named by the caller (:func:`transform_groups`). Within a group the order is
  kept; across groups the scale is not (no inverse: rank within the group);
* ``rank`` - the value's rank within its group scaled to [0, 1] (ties: their mean rank; a group of one
  sentence -> 0.5). Insensitive to any monotone change of the ROUGE variant.

Every transform but ``raw`` is independent of the ROUGE variant's magnitude (scaling all values by
``c`` gives the same targets). The fitted statistics are a small JSON dict (:meth:`TargetTransform.to_dict`)
that the training stages save next to the checkpoint (``target.json``, :func:`save_transform`).

Classification labels (``loss: bce``): :func:`top_labels` - 1 for the ``k`` best sentences of a group
with a positive value, else 0 (an oracle-like label where no greedy oracle selection is at hand; the
stages pass the greedy ORACLE's choice where they have it).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

TRANSFORMS = ("raw", "standardise", "cluster_norm", "query_norm", "rank")
GROUP_TRANSFORMS = ("cluster_norm", "query_norm", "rank")
TARGET_FILE = "target.json"
_EPS = 1e-12


@dataclass
class TargetTransform:
    name: str = "raw"
    scale: float = 1.0  # raw only
    mean: float | None = None  # standardise: fitted on the training set
    std: float | None = None

    def __post_init__(self) -> None:
        if self.name not in TRANSFORMS:
            raise ValueError(f"target transform {self.name!r} not in {TRANSFORMS}")
        if not (isinstance(self.scale, (int, float)) and math.isfinite(self.scale) and self.scale > 0):
            raise ValueError(f"target scale must be a positive number, got {self.scale!r}")

    @classmethod
    def from_params(cls, section: Mapping) -> TargetTransform:
        """From a params mapping ``{transform: ..., scale: ...}`` (missing keys: raw x 1)."""
        return cls(name=str(section.get("transform", "raw")), scale=float(section.get("scale", 1.0)))

    @property
    def fitted(self) -> bool:
        return self.name != "standardise" or self.mean is not None

    def fit(self, groups: Sequence[Sequence[float]]) -> TargetTransform:
        """The statistics of ``standardise`` over every value of ``groups`` (the training set); the
        others have none. Returns self."""
        if self.name == "standardise":
            values = np.concatenate([np.asarray(g, dtype=np.float64) for g in groups]) if groups else np.zeros(0)
            if values.size == 0:
                raise ValueError("standardise: no training target to fit the mean and std on")
            self.mean = float(values.mean())
            self.std = float(values.std())
        return self

    def apply(self, values: Sequence[float]) -> list[float]:
        """One group's values (a query's turns, a cluster's sentences) -> its targets."""
        v = np.asarray(values, dtype=np.float64)
        if self.name == "raw":
            out = v * self.scale
        elif self.name == "standardise":
            if self.mean is None or self.std is None:
                raise ValueError("standardise: fit() the transform on the training targets first")
            out = (v - self.mean) / max(self.std, _EPS)
        elif self.name == "rank":
            out = _unit_ranks(v)
        else:  # cluster_norm / query_norm
            out = (v - v.mean()) / max(float(v.std()), _EPS) if v.size else v
        return [float(x) for x in out]

    def inverse(self, predictions: Sequence[float]) -> list[float]:
        """Predictions back on the oracle's scale (raw, standardise); the group transforms have none."""
        p = np.asarray(predictions, dtype=np.float64)
        if self.name == "raw":
            return [float(x) for x in p / self.scale]
        if self.name == "standardise":
            return [float(x) for x in p * self.std + self.mean]
        raise ValueError(f"target transform {self.name!r} has no inverse (scores rank sentences within a group)")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: Mapping) -> TargetTransform:
        return cls(**{k: d[k] for k in ("name", "scale", "mean", "std") if k in d})


def _unit_ranks(v: np.ndarray) -> np.ndarray:
    """Average ranks scaled to [0, 1] (lowest 0, highest 1; one value -> 0.5)."""
    if v.size == 0:
        return v
    if v.size == 1:
        return np.full(1, 0.5)
    order = np.argsort(v, kind="stable")
    ranks = np.empty(v.size, dtype=np.float64)
    ranks[order] = np.arange(v.size, dtype=np.float64)
    for value in np.unique(v):  # ties share their mean rank
        tied = v == value
        if tied.sum() > 1:
            ranks[tied] = ranks[tied].mean()
    return ranks / (v.size - 1)


def transform_groups(
    transform: TargetTransform, values: Sequence[Sequence[float]], groups: Sequence[Hashable] | None = None
) -> list[list[float]]:
    """Targets of many examples (``values[i]``: example ``i``'s sentences). ``groups[i]`` names the group
    of example ``i`` for the group transforms (e.g. the DUC cluster of a document: its documents are
    normalised together); None: each example is its own group (a QMSum query)."""
    if transform.name not in GROUP_TRANSFORMS or groups is None:
        return [transform.apply(v) for v in values]
    if len(groups) != len(values):
        raise ValueError(f"{len(groups)} group ids for {len(values)} examples")
    members: dict[Hashable, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    out: list[list[float]] = [[] for _ in values]
    for idx in members.values():
        lengths = [len(values[i]) for i in idx]
        flat = transform.apply([float(x) for i in idx for x in values[i]])
        start = 0
        for i, n in zip(idx, lengths):
            out[i] = flat[start : start + n]
            start += n
    return out


def top_labels(values: Sequence[float], k: int) -> list[float]:
    """1.0 for the ``k`` highest positive values of one group (ties: the earlier sentence), else 0.0."""
    if k < 1:
        raise ValueError("top_labels needs k >= 1")
    v = np.asarray(values, dtype=np.float64)
    order = sorted(range(v.size), key=lambda i: (-v[i], i))
    chosen = {i for i in order[:k] if v[i] > 0}
    return [1.0 if i in chosen else 0.0 for i in range(v.size)]


def save_transform(transform: TargetTransform, out_dir: str | os.PathLike) -> Path:
    """``out_dir/target.json`` (atomic): the transform and its training-set statistics."""
    from wikiref.files import write_json

    path = Path(out_dir) / TARGET_FILE
    write_json(path, transform.to_dict())
    return path


def load_transform(model_dir: str | os.PathLike) -> TargetTransform | None:
    path = Path(model_dir) / TARGET_FILE
    if not path.exists():
        return None
    with open(path, encoding="utf-8") as fh:
        return TargetTransform.from_dict(json.load(fh))


def apply_targets(
    section: Mapping,
    train_examples: Sequence,
    dev_examples: Sequence,
    train_groups: Sequence[str] | None = None,
    dev_groups: Sequence[str] | None = None,
) -> TargetTransform | None:
    """Turn the examples' oracle scores (``ScoringExample.targets``, one list per example) into what the
    loss of a params training section (``loss``, ``target: {transform, scale, top}``) trains on, in place.

    ``*_groups``: each example's ranking group (e.g. the DUC cluster of a document; None = each example is
    one group): set as ``ScoringExample.group`` for the ranking losses and used by the group transforms
    and labels. ``loss: bce``: 0/1 labels, the ``target.top`` best sentences of each group
    (:func:`top_labels`); otherwise the transform fitted on the training examples only. Returns the
    fitted transform (None for labels), to save next to the checkpoint (:func:`save_transform`)."""
    target, loss = section["target"], section["loss"]
    pairs = ((train_examples, train_groups), (dev_examples, dev_groups))
    if loss == "bce":
        for examples, groups in pairs:
            _set(examples, groups, _grouped(lambda v: top_labels(v, int(target["top"])), examples, groups))
        return None
    transform = TargetTransform.from_params(target).fit([e.targets for e in train_examples])
    for examples, groups in pairs:
        _set(examples, groups, transform_groups(transform, [e.targets for e in examples], groups))
    return transform


def _grouped(fn, examples: Sequence, groups: Sequence[str] | None) -> list[list[float]]:
    """``fn`` applied to each group's values (concatenated in example order), split back per example."""
    keys = list(groups) if groups is not None else list(range(len(examples)))
    flat: dict = {}
    for e, g in zip(examples, keys):
        flat.setdefault(g, []).extend(e.targets)
    done = {g: fn(v) for g, v in flat.items()}
    at = dict.fromkeys(done, 0)
    out = []
    for e, g in zip(examples, keys):
        out.append(done[g][at[g] : at[g] + len(e.targets)])
        at[g] += len(e.targets)
    return out


def _set(examples: Sequence, groups: Sequence[str] | None, targets: Sequence[Sequence[float]]) -> None:
    for i, (e, t) in enumerate(zip(examples, targets)):
        e.targets = [float(x) for x in t]
        if groups is not None:
            e.group = str(groups[i])
