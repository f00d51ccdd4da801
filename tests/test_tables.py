"""The captioned table writer: a Data column on every row of every table, captions derived from the rows."""

from __future__ import annotations

import pandas as pd
import pytest

from wikiref.tables import STANDIN_NOTE, StandinMismatch, rows_caption, rows_standin, write_table

SAMPLE = {"name": "sample", "standin": True}
PAPER = {"name": "paper", "standin": False}


def _files(tmp_path, df, **kw):
    write_table(df, tmp_path / "t", title="T", **kw)
    return (
        pd.read_csv(tmp_path / "t.csv"),
        (tmp_path / "t.md").read_text(),
        (tmp_path / "t.tex").read_text(),
    )


def test_real_rows_under_a_standin_profile_are_labelled_real_and_the_caption_says_so(tmp_path):
    # e.g. QmdsCnn Table 1 from the real CNN stories, or QMSum's real meetings, in the sample profile
    csv, md, tex = _files(tmp_path, pd.DataFrame({"x": [1.0, 2.0]}), profile=SAMPLE, standin=False)
    assert list(csv["Data"]) == ["real", "real"]
    assert "| real |" in md and "real" in tex
    assert STANDIN_NOTE not in md and STANDIN_NOTE not in tex


def test_standin_rows_are_labelled_in_every_file_and_caption(tmp_path):
    csv, md, tex = _files(tmp_path, pd.DataFrame({"x": [1.0]}), profile=SAMPLE, standin=True)
    assert list(csv["Data"]) == ["STAND-IN"]
    assert "| STAND-IN |" in md and STANDIN_NOTE in md and STANDIN_NOTE in tex


def test_without_a_derived_flag_the_profile_labels_the_rows(tmp_path):
    csv, md, _ = _files(tmp_path, pd.DataFrame({"x": [1.0]}), profile=SAMPLE)
    assert list(csv["Data"]) == ["STAND-IN"] and STANDIN_NOTE in md
    csv, md, _ = _files(tmp_path, pd.DataFrame({"x": [1.0]}), profile=PAPER)
    assert list(csv["Data"]) == ["real"] and STANDIN_NOTE not in md


def test_per_row_provenance_is_kept_and_a_mixed_caption_says_which_rows(tmp_path):
    df = pd.DataFrame({"System": ["LEAD", "QUERY-SIM"], "Data": ["real", "STAND-IN"]})
    csv, md, _ = _files(tmp_path, df, profile=SAMPLE)
    assert list(csv["Data"]) == ["real", "STAND-IN"]
    assert "rows whose Data column says STAND-IN" in md
    assert rows_standin(df) == "some"
    assert "rows whose Data column says" in rows_caption(df, SAMPLE)


def test_all_real_per_row_table_has_no_standin_caption_under_a_standin_profile(tmp_path):
    df = pd.DataFrame({"System": ["LEAD"], "Data": ["real"]})
    _, md, tex = _files(tmp_path, df, profile=SAMPLE)
    assert STANDIN_NOTE not in md and STANDIN_NOTE not in tex


def test_standin_data_under_a_real_profile_is_an_error(tmp_path):
    with pytest.raises(StandinMismatch):
        write_table(pd.DataFrame({"x": [1]}), tmp_path / "t", title="T", profile=PAPER, standin=True)


def test_an_unknown_data_label_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="Data column values"):
        write_table(pd.DataFrame({"x": [1], "Data": ["maybe"]}), tmp_path / "t", title="T", profile=SAMPLE)


def test_paper_rows_are_not_ours_and_do_not_make_a_table_mixed(tmp_path):
    df = pd.DataFrame({"Dataset": ["ours", "paper"], "Data": ["STAND-IN", "paper"]})
    assert rows_standin(df) == "all"
    _, md, _ = _files(tmp_path, df, profile=SAMPLE)
    assert STANDIN_NOTE in md and "rows whose Data column says" not in md
    assert rows_standin(pd.DataFrame({"Data": ["real", "paper"]})) == "none"
