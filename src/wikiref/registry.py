"""The stage registry: one entry per paper step.

It is the one place that says, for each step, which parameter sections it reads, which code and
upstream data it depends on, and what it produces. ``dvc.yaml`` is generated from it
(``wikiref dvc-yaml --write``; ``--check`` fails when the file is stale) and the Snakefile's
``rule all`` asks for the outputs of every implemented stage.

Each DVC stage runs the step's Snakemake aggregate target (``<step>_all``), so Snakemake stays the
single executor and DVC adds params-aware caching, experiments and metrics on top.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

SNAKEMAKE_CMD = "snakemake --profile workflow/profiles/default {target}"


@dataclass(frozen=True)
class Stage:
    name: str
    params: tuple[str, ...]  # top-level params.yaml sections the step reads
    code: tuple[str, ...]  # source files/folders (DVC deps)
    deps: tuple[str, ...]  # upstream data (DVC deps) - outputs of earlier stages or inputs
    outs: tuple[str, ...]  # outputs (DVC outs, persist: true, so Snakemake can skip finished jobs)
    metrics: tuple[str, ...] = ()  # small JSON metrics (cache: false)
    plots: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()  # files Snakemake's <step>_all / rule all request
    implemented: bool = True
    issue: str = ""

    @property
    def target(self) -> str:
        return f"{self.name}_all"


def _common_code(step_files: tuple[str, ...]) -> tuple[str, ...]:
    return ("src/wikiref/config.py", "src/wikiref/io.py") + step_files


def stages(config: Mapping) -> list[Stage]:
    """All paper steps, in order, for the given (validated) config."""
    sample_dir = config["sample"]["out_dir"].rstrip("/")
    duc_root = config["duc"]["root"].rstrip("/")
    duc_standin = bool(config["duc"]["standin"])
    duc_years = list(config["duc"]["years"])
    dump_dir = config["collect"]["dump"]["dir"].rstrip("/")
    parts = config["collect"]["dump"]["parts"]
    fetch = config["collect"]["fetch"]
    collect_deps: list[str] = []
    # Inputs that the sample stage produces are tracked through that stage's outs.
    uses_sample = dump_dir.startswith(sample_dir) or (
        fetch["backend"] == "warc" and any(p.startswith(sample_dir) for p in fetch.get("warc_paths", []))
    )
    if uses_sample:
        collect_deps.append(sample_dir)
    if not dump_dir.startswith(sample_dir):
        collect_deps.append(dump_dir)
    if fetch["backend"] == "warc":
        collect_deps += [p for p in fetch.get("warc_paths", []) if not p.startswith(sample_dir)]

    # pretrain (#5): one metrics file per Table IV variant, then the table.
    _pretrain_metrics = tuple(f"results/metrics/pretrain_{v['name']}.json" for v in config["pretrain"]["variants"])
    _table4 = tuple(f"results/tables/table4_wikiref.{ext}" for ext in ("csv", "md", "tex"))

    # finetune (#6): one metrics file per (setting, held-out year), then Table VI.
    _ft_settings = config["finetune"]["settings"]
    _ft_pretrain = any(s["init"] == "pretrained" for s in _ft_settings)
    _ft_iterative = any(s["method"] == "iterative" for s in _ft_settings)
    _ft_pretrain_metrics = tuple(f"results/metrics/pretrain_{v['name']}.json" for v in config["pretrain"]["variants"])
    _ft_job_metrics = tuple(f"results/metrics/duc_{s['name']}_{y}.json" for s in _ft_settings for y in duc_years)
    _table6 = tuple(f"results/tables/table6_duc.{ext}" for ext in ("csv", "md", "tex"))

    out = [
        Stage(
            name="sample",
            implemented=True,
            issue="#2",
            # collect: the citation types/aliases decide which cited URLs get a stand-in page.
            params=("sample", "collect"),
            code=_common_code(("src/wikiref/sample.py", "src/wikiref/collect/dump.py",
                               "src/wikiref/collect/statements.py", "src/wikiref/cli/sample.py",
                               "workflow/rules/sample.smk")),
            deps=(),
            outs=(sample_dir,),
            targets=(f"{sample_dir}/MANIFEST.json",),
        ),
        Stage(
            name="collect",
            implemented=True,
            issue="#3",
            params=("collect",),
            code=_common_code(("src/wikiref/collect", "src/wikiref/cli/collect.py", "src/wikiref/cli/collect_merge.py",
                               "workflow/rules/collect.smk")),
            deps=tuple(collect_deps),
            outs=("data/raw",),
            metrics=("results/metrics/collect.json",),
            targets=tuple(f"data/raw/{p}.parquet" for p in parts) + ("results/metrics/collect.json",),
        ),
        Stage(
            name="curate",
            implemented=True,
            issue="#4",
            params=("text", "curate"),
            code=_common_code(
                ("src/wikiref/text.py", "src/wikiref/rouge/__init__.py", "src/wikiref/rouge/fast.py",
                 "src/wikiref/oracle.py", "src/wikiref/curate.py", "src/wikiref/cli/curate.py",
                 "workflow/rules/curate.smk")
            ),
            deps=("data/raw",),
            outs=("data/curated",),
            metrics=("results/metrics/curate.json",),
            targets=("data/curated/examples.parquet", "data/curated/thresholds.json", "results/metrics/curate.json"),
        ),
        Stage(
            name="split",
            implemented=True,
            issue="#4",
            params=("profile", "seed", "split"),
            code=_common_code(("src/wikiref/split.py", "src/wikiref/curate.py", "src/wikiref/cli/split.py",
                               "src/wikiref/report/dataset_tables.py", "src/wikiref/report/tables.py",
                               "workflow/rules/split.smk")),
            deps=("data/curated",),
            outs=("data/split",)
            + tuple(f"results/tables/{t}.{ext}" for t in ("table1_wikiref_splits", "table2_wikiref_percentiles")
                    for ext in ("csv", "md", "tex")),
            metrics=("results/metrics/split.json",),
            targets=("data/split/train.parquet", "data/split/dev.parquet", "data/split/test.parquet",
                     "results/tables/table1_wikiref_splits.md", "results/tables/table2_wikiref_percentiles.md",
                     "results/metrics/split.json"),
        ),
        Stage(
            name="oracle",
            implemented=True,
            issue="#4",
            params=("oracle",),
            code=_common_code(("src/wikiref/rouge/__init__.py", "src/wikiref/rouge/fast.py", "src/wikiref/oracle.py",
                               "src/wikiref/cli/oracle.py", "workflow/rules/oracle.smk")),
            deps=("data/split",),
            outs=("data/oracle",),
            metrics=("results/metrics/oracle.json",),
            targets=("data/oracle/train.parquet", "data/oracle/dev.parquet", "data/oracle/test.parquet",
                     "results/metrics/oracle.json"),
        ),
        Stage(
            name="duc_baselines",
            issue="#6",
            # DUC (or its STAND-IN, built from data/raw when duc.standin): reader -> data/duc/<year>.parquet
            # (sentences + ROUGE-2 recall targets), baselines LEAD / QUERY-SIM / ORACLE with official ROUGE.
            params=(("seed", "sample") if duc_standin else ()) + ("text", "duc", "profile"),
            code=_common_code(("src/wikiref/benchmarks", "src/wikiref/rouge/__init__.py", "src/wikiref/rouge/fast.py",
                               "src/wikiref/rouge/official.py", "src/wikiref/oracle.py", "src/wikiref/text.py",
                               "src/wikiref/report/tables.py", "src/wikiref/cli/duc_standin.py",
                               "src/wikiref/cli/duc_prepare.py", "src/wikiref/cli/duc_baselines.py",
                               "workflow/rules/finetune.smk")),
            deps=("data/raw",) if duc_standin else (duc_root,),
            outs=((duc_root,) if duc_standin else ()) + (
                "data/duc", "results/tables/table6_duc_baselines.csv", "results/tables/table6_duc_baselines.md",
                "results/tables/table6_duc_baselines.tex"),
            metrics=("results/metrics/duc_baselines.json",),
            targets=tuple(f"data/duc/{y}.parquet" for y in duc_years)
            + ("results/metrics/duc_baselines.json", "results/tables/table6_duc_baselines.md"),
        ),
        Stage(
            name="pretrain",
            params=("profile", "seed", "model", "pretrain"),
            code=_common_code(("src/wikiref/model", "src/wikiref/train.py", "src/wikiref/select.py",
                               "src/wikiref/rouge/fast.py", "src/wikiref/baselines.py", "src/wikiref/pretrain.py",
                               "src/wikiref/cli/pretrain.py", "src/wikiref/report/tables.py",
                               "workflow/rules/pretrain.smk")),
            deps=("data/oracle",),
            outs=("models/pretrain",) + _table4,
            metrics=("results/metrics/pretrain.json",) + _pretrain_metrics,
            plots=("results/dvclive",),
            targets=_table4 + ("results/metrics/pretrain.json",) + _pretrain_metrics,
            implemented=True,
            issue="#5",
        ),
        Stage(
            name="finetune",
            issue="#6",
            # Held-out-year fine-tuning (one Snakemake job per finetune.settings x duc.years), sparse
            # subnetworks, Table VI. Starts from models/pretrain (+DA settings) and, for iterative
            # pruning, trains on data/oracle; the baseline rows come from the duc_baselines stage.
            params=("profile", "seed", "model", "finetune", "duc") + (("pretrain",) if _ft_pretrain else ()),
            code=_common_code(("src/wikiref/finetune.py", "src/wikiref/subnet.py", "src/wikiref/cli/finetune.py",
                               "src/wikiref/train.py", "src/wikiref/model", "src/wikiref/pretrain.py",
                               "src/wikiref/select.py", "src/wikiref/benchmarks", "src/wikiref/rouge/__init__.py",
                               "src/wikiref/rouge/official.py", "src/wikiref/report/tables.py",
                               "workflow/rules/finetune.smk")),
            deps=("data/duc", "results/metrics/duc_baselines.json")
            + (("models/pretrain",) + _ft_pretrain_metrics if _ft_pretrain else ())
            + (("data/oracle",) if _ft_iterative else ()),
            outs=("models/finetune",) + _table6,
            metrics=("results/metrics/finetune.json",) + _ft_job_metrics,
            targets=_table6 + ("results/metrics/finetune.json",),
            implemented=True,
        ),
        Stage(
            name="ablations",
            issue="#7",
            # Journal §VI as grids of cells (one Snakemake job per cell, rules in ablations.smk): WikiRef
            # pre-training on subsets / with each pooling / with gradual pruning, DUC fine-tuning of each,
            # collected into results/metrics/ablations.json (Figs. 4-6, Tables VIII-IX).
            params=("profile", "seed", "model", "pretrain", "finetune", "duc", "ablations"),
            code=_common_code(("src/wikiref/ablations.py", "src/wikiref/cli/ablations.py", "src/wikiref/finetune.py",
                               "src/wikiref/subnet.py", "src/wikiref/pretrain.py", "src/wikiref/train.py",
                               "src/wikiref/model", "src/wikiref/select.py", "src/wikiref/benchmarks",
                               "src/wikiref/rouge/__init__.py", "src/wikiref/rouge/fast.py",
                               "src/wikiref/rouge/official.py", "workflow/rules/ablations.smk")),
            deps=("data/oracle", "data/duc"),
            outs=("models/ablations", "results/ablations"),
            metrics=(ABLATIONS_METRICS,),
            targets=(ABLATIONS_METRICS,),
            implemented=ABLATIONS_IMPLEMENTED,
        ),
        Stage(
            name="report",
            issue="#7",
            # Tables VIII-IX, Figs. 4-6, the paper comparison and results/README.md; reads the tables and
            # metrics of every other implemented stage (deps filled in below, see report_inputs).
            params=("profile", "report"),
            code=_common_code(("src/wikiref/report", "src/wikiref/cli/report.py", "workflow/rules/report.smk",
                               "workflow/report")),
            deps=(),
            outs=REPORT_TABLES + REPORT_FIGURE_FILES + (REPORT_INDEX, REPORT_HTML),
            metrics=(REPORT_METRICS,),
            plots=REPORT_PLOTS,
            targets=REPORT_TABLES + REPORT_FIGURE_FILES + REPORT_PLOTS + (REPORT_INDEX, REPORT_HTML, REPORT_METRICS),
            implemented=ABLATIONS_IMPLEMENTED,
        ),
    ]
    # The report reads what every other implemented stage wrote under results/ (tables + metrics).
    upstream = tuple(t for st in out if st.implemented and st.name != "report" for t in st.targets
                     if t.startswith(("results/tables/", "results/metrics/")))
    return [replace(st, deps=upstream) if st.name == "report" else st for st in out]


# ablations + report (#7): their outputs, also used by workflow/rules/{ablations,report}.smk.
ABLATIONS_IMPLEMENTED = True
ABLATIONS_METRICS = "results/metrics/ablations.json"
_REPORT_TABLE_STEMS = ("table8_pooling", "table9_subnetworks", "paper_comparison", "paper_claims")
_REPORT_FIGURE_STEMS = ("fig4_duc_train_size", "fig5_wikiref_size", "fig6_wikiref_quality")
REPORT_TABLES = tuple(f"results/tables/{s}.{e}" for s in _REPORT_TABLE_STEMS for e in ("csv", "md", "tex"))
REPORT_PLOTS = tuple(f"results/figures/{s}.png" for s in _REPORT_FIGURE_STEMS)  # DVC image plots
REPORT_FIGURE_FILES = tuple(f"results/figures/{s}.{e}" for s in _REPORT_FIGURE_STEMS for e in ("svg", "csv"))
REPORT_INDEX = "results/README.md"
REPORT_HTML = "results/report/tables.html"
REPORT_METRICS = "results/metrics/report.json"


def report_inputs(config: Mapping) -> list[str]:
    """The upstream tables and metrics the report step reads (its DVC deps and Snakemake inputs)."""
    for st in stages(config):
        if st.name == "report":
            return list(st.deps)
    raise KeyError("report")


def implemented_targets(config: Mapping) -> list[str]:
    """What ``rule all`` asks for: every output of every implemented stage."""
    out: list[str] = []
    for st in stages(config):
        if st.implemented:
            out.extend(st.targets)
    return out


def stage_targets(config: Mapping, name: str) -> list[str]:
    for st in stages(config):
        if st.name == name:
            return list(st.targets)
    raise KeyError(name)


def dvc_yaml_dict(config: Mapping) -> dict:
    """The dvc.yaml content for ``config`` (implemented stages only; the rest are listed as pending)."""
    out: dict = {"stages": {}}
    for st in stages(config):
        if not st.implemented:
            continue
        stage: dict = {"cmd": SNAKEMAKE_CMD.format(target=st.target)}
        stage["params"] = list(st.params)
        stage["deps"] = list(st.code) + list(st.deps)
        stage["outs"] = [{o: {"persist": True}} for o in st.outs]
        if st.metrics:
            stage["metrics"] = [{m: {"cache": False}} for m in st.metrics]
        if st.plots:
            stage["plots"] = [{p: {"cache": False}} for p in st.plots]
        out["stages"][st.name] = stage
    return out


def render_dvc_yaml(config: Mapping) -> str:
    import yaml

    pending = [f"{st.name} ({st.issue})" for st in stages(config) if not st.implemented]
    header = (
        "# GENERATED by `wikiref dvc-yaml --write` from src/wikiref/stages.py and params.yaml.\n"
        "# Do not edit by hand: tests/test_dvc_yaml.py fails when this file is stale.\n"
        "# Each stage runs one Snakemake aggregate target; outs persist so Snakemake can skip finished jobs.\n"
    )
    if pending:
        header += "# Steps not implemented yet (no stage until they are): " + ", ".join(pending) + "\n"
    return header + yaml.safe_dump(dvc_yaml_dict(config), sort_keys=False, default_flow_style=False, width=120)
