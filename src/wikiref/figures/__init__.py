"""Paper-style line figures (journal Figs. 4-6) as PNG + SVG, drawn with matplotlib (Agg).

A figure is a list of :class:`Panel` s stacked vertically at single-column width (IEEE: 3.5 in), so it
stays readable when printed in one column; each panel's legend sits under its x label, outside the axes.
Each panel has solid lines with markers (:class:`Series`) and dashed horizontal reference lines
(:class:`HLine`), like the paper's Figs. 4 and 6. The title is
the paper's figure title; a footer states the profile and encoder and, for stand-in data, a red
"STAND-IN DATA" warning (the same provenance text the tables carry, :func:`wikiref.tables.profile_caption`).

Outputs are deterministic for the same data and matplotlib version: SVG ids use a fixed hash salt and
no date is embedded in either file.
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wikiref.files import atomic_path

COLUMN_WIDTH_IN = 3.5  # IEEE Transactions single column
PNG_DPI = 200
# The paper's colours: red = with WikiRef augmentation, blue = without.
RED = "#d62728"
BLUE = "#1f77b4"
GREEN = "#2ca02c"
ORANGE = "#ff7f0e"
PURPLE = "#9467bd"
GREY = "#555555"
STANDIN_COLOR = "#b00020"


@dataclass
class Series:
    label: str
    x: Sequence[float]
    y: Sequence[float]
    color: str = RED
    marker: str = "o"
    linestyle: str = "-"


@dataclass
class HLine:
    label: str
    y: float
    color: str = GREY
    linestyle: str = "--"


@dataclass
class Panel:
    ylabel: str
    xlabel: str
    series: list[Series] = field(default_factory=list)
    hlines: list[HLine] = field(default_factory=list)
    xticks: Sequence[float] | None = None
    xticklabels: Sequence[str] | None = None
    title: str = ""


def _finite(values) -> list[float]:
    import math

    return [float(v) for v in values if v is not None and math.isfinite(float(v))]


def draw_panel(ax, panel: Panel) -> None:
    """Lines, dashed reference lines, axes labels and grid (the legend is placed by :func:`render`)."""
    for s in panel.series:
        ax.plot(
            list(s.x),
            list(s.y),
            color=s.color,
            marker=s.marker,
            linestyle=s.linestyle,
            linewidth=1.4,
            markersize=4,
            label=s.label,
        )
    # Reference lines carry their value in the legend: two of them can lie on top of each other.
    for h, label in zip(panel.hlines, _legend_labels(panel)[len(panel.series) :]):
        ax.axhline(h.y, color=h.color, linestyle=h.linestyle, linewidth=1.1, label=label)
    ax.set_xlabel(panel.xlabel)
    ax.set_ylabel(panel.ylabel)
    if panel.title:
        ax.set_title(panel.title, fontsize=8)
    if panel.xticks is not None:
        ax.set_xticks(list(panel.xticks))
        if panel.xticklabels is not None:
            ax.set_xticklabels(list(panel.xticklabels))
    ys = _finite([v for s in panel.series for v in s.y] + [h.y for h in panel.hlines])
    if ys:
        lo, hi = min(ys), max(ys)
        pad = max((hi - lo) * 0.12, 0.2)
        ax.set_ylim(lo - pad, hi + pad)
    ax.margins(x=0.1)  # room for the first/last tick label and marker
    ax.grid(True, color="#dddddd", linewidth=0.5)
    ax.set_axisbelow(True)


def _legend_labels(panel: Panel) -> list[str]:
    return [s.label for s in panel.series] + [f"{h.label} ({h.y:.2f})" for h in panel.hlines]


def _legend_columns(panel: Panel, width_in: float) -> int:
    """Two legend columns when there are more than two entries and the longest fits in half the
    width (about 0.042 in per character at the 6.5 pt legend font, plus the line sample), else one."""
    labels = _legend_labels(panel)
    fits = max((len(x) for x in labels), default=0) <= int(((width_in - 0.2) / 2 - 0.35) / 0.042)
    return 2 if len(labels) > 2 and fits else 1


def _legend_rows(panel: Panel, ncol: int) -> int:
    n = len(panel.series) + len(panel.hlines)
    return (n + ncol - 1) // ncol


def render(
    panels: Sequence[Panel],
    stem: str | os.PathLike,
    *,
    title: str,
    provenance: str,
    standin: bool = False,
    notes: str = "",
    dpi: int = PNG_DPI,
    width_in: float = COLUMN_WIDTH_IN,
) -> list[Path]:
    """Draw ``panels`` stacked vertically; write ``<stem>.png`` and ``<stem>.svg``; return the paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    stem = Path(stem)
    footer = provenance + (f". {notes}" if notes else "")
    # Characters per line at the font sizes below (8 pt bold title, 6 pt footer).
    footer_lines = textwrap.wrap(footer, int(width_in * 21))
    title_lines = textwrap.wrap(title, int(width_in * 14))
    # Layout in inches, top to bottom: title, then per panel the axes, the x label and the legend under
    # it (outside the axes, so no line is hidden), then the footer.
    title_h = 0.15 * len(title_lines) + 0.12
    axes_h, xlabel_h, legend_row_h, gap_h = 1.55, 0.42, 0.14, 0.12
    ncols = [_legend_columns(p, width_in) for p in panels]
    blocks = [axes_h + xlabel_h + legend_row_h * _legend_rows(p, c) + gap_h for p, c in zip(panels, ncols)]
    foot_h = 0.12 * len(footer_lines) + (0.2 if standin else 0.0) + 0.1
    height = title_h + sum(blocks) + foot_h
    left_in, right_in = 0.55, 0.2
    rc = {
        "font.size": 8,
        "axes.labelsize": 8,
        "xtick.labelsize": 7,
        "ytick.labelsize": 7,
        "legend.fontsize": 6.5,
        "axes.linewidth": 0.8,
        "svg.hashsalt": "wikiref",
        "svg.fonttype": "path",
    }
    with plt.rc_context(rc):
        fig = plt.figure(figsize=(width_in, height))
        top = height - title_h
        for panel, block, ncol in zip(panels, blocks, ncols):
            bottom = top - 0.08 - axes_h
            ax = fig.add_axes(
                (left_in / width_in, bottom / height, (width_in - left_in - right_in) / width_in, axes_h / height)
            )
            draw_panel(ax, panel)
            if panel.series or panel.hlines:
                # Centred on the figure (not the axes, which sit right of the y label).
                x_mid = (0.5 * width_in - left_in) / (width_in - left_in - right_in)
                ax.legend(
                    loc="upper center",
                    bbox_to_anchor=(x_mid, -xlabel_h / axes_h),
                    ncol=ncol,
                    frameon=False,
                    handlelength=2.4,
                    columnspacing=1.0,
                    borderaxespad=0.0,
                )
            top -= block
        _title_and_footer(fig, height, title_lines, footer_lines, standin)
        paths = _save(fig, stem, dpi)
        plt.close(fig)
    return paths


def _title_and_footer(fig, height: float, title_lines: list[str], footer_lines: list[str], standin: bool) -> None:
    """The title at the top of ``fig`` (``height`` inches tall); at the bottom the footer and, for stand-in
    data, the red warning above it."""
    fig.text(0.5, 1 - 0.06 / height, "\n".join(title_lines), ha="center", va="top", fontsize=8, fontweight="bold")
    y = 0.06 / height
    if standin:
        fig.text(
            0.5,
            y,
            "STAND-IN DATA: not comparable to the paper",
            ha="center",
            va="bottom",
            fontsize=7.5,
            color=STANDIN_COLOR,
            fontweight="bold",
        )
        y += 0.2 / height
    fig.text(0.5, y, "\n".join(footer_lines), ha="center", va="bottom", fontsize=6, color=GREY)


def _save(fig, stem: Path, dpi: int) -> list[Path]:
    """``<stem>.png`` and ``<stem>.svg``, written atomically without a date or software stamp."""
    paths = [stem.with_suffix(".png"), stem.with_suffix(".svg")]
    stem.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(paths[0]) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
    with atomic_path(paths[1]) as tmp:
        fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
    return paths
