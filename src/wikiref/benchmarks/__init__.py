"""Helpers the scripts in ``bench/`` share: timing and the parameters a stage's job reads."""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def best_of(fn: Callable, repeat: int) -> tuple[float, object]:
    """(fastest wall time of ``repeat`` calls of ``fn``, the last result); garbage is collected before
    each call so a previous call's garbage is not timed."""
    best, out = float("inf"), None
    for _ in range(max(1, repeat)):
        gc.collect()
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def stage_params(stage: str, job: str, params_file: str | Path | None = None) -> dict:
    """The parameters job ``job`` of ``stage`` reads (:func:`wikiref.registry.job_keys`), from the repository's
    ``params.yaml`` unless ``params_file`` is given."""
    from wikiref import config
    from wikiref.registry import job_keys

    return config.select(config.load_params(params_file or REPO / "params.yaml"), *job_keys(stage, job))
