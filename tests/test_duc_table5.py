"""Journal Table V from the prepared DUC years' counts: the paper's counts beside, Data per row from the stats."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from wikiref.stages.duc import table5
from wikiref.tables import StandinMismatch

SAMPLE = {"name": "sample", "standin": True, "description": "x"}
PAPER = {"name": "paper", "standin": False, "description": "x"}


def _stats(tmp_path, years, standin):
    paths = []
    for i, y in enumerate(years):
        p = tmp_path / f"{y}.stats.json"
        p.write_text(
            json.dumps({"year": y, "topics": 5 + i, "documents": 40 + i, "sentences": 900 + i, "standin": standin})
        )
        paths.append(p)
    return paths


def test_real_years_beside_the_paper(tmp_path):
    out = table5.run(
        {"profile": PAPER}, {"stats": _stats(tmp_path, [2007, 2005, 2006], False)}, {"table": tmp_path / "t"}
    )
    df = pd.read_csv(tmp_path / "t.csv")
    assert df["Year"].tolist() == [2005, 2006, 2007]
    assert df["Clusters (paper)"].tolist() == [50, 50, 45]
    assert df["Documents (paper)"].tolist() == [1593, 1250, 1125]
    assert df["Sentences (paper)"].tolist() == [46033, 34585, 24176]
    assert df["Documents"].tolist() == [41, 42, 40]  # the measured counts, each from its own year's file
    assert set(df["Data"]) == {"real"} and not out["standin"]
    md = (tmp_path / "t.md").read_text()
    assert "DUC 2005, 2006, 2007" in md and "STAND-IN" not in md


def test_standin_years_are_labelled_from_the_stats(tmp_path):
    table5.run({"profile": SAMPLE}, {"stats": _stats(tmp_path, [2005, 2006, 2007], True)}, {"table": tmp_path / "t"})
    df = pd.read_csv(tmp_path / "t.csv")
    assert set(df["Data"]) == {"STAND-IN"}
    assert "STAND-IN pseudo-years 2005, 2006, 2007" in (tmp_path / "t.md").read_text()
    # a year the paper does not report has empty paper cells
    table5.run({"profile": SAMPLE}, {"stats": _stats(tmp_path, [2008], True)}, {"table": tmp_path / "u"})
    assert pd.read_csv(tmp_path / "u.csv")["Clusters (paper)"].isna().all()


def test_standin_data_under_a_real_profile_is_an_error(tmp_path):
    with pytest.raises(StandinMismatch):
        table5.run({"profile": PAPER}, {"stats": _stats(tmp_path, [2005], True)}, {"table": tmp_path / "t"})


def test_stats_without_counts_name_the_year(tmp_path):
    p = tmp_path / "2006.stats.json"
    p.write_text(json.dumps({"year": 2006, "topics": 3}))
    with pytest.raises(table5.Table5Error, match="2006.*documents"):
        table5.run({"profile": SAMPLE}, {"stats": [p]}, {"table": tmp_path / "t"})
