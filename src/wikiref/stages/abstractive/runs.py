"""The runs of the abstractive stage: one ``abstractive.runs`` entry -> what its training job reads.

Light (no torch): the rules file and the registry use it to wire one Snakemake job per run.

* :func:`run_only`: what a run's job receives in place of ``abstractive.runs`` (``replace=`` of
  :func:`wikiref.config.job_params`), its own entry, so editing another run reruns nothing else;
* :func:`train_job`: the registry job it runs as (``train_seq2seq`` / ``train_hiersumm``: each reads only its
  family's section);
* :func:`train_inputs`: its input files (train + dev of every training source, test of every test source, the
  DUC years and their stats when ``duc``);
* :func:`model_config`, :func:`decode_settings`: the family's settings with the run's overrides;
* :func:`duc_flags`: ``duc.rouge_flags`` with ROUGE-L switched on (Table 5 prints R-L; the DUC flags carry ``-x``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from wikiref import layout
from wikiref.supervised.abstractive_runs import AbstractiveError


def runs_by_name(params: Mapping) -> dict[str, dict[str, Any]]:
    """The ``abstractive.runs`` entries by name (copies); a repeated name is an error. A list, not a mapping, so a
    ``--configfile`` overlay replaces the grid instead of merging it into the default one."""
    from wikiref.config import by_name

    return by_name(copy.deepcopy(list(params["abstractive"]["runs"])), "abstractive run", AbstractiveError)


def run_names(params: Mapping) -> list[str]:
    """The runs' names, in params order (the Snakemake ``run`` wildcard values)."""
    return list(runs_by_name(params))


def run_entry(params: Mapping, name: str) -> dict[str, Any]:
    """The ``abstractive.runs`` entry ``name`` (a copy)."""
    runs = runs_by_name(params)
    if name not in runs:
        raise AbstractiveError(f"no run {name!r} in abstractive.runs (runs: {', '.join(runs) or 'none'})")
    return runs[name]


def family(params: Mapping, name: str) -> str:
    return str(run_entry(params, name)["family"])


def train_job(params: Mapping, name: str) -> str:
    """The registry job run ``name`` trains as: ``train_<family>``."""
    return f"train_{family(params, name)}"


def run_only(params: Mapping, name: str) -> dict[str, Any]:
    """``replace=`` for a run's job: ``abstractive.runs`` holding that run alone."""
    return {"abstractive.runs": [run_entry(params, name)]}


def duc_years(params: Mapping, name: str) -> list[int]:
    """The DUC years run ``name`` is tested on (``abstractive.duc.years`` when its ``duc`` is true, else none);
    each must be one of ``duc.years`` when that is given."""
    if not run_entry(params, name)["duc"]:
        return []
    years = sorted(int(y) for y in params["abstractive"]["duc"]["years"])
    known = params.get("duc", {}).get("years")
    if known is not None:
        missing = [y for y in years if y not in {int(k) for k in known}]
        if missing:
            raise AbstractiveError(f"abstractive.duc.years {missing} are not DUC years (duc.years: {sorted(known)})")
    return years


def train_inputs(params: Mapping, name: str) -> dict[str, list[str]]:
    """Run ``name``'s input files by role: ``train``, ``dev`` (of each training source), ``test`` (of each test
    source), ``duc`` and ``duc_stats`` (each DUC year's table and its prepare stats; empty without DUC)."""
    run = run_entry(params, name)

    def split(sources, which: str) -> list[str]:
        return [layout.SOURCE_SPLIT.format(source=s, split=which) for s in sources]

    years = duc_years(params, name)
    return {
        "train": split(run["train"], "train"),
        "dev": split(run["train"], "dev"),
        "test": split(run["test"], "test"),
        "duc": [layout.DUC_YEAR.format(year=y) for y in years],
        "duc_stats": [layout.DUC_YEAR_STATS.format(year=y) for y in years],
    }


def input_keys(params: Mapping, name: str) -> dict[str, list]:
    """The keys of run ``name``'s input files by role, in the order of :func:`train_inputs`' lists: the
    training sources (``train``, ``dev``), the test sources (``test``) and the DUC years (``duc``,
    ``duc_stats``)."""
    run = run_entry(params, name)
    years = duc_years(params, name)
    return {"train": run["train"], "dev": run["train"], "test": run["test"], "duc": years, "duc_stats": years}


def duc_flags(flags: str) -> str:
    """``flags`` without ``-x`` (which switches ROUGE-L off): Table 5 prints R-1, R-2, R-L and R-SU4."""
    return " ".join(tok for tok in str(flags).split() if tok != "-x")
