"""The WCEP figures (Figs. 1-2), drawn by the report stage from the CSVs the wcep stage writes (a ``Data``
column says STAND-IN per row): figure name -> (title, renderer) in :data:`RENDERERS`, and the method labels
the wcep tables share.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path


def _read_csv(path: str | Path):
    """A figure CSV written by :func:`_csv`: its numbers and whether its rows say STAND-IN."""
    import pandas as pd

    df = pd.read_csv(path)
    standin = "Data" in df.columns and bool((df["Data"] == "STAND-IN").any())
    return df.drop(columns=["Data"], errors="ignore"), standin


def render_coverage_density(csv: str | Path, stem: str | Path, *, profile: Mapping, dpi: int = 150) -> list[Path]:
    """Draw Fig. 1 from its CSV (:func:`coverage_density_figure`): ``<stem>.png`` and ``<stem>.svg``.
    STAND-IN when the CSV says so or the profile does."""
    df, standin = _read_csv(csv)
    stem = Path(stem)
    _scatter(df, stem, profile={**profile, "standin": bool(standin or profile.get("standin"))}, dpi=dpi)
    return [stem.with_suffix(".png"), stem.with_suffix(".svg")]


def _scatter(df, stem: Path, *, profile: Mapping, dpi: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wikiref.figures import STANDIN_COLOR
    from wikiref.files import atomic_path

    names = list(dict.fromkeys(df["variant"]))
    rc = {"font.size": 8, "svg.hashsalt": "wikiref", "svg.fonttype": "path"}
    with plt.rc_context(rc):
        fig, axes = plt.subplots(1, len(names), figsize=(2.2 * len(names), 2.6), sharey=True, squeeze=False)
        for ax, name in zip(axes[0], names):
            g = df[df["variant"] == name]
            ax.scatter(g["coverage"], g["density"], s=6, alpha=0.6, color="#1f77b4", linewidths=0)
            ax.set_title(name, fontsize=8)
            ax.set_xlabel("Coverage")
            ax.set_xlim(-0.02, 1.02)
            ax.set_yscale("symlog", linthresh=1.0)
        axes[0][0].set_ylabel("Density")
        fig.suptitle("WCEP Fig. 1: coverage and density per cluster", fontsize=8, fontweight="bold")
        foot = f"profile: {profile.get('name', '?')}; A = all articles of a cluster, S = its summary"
        fig.text(0.5, 0.01, foot, ha="center", va="bottom", fontsize=6, color="#555555")
        if profile.get("standin"):
            fig.text(
                0.5,
                0.06,
                "STAND-IN DATA: not comparable to the paper",
                ha="center",
                fontsize=7,
                color=STANDIN_COLOR,
                fontweight="bold",
            )
        fig.subplots_adjust(bottom=0.3, top=0.82, wspace=0.1)
        stem.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(stem.with_suffix(".png")) as tmp:
            fig.savefig(tmp, format="png", dpi=dpi, metadata={"Software": None})
        with atomic_path(stem.with_suffix(".svg")) as tmp:
            fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None})
        plt.close(fig)


def render_added_articles(csv: str | Path, stem: str | Path, *, profile: Mapping, dpi: int = 150) -> list[Path]:
    """Draw Fig. 2 from its CSV (:func:`added_articles_figure`; -1 added = all, drawn at the largest count):
    ``<stem>.png`` and ``<stem>.svg``."""
    from wikiref import figures as F

    df, standin = _read_csv(csv)
    standin = bool(standin or profile.get("standin"))
    stem = Path(stem)
    colors = [F.RED, F.BLUE, F.GREEN, F.ORANGE, F.PURPLE, F.GREY]
    panels = []
    for metric, label in (("rouge1_f1", "ROUGE-1 F1"), ("rouge2_f1", "ROUGE-2 F1")):
        series = []
        for i, (method, g) in enumerate(df.groupby("method", sort=False)):
            g = g.sort_values("added_articles")
            series.append(
                F.Series(
                    METHOD_LABELS.get(method, method),
                    list(g["added_articles"]),
                    list(g[metric]),
                    color=colors[i % len(colors)],
                )
            )
        xs = sorted(set(df["added_articles"]))
        labels = [("all" if any((df["added_articles"] == x) & (df["added"] < 0)) else str(x)) for x in xs]
        panels.append(
            F.Panel(
                ylabel=label, xlabel="additional articles per cluster", series=series, xticks=xs, xticklabels=labels
            )
        )
    F.render(
        panels,
        stem,
        title="WCEP Fig. 2: scores against the number of additional (CC-NEWS) articles",
        provenance=f"profile: {profile.get('name', '?')}; WCEP-total test clusters, added articles sampled (nested, seeded)",
        standin=standin,
        dpi=dpi,
    )
    return [stem.with_suffix(".png"), stem.with_suffix(".svg")]


# The figures the report stage draws from this stage's CSVs: figure name -> (title, renderer).
RENDERERS = {
    "wcep_fig1_coverage_density": ("WCEP Fig. 1: coverage and density per cluster", render_coverage_density),
    "wcep_fig2_added_articles": (
        "WCEP Fig. 2: scores against the number of additional (CC-NEWS) articles",
        render_added_articles,
    ),
}


METHOD_LABELS = {
    "oracle_multi": "ORACLE (MULTI)",
    "oracle_single": "ORACLE (SINGLE)",
    "lead_oracle": "LEAD ORACLE",
    "random_lead": "RANDOM LEAD",
    "random": "RANDOM",
    "textrank": "TEXTRANK",
    "centroid": "CENTROID",
    "submodular": "SUBMODULAR",
    "bert": "BERT scorer (package; paper row: BERTREG)",
}
