"""`wikiref report`: every result table and figure in one place, and the index that links them.

:func:`run` (the stage's job: reads the ablation results, finds the other stages' tables) and
:func:`build` write, from the ablation results and the tables the other steps wrote:

* Tables VIII and IX (``results/tables/table{8,9}_*.{csv,md,tex}``, via ``write_table``);
* Figs. 4, 5, 6 (``results/figures/<stem>.{png,svg}`` + the plotted numbers as ``<stem>.csv``);
* the paper comparison (``paper_comparison.*``: every reproduced number beside the paper's with the
  difference; ``paper_claims.*``: the findings the paper states for Figs. 4-6 and Tables VIII-IX,
  checked on the reproduced numbers), clearly labelled when the profile runs on stand-in data;
* ``results/report/tables.html`` (every table on one page, for ``snakemake --report``);
* ``results/README.md``: the index linking all of them, with the figures inline;
* ``results/metrics/report.json``: counts and mean absolute differences of the comparison (DVC metrics).
"""

from __future__ import annotations

import html
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wikiref import figures, layout
from wikiref.files import read_json, write_json, write_text
from wikiref.stages.report import analyses, compare
from wikiref.tables import STANDIN_NOTE, profile_caption, stand_in_rows, standin_flag, write_table

log = logging.getLogger(__name__)


class ReportError(ValueError):
    """Bad input of the report: a missing ablations file or table."""


COMPARISON_STEM = "paper_comparison"
CLAIMS_STEM = "paper_claims"
# Paper label of each table the pipeline writes (stem -> label); order = the paper's.
PAPER_TABLES = {
    "table1_wikiref_splits": "Table I",
    "table2_wikiref_percentiles": "Table II",
    Path(layout.HUMANEVAL_TABLE.format(study="wikiref_table3")).name: "Table III (human evaluation)",
    Path(layout.QMDSCNN_TABLE).name: "QmdsCnnIr Table 1 (QmdsCnn)",
    Path(layout.QMDSIR_TABLE).name: "QmdsCnnIr Table 1 (QmdsIr)",
    Path(layout.WCEP_TABLE3).name: "WCEP Table 3",
    Path(layout.WCEP_TABLE4).name: "WCEP Table 4",
    Path(layout.WCEP_TABLE5).name: "WCEP Table 5",
    Path(layout.PSG2SUM_TABLE2).name: "Psg2Sum Table 2",
    Path(layout.PSG2SUM_TABLE3).name: "Psg2Sum Table 3",
    Path(layout.HUMANEVAL_TABLE.format(study="psg2sum_table3")).name: "Psg2Sum Table 3 (human check)",
    Path(layout.HUMANEVAL_TABLE.format(study="wcep_ccnews")).name: "WCEP §3.3 (human check)",
    Path(layout.HUMANEVAL_TABLE.format(study="qmdscnnir_table6")).name: "QmdsCnnIr Table 6 (human evaluation)",
    Path(layout.PSG2SUM_TABLE4).name: "Psg2Sum Table 4",
    "table4_wikiref": "Table IV",
    Path(layout.TABLE5).name: "Table V",
    "table6_duc_baselines": "Table VI (baselines)",
    "table6_duc": "Table VI",
    Path(layout.HUMANEVAL_TABLE.format(study="wikiref_table7")).name: "Table VII (human evaluation)",
    analyses.TABLE8_STEM: "Table VIII",
    analyses.TABLE9_STEM: "Table IX",
    Path(layout.QMSUM_TABLE).name: "QMSum baselines",
    Path(layout.COMPARE_TABLE).name: "Source comparison",
    COMPARISON_STEM: "Comparison",
    CLAIMS_STEM: "Comparison (findings)",
}


@dataclass
class Outputs:
    tables_dir: Path
    figures_dir: Path
    index: Path
    html: Path
    summary: Path


def _rel(path: Path, start: Path) -> str:
    return Path(os.path.relpath(path, start)).as_posix()


def table_title(md_path: Path) -> str:
    """The bold first line ``write_table`` puts in every markdown table."""
    first = md_path.read_text(encoding="utf-8").splitlines()[0] if md_path.exists() else ""
    return first.strip("* ") or md_path.stem


def _standin_note(profile: Mapping) -> str:
    return f" ({STANDIN_NOTE})" if profile.get("standin") else ""


def write_comparison(tables_dir: Path, profile: Mapping, ablations: Mapping | None) -> dict:
    """``paper_comparison.*`` and ``paper_claims.*``; returns the summary metrics."""
    df, used = compare.comparison(tables_dir)
    standin = bool(profile.get("standin"))
    label = (
        "STAND-IN numbers: the sample profile runs on stand-in data and a small encoder, so these numbers are "
        "NOT comparable to the paper's; the table only shows which paper numbers each output corresponds to. "
        if standin
        else ""
    )
    notes = (
        label + "Paper = the journal paper (wikiref-journal-qbert.txt), cited by table; Reproduced = this run "
        f"(tables: {', '.join(used) or 'none yet'}); Difference = Reproduced - Paper. Only the rows and columns "
        "this profile produces are listed. WikiRef scores are ROUGE F1 x 100, DUC scores ROUGE recall x 100."
    )
    title = "Paper comparison: reproduced numbers beside the journal paper's" + (
        " (STAND-IN, not comparable)" if standin else ""
    )
    write_table(df, tables_dir / COMPARISON_STEM, title=title, profile=profile, notes=notes)
    claims = compare.claim_checks(ablations)
    cnotes = (
        label + "Figs. 4-6 print no numbers, so the findings the paper states about them (and about Tables "
        "VIII-IX) are checked on the reproduced numbers instead; 'not produced' = this profile did not produce "
        "the numbers the finding needs."
    )
    claims_title = "Paper findings (Figs. 4-6, Tables VIII-IX) checked on this run" + (
        " (STAND-IN, not comparable)" if standin else ""
    )
    write_table(claims, tables_dir / CLAIMS_STEM, title=claims_title, profile=profile, notes=cnotes)
    summary: dict[str, Any] = {
        "cells_compared": int(len(df)),
        "standin": standin,
        "compared_tables": used,
        "by_table": {},
    }
    for tab, g in df.groupby("Paper table", sort=False):
        summary["by_table"][tab] = {
            "cells": int(len(g)),
            "mean_abs_difference": round(float(g["Difference"].astype(float).abs().mean()), 4),
        }
    summary["claims"] = {
        "checked": int((claims["Holds"] != "not produced").sum()),
        "hold": int((claims["Holds"] == "yes").sum()),
    }
    return summary


def write_analyses(
    ab: Mapping,
    tables_dir: Path,
    figures_dir: Path,
    profile: Mapping,
    dpi: int = figures.PNG_DPI,
    width_in: float = figures.COLUMN_WIDTH_IN,
) -> dict[str, list[Path]]:
    """Tables VIII-IX and Figs. 4-6 from the ablation results; returns {stem: paths}."""
    enc = ab["encoder"]
    year = ab["test_year"]
    b = ab.get("budget") or {}
    docs = b.get("wikiref_doc_sentences")
    budget = (
        f"ablation budget: windows of {b.get('max_length')} tokens, {b.get('pretrain_epochs')} WikiRef / "
        f"{b.get('finetune_epochs')} DUC epoch(s), WikiRef pool {b.get('train_pool') or 'all'} examples"
        + (f" (first {docs} sentences)" if docs else "")
        + f", head {ab['head']}"
    )
    duc_kind = "STAND-IN DUC pseudo-year" if ab.get("duc_standin") else "DUC"
    written: dict[str, list[Path]] = {}
    for stem, spec in analyses.TABLES.items():
        df = spec["build"](ab)
        notes = (
            f"WikiRef: test ROUGE F1 x 100 (threshold tuned on dev); {duc_kind} {year}: ROUGE recall x 100, "
            f"official ROUGE-1.5.5 scoring, fine-tuned on {'+'.join(map(str, ab['train_years']))}. {budget}."
        )
        if stem == analyses.TABLE9_STEM:
            notes += (
                " NONE = every weight fine-tuned (the paper prints Init 'Bert' for this row; its numbers equal "
                "Q-BERT + DA in Table VI); ITERATIVE = gradual magnitude pruning while training on WikiRef; "
                "ONE-STEP = largest-magnitude weights of the DA model."
            )
        written[stem] = write_table(
            df, tables_dir / stem, title=spec["title"].format(year=year), profile=profile, encoder=enc, notes=notes
        )
    for stem, spec in analyses.FIGURES.items():
        panels, data = spec["build"](ab)
        paths = figures.render(
            panels,
            figures_dir / stem,
            title=spec["title"].format(year=year),
            provenance=profile_caption({"name": profile["name"]}, enc) + "; " + budget,
            standin=bool(profile.get("standin")),
            dpi=dpi,
            width_in=width_in,
            notes=f"WikiRef: test ROUGE-2 F1 x 100; {duc_kind} {year}: ROUGE-2 recall x 100 "
            "(official ROUGE-1.5.5 flags)",
        )
        csv = figures_dir / f"{stem}.csv"
        write_text(csv, stand_in_rows(data, profile).to_csv(index=False, lineterminator="\n"))
        written[stem] = paths + [csv]
    return written


SOURCES_FIGURE = "fig_compare_sources"  # one of layout.REPORT_FIGURE_STEMS
SOURCES_TITLE = "Source comparison: DUC ROUGE-2 recall vs pre-training examples"


def write_sources_figure(
    cmp: Mapping,
    figures_dir: Path,
    profile: Mapping,
    dpi: int = figures.PNG_DPI,
    width_in: float = figures.COLUMN_WIDTH_IN,
) -> list[Path]:
    """The source comparison's figure: per source, DUC ROUGE-2 recall (mean over the years the mode was
    tested on) against the number of pre-training examples, one panel per mode (fine-tuned, transfer);
    the encoder without augmentation and LEAD (over the same years) as horizontal lines. Also
    ``<stem>.csv`` with the points."""
    colors = [figures.RED, figures.BLUE, figures.GREEN, figures.ORANGE, figures.PURPLE, figures.GREY]
    markers = ["o", "s", "^", "D", "v", "P"]
    rows = cmp["rows"]
    points, panels, tested_by_mode = [], [], []
    for mode, label in (("finetuned", "fine-tuned"), ("transfer", "no fine-tuning")):
        mine = [r for r in rows if r["mode"] == mode]
        years = [y for y in cmp.get("years", []) if any(r.get(f"DUC {y} R-2") is not None for r in mine)]
        if not years:
            continue
        tested_by_mode.append(f"{label}: {'/'.join(str(y) for y in years)}")
        panel = figures.Panel(ylabel=f"DUC R-2 recall ({label})", xlabel="pre-training examples")
        sources = [s for s in dict.fromkeys(r["source"] for r in mine) if s != "none"]
        xs: set = set()
        for i, src in enumerate(sources):
            pts = sorted(
                (r["Examples"], y) for r in mine if r["source"] == src and (y := _duc_r2(r, years)) is not None
            )
            if not pts:
                continue
            xs.update(p[0] for p in pts)
            label_src = next(r["Source"] for r in mine if r["source"] == src)
            panel.series.append(
                figures.Series(
                    label_src,
                    [p[0] for p in pts],
                    [p[1] for p in pts],
                    color=colors[i % len(colors)],
                    marker=markers[i % len(markers)],
                )
            )
            points += [{"mode": mode, "source": src, "examples": x, "duc_rouge2_recall": y} for x, y in pts]
        references = [r for r in rows if (r["source"] == "none" and r["mode"] == mode)]
        references += [r for r in rows if r["mode"] == "baseline" and r["source"] == "lead"]
        for r in references:
            y = _duc_r2(r, years)
            if y is not None:
                color = figures.GREY if r["source"] == "lead" else "#000000"
                panel.hlines.append(figures.HLine(r["Source"], y, color=color))
                points.append({"mode": mode, "source": r["source"], "examples": 0, "duc_rouge2_recall": y})
        panel.xticks = sorted(xs)
        panel.xticklabels = [str(int(x)) for x in sorted(xs)]
        if panel.series or panel.hlines:
            panels.append(panel)
    paths = figures.render(
        panels,
        figures_dir / SOURCES_FIGURE,
        title=SOURCES_TITLE,
        provenance=profile_caption({"name": profile["name"]}, cmp.get("encoder")),
        standin=bool(cmp.get("standin") or profile.get("standin")),  # the same label as the CSV's rows
        dpi=dpi,
        width_in=width_in,
        notes="DUC ROUGE-2 recall x 100 (official flags), mean over the years tested ("
        + "; ".join(tested_by_mode)
        + ")",
    )
    csv = figures_dir / f"{SOURCES_FIGURE}.csv"
    label = {"standin": bool(cmp.get("standin") or profile.get("standin"))}
    write_text(csv, stand_in_rows(pd.DataFrame(points), label).to_csv(index=False, lineterminator="\n"))
    return paths + [csv]


def _duc_r2(row: Mapping, years: Sequence[int]) -> float | None:
    """The mean DUC R-2 of a row over ``years`` (None when one of them is missing)."""
    values = [row.get(f"DUC {y} R-2") for y in years]
    if not values or any(v is None for v in values):
        return None
    return sum(float(v) for v in values) / len(values)


def sources_section(cmp: Mapping | None) -> list[str]:
    """The "which source for which benchmark" lines of ``results/README.md`` (the computed findings)."""
    if not cmp:
        return []
    lines = ["## Which augmentation source for which benchmark", ""]
    if cmp.get("standin"):
        lines += [f"**{STANDIN_NOTE}** (some inputs of the comparison are stand-ins).", ""]
    lines += [f"- {f['text']}" for f in cmp.get("findings", [])] or ["- no finding: no comparable cells were run"]
    lines += [
        "",
        "Computed from the comparison table (`wikiref compare table`): the best source per benchmark and mode, "
        "its margin over the next one and over the encoder without augmentation; a tie is reported as a tie.",
        "",
    ]
    return lines


def _html_tables(stems: Sequence[str], tables_dir: Path, profile: Mapping, extra: Sequence[str] = ()) -> str:
    parts = [
        "<!DOCTYPE html>",
        "<html><head><meta charset='utf-8'><title>wikiref tables</title>",
        "<style>body{font-family:sans-serif;font-size:13px;margin:1em}table{border-collapse:collapse;"
        "margin:0.5em 0 2em}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
        "td:first-child,th:first-child{text-align:left}.standin{color:#b00020;font-weight:bold}</style>",
        "</head><body>",
        f"<h1>wikiref results: all tables</h1><p>{html.escape(profile_caption(profile))}</p>",
    ]
    if profile.get("standin"):
        parts.append(f"<p class='standin'>{html.escape(STANDIN_NOTE)}</p>")
    for stem in stems:
        csv = tables_dir / f"{stem}.csv"
        if not csv.exists():
            continue
        parts.append(f"<h2>{html.escape(table_title(tables_dir / f'{stem}.md'))}</h2>")
        df = pd.read_csv(csv)
        parts.append(df.to_html(index=False, border=0, na_rep="", float_format=lambda v: f"{v:.2f}"))
    if extra:
        parts.append("<h2>Which augmentation source for which benchmark</h2><ul>")
        parts += [f"<li>{html.escape(line)}</li>" for line in extra]
        parts.append("</ul>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def write_index(
    out: Outputs,
    profile: Mapping,
    table_stems: Sequence[str],
    figure_titles: Mapping[str, str],
    metrics_files: Sequence[str],
    encoder: str | None,
    sources: Sequence[str] = (),
) -> None:
    """``results/README.md``: every table (md/csv/tex), figure (png/svg/csv) and metrics file, linked."""
    root = out.index.parent
    lines = ["# wikiref results", "", f"_{profile_caption(profile, encoder)}_", ""]
    if profile.get("standin"):
        lines += [
            f"**{STANDIN_NOTE}.** The {profile['name']} profile runs on stand-in data ("
            f"{profile.get('description', 'see params.yaml')}); the numbers show that the pipeline runs end "
            "to end, not what the paper measured.",
            "",
        ]
    lines += [
        "Written by `wikiref report` (Snakemake rule `report`). An HTML report with the figures and "
        "tables: `snakemake --report results/report.html` (after the workflow has run).",
        "",
        "## Tables",
        "",
        "| Paper | Title | Files |",
        "|---|---|---|",
    ]
    for stem in table_stems:
        md = out.tables_dir / f"{stem}.md"
        if not md.exists():
            continue
        files = " · ".join(
            f"[{ext}]({_rel(out.tables_dir / f'{stem}.{ext}', root)})"
            for ext in ("md", "csv", "tex")
            if (out.tables_dir / f"{stem}.{ext}").exists()
        )
        title = table_title(md).replace("|", "\\|")
        lines.append(f"| {PAPER_TABLES.get(stem, '')} | {title} | {files} |")
    lines += ["", f"All tables on one page: [{_rel(out.html, root)}]({_rel(out.html, root)})", "", "## Figures", ""]
    for stem, title in figure_titles.items():
        png = out.figures_dir / f"{stem}.png"
        if not png.exists():
            continue
        short = title.split(":")[0]
        lines += [
            f"### {title}",
            "",
            f"![{short}]({_rel(png, root)})",
            "",
            " · ".join(f"[{ext}]({_rel(out.figures_dir / f'{stem}.{ext}', root)})" for ext in ("png", "svg", "csv")),
            "",
        ]
    if not any((out.figures_dir / f"{s}.png").exists() for s in figure_titles):
        lines += ["_No figures: the ablations stage has not produced results yet._", ""]
    lines += list(sources)
    lines += ["## Metrics (DVC: `dvc metrics show`)", ""]
    for m in metrics_files:
        lines.append(f"- [{Path(m).name}]({_rel(Path(m), root)})")
    lines.append("")
    write_text(out.index, "\n".join(lines))


def build(
    params: Mapping,
    out: Outputs,
    *,
    ablations: Mapping | None,
    table_stems: Sequence[str],
    metrics_files: Sequence[str],
    compare: Mapping | None = None,
    figure_data: Sequence[str] = (),
) -> dict:
    """Everything the report step writes; returns the summary metrics. The STAND-IN label is derived from
    the upstream metrics files (any one flagged ``standin``) and validated against ``profile.standin``."""
    profile = dict(params["profile"])
    flagged = [m for m in metrics_files if Path(m).exists() and read_json(m).get("standin")]
    profile["standin"] = standin_flag(profile, bool(flagged), f"report (STAND-IN metrics: {', '.join(flagged)})")
    rp = params["report"]
    written: dict[str, list[Path]] = {}
    if ablations is not None:
        written = write_analyses(
            ablations, out.tables_dir, out.figures_dir, profile, dpi=rp["dpi"], width_in=rp["column_width_in"]
        )
    summary = write_comparison(out.tables_dir, profile, ablations)
    if compare is not None:
        written[SOURCES_FIGURE] = write_sources_figure(
            compare, out.figures_dir, profile, dpi=rp["dpi"], width_in=rp["column_width_in"]
        )
    stems = [s for s in PAPER_TABLES if s in set(table_stems) | set(written) | {COMPARISON_STEM, CLAIMS_STEM}]
    stems += sorted(set(table_stems) - set(stems))
    findings = [f["text"] for f in (compare or {}).get("findings", [])]
    write_text(out.html, _html_tables(stems, out.tables_dir, profile, findings))
    encoder = ablations["encoder"] if ablations else None
    year = ablations["test_year"] if ablations else 2007
    titles = {stem: spec["title"].format(year=year) for stem, spec in analyses.FIGURES.items()}
    titles[SOURCES_FIGURE] = SOURCES_TITLE
    for name, (title, paths) in stage_figures(figure_data, out.figures_dir, profile, rp["dpi"]).items():
        titles[name], written[name] = title, paths
    write_index(out, profile, stems, titles, metrics_files, encoder, sources_section(compare))
    summary.update(
        profile=profile["name"],
        standin=profile["standin"],
        tables=len(stems),
        figures=sum(1 for s in titles if s in written),
    )
    if compare is not None:
        summary["source_findings"] = findings
    write_json(out.summary, summary)
    return summary


def stage_renderers() -> dict:
    """Figures other stages write the numbers of and the report draws: name -> (title, renderer)."""
    from wikiref.figures.wcep import RENDERERS as WCEP

    return dict(WCEP)


def stage_figures(csvs: Sequence[str], figures_dir: Path, profile: Mapping, dpi: int) -> dict:
    """Draw each stage figure from its CSV (``<figures_dir>/<name>.png`` / ``.svg``): name -> (title, paths)."""
    renderers = stage_renderers()
    out = {}
    for csv in csvs:
        name = Path(csv).stem
        if name not in renderers:
            raise ReportError(f"{csv}: no figure named {name} (known: {', '.join(sorted(renderers))})")
        if not Path(csv).exists():
            raise ReportError(f"{csv} missing: run the stage that writes it")
        title, render = renderers[name]
        out[name] = (title, render(csv, figures_dir / name, profile=profile, dpi=dpi) + [Path(csv)])
    return out


def table_stems(tables: Sequence[str], tables_dir: str | os.PathLike) -> list[str]:
    """The table stems of ``tables`` (stems or file names, e.g. ``table1_wikiref_splits`` or
    ``results/tables/table1_wikiref_splits.md``), each once, checked to exist in ``tables_dir``."""
    stems: list[str] = []
    for stem in tables:
        name = Path(stem).name
        for suffix in (".csv", ".md", ".tex"):
            if name.endswith(suffix):
                name = name[: -len(suffix)]
        if not (Path(tables_dir) / f"{name}.csv").exists():
            raise ReportError(f"table {name} not found in {tables_dir}")
        if name not in stems:
            stems.append(name)
    return stems


def run(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The report job. inputs: ``ablations`` (``results/metrics/ablations.json``; None: no Tables VIII-IX
    or figures), ``tables`` (the other stages' table stems to index), ``metrics`` (metrics files to list
    in the index); outputs: ``tables_dir``, ``figures_dir``, ``index``, ``html``, ``summary``. Returns
    the summary metrics."""

    ablations = None
    if inputs.get("ablations"):
        path = Path(inputs["ablations"])
        if not path.exists():
            raise ReportError(f"{path} missing: run `wikiref ablations collect` first")
        ablations = read_json(path)
    out = Outputs(
        tables_dir=Path(outputs["tables_dir"]),
        figures_dir=Path(outputs["figures_dir"]),
        index=Path(outputs["index"]),
        html=Path(outputs["html"]),
        summary=Path(outputs["summary"]),
    )
    compare = None
    cmp_path = next(
        (Path(m) for m in inputs.get("metrics", ()) if Path(m).name == Path(layout.COMPARE_METRICS).name), None
    )
    if cmp_path is not None:
        if not cmp_path.exists():
            raise ReportError(f"{cmp_path} missing: run `wikiref compare table` first")
        compare = read_json(cmp_path)
    return build(
        params,
        out,
        ablations=ablations,
        compare=compare,
        table_stems=table_stems(inputs.get("tables", ()), out.tables_dir),
        metrics_files=sorted(set(inputs.get("metrics", ()))),
        figure_data=list(inputs.get("figure_data", ())),
    )
