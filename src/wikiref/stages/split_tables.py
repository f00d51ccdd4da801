"""Tables I and II of the journal paper, computed from the curated, split dataset.

Table I: per split, the number of examples, of distinct Wikipedia articles, and the mean of the six
statistics. Table II: percentiles (5, 20, 40, 50, 60, 80, 95) of the six statistics over the whole
dataset. Rows and columns mirror the paper; the statistics are those computed by curation
(:mod:`wikiref.stages.curate`).
"""

from __future__ import annotations

from typing import Mapping

import numpy as np
import pandas as pd

from wikiref.stages.curate import STAT_LABELS, STATS

TABLE1_STEM = "table1_wikiref_splits"
TABLE2_STEM = "table2_wikiref_percentiles"
TABLE1_TITLE = "Table I: Statistics of training set, development set and test set of the WikiRef dataset"
TABLE2_TITLE = "Table II: Percentiles for different aspects of the whole WikiRef dataset"
PERCENTILES = (5, 20, 40, 50, 60, 80, 95)
SPLIT_HEADERS = {"train": "Train", "dev": "Dev", "test": "Test"}


def table1(splits: Mapping[str, pd.DataFrame]) -> pd.DataFrame:
    """Rows: Total Examples, Wiki Articles, then the mean of each statistic; one column per split."""
    rows: list[list] = [["Total Examples"], ["Wiki Articles"]] + [[STAT_LABELS[s]] for s in STATS]
    for name in SPLIT_HEADERS:
        df = splits[name]
        rows[0].append(int(len(df)))
        rows[1].append(int(df["article"].nunique()) if len(df) else 0)
        for k, s in enumerate(STATS):
            rows[2 + k].append(round(float(df[s].mean()), 1) if len(df) else float("nan"))
    # object dtype keeps the counts integers next to the one-decimal means
    return pd.DataFrame(rows, columns=["Statistic", *SPLIT_HEADERS.values()], dtype=object)


def table2(all_examples: pd.DataFrame) -> pd.DataFrame:
    """Rows: the six statistics; columns: percentiles (numpy linear interpolation)."""
    rows = []
    for s in STATS:
        values = all_examples[s].to_numpy(dtype=float)
        pct = np.percentile(values, PERCENTILES) if len(values) else [float("nan")] * len(PERCENTILES)
        rows.append([STAT_LABELS[s], *(round(float(v), 1) for v in pct)])
    return pd.DataFrame(rows, columns=["Statistic", *(str(p) for p in PERCENTILES)])
