"""Train/dev/test split without document overlap (journal §II-A-2, last paragraph).

Examples are grouped so that any two examples citing the same document - the same normalised URL
(``doc_key``) or the same body text (``doc_hash``) - fall in one group (union-find over both keys).
Groups are shuffled with the seed and dealt to test, then dev, each until its size is reached:
a group goes to a split only if it fits entirely, so the sizes are exact whenever enough small
groups exist; everything else is train. Sizes (``split.dev``/``split.test``) are counts (>= 1,
the paper's 12,000 each) or fractions of the curated examples (< 1, for the sample).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

SPLITS = ("train", "dev", "test")


def resolve_size(value: float, total: int) -> int:
    """A count (>= 1) or a fraction of ``total`` (< 1, rounded to the nearest integer)."""
    if value <= 0:
        raise ValueError(f"split size must be positive, got {value}")
    return int(value) if value >= 1 else int(round(value * total))


def document_groups(doc_keys: Sequence[str], doc_hashes: Sequence[str]) -> list[int]:
    """Group id per example: connected components of 'shares a doc_key or a doc_hash'. Empty keys
    never link examples. Group ids are numbered in order of first appearance."""
    n = len(doc_keys)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for keys in (doc_keys, doc_hashes):
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if not k:
                continue
            j = first.setdefault(k, i)
            if j != i:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    ids: dict[int, int] = {}
    return [ids.setdefault(find(i), len(ids)) for i in range(n)]


def assign_splits(
    ids: Sequence[str],
    doc_keys: Sequence[str],
    doc_hashes: Sequence[str],
    *,
    dev: float,
    test: float,
    seed: int,
) -> list[str]:
    """Split name for each example. Deterministic for a given seed and set of examples, whatever
    their order (groups are ordered by their smallest example id before shuffling)."""
    n = len(ids)
    n_dev, n_test = resolve_size(dev, n), resolve_size(test, n)
    if n_dev + n_test > n:
        raise ValueError(f"dev ({n_dev}) + test ({n_test}) exceed the {n} curated examples")
    groups = document_groups(doc_keys, doc_hashes)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    ordered = sorted(members.values(), key=lambda m: min(str(ids[i]) for i in m))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(ordered))
    out = ["train"] * n
    targets = {"test": n_test, "dev": n_dev}
    filled = {"test": 0, "dev": 0}
    for gi in order:
        m = ordered[gi]
        for name in ("test", "dev"):
            if filled[name] + len(m) <= targets[name]:
                filled[name] += len(m)
                for i in m:
                    out[i] = name
                break
        if filled["test"] == n_test and filled["dev"] == n_dev:
            break
    return out


def overlap_report(assignment: Sequence[str], doc_keys: Sequence[str], doc_hashes: Sequence[str]) -> dict:
    """Number of document keys / hashes found in more than one split (must be 0)."""
    out = {}
    for name, keys in (("doc_key", doc_keys), ("doc_hash", doc_hashes)):
        where: dict[str, set] = {}
        for s, k in zip(assignment, keys):
            if k:
                where.setdefault(k, set()).add(s)
        out[f"{name}_in_several_splits"] = sum(1 for v in where.values() if len(v) > 1)
    return out


def split_sizes(assignment: Sequence[str]) -> Mapping[str, int]:
    return {s: sum(1 for a in assignment if a == s) for s in SPLITS}
