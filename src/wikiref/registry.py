"""The stage registry: one small declaration per pipeline stage.

A stage has one name, used by its rules file (``workflow/rules/<name>.smk``, aggregate target
``<name>_all``), its CLI subcommand (``wikiref <name>``, module ``wikiref.cli.<name>``) and its library
module (``wikiref.stages.<name>``). The declaration says which parameter sections the stage reads,
which upstream data it needs and what it writes (paths from :mod:`wikiref.layout`). Its code
dependencies are not written by hand: :func:`code_deps` follows the imports of its CLI module and of
its rules file through the package, so ``dvc repro`` sees every module a stage runs.

``dvc.yaml`` is generated from the registry (``wikiref dvc-yaml --write``; ``--check`` fails when the
file is stale) and the Snakefile's ``rule all`` asks for every stage's targets. Each DVC stage runs
the stage's Snakemake aggregate target, so Snakemake stays the single executor and DVC adds
params-aware caching, experiments and metrics on top.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path

from wikiref import codedeps
from wikiref import layout as L

SNAKEMAKE_CMD = "snakemake --profile workflow/profiles/default {target}"
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parents[1]
RULES_DIR = "workflow/rules"


@dataclass(frozen=True)
class Stage:
    name: str
    jobs: Mapping[str, tuple[str, ...]]  # the jobs these params run -> the keys each reads (JOB_KEYS)
    deps: tuple[str, ...]  # upstream data (DVC deps): outputs of earlier stages or inputs
    outs: tuple[str, ...]  # outputs (DVC outs, persist: true, so Snakemake can skip finished jobs)
    targets: tuple[str, ...]  # files Snakemake's <name>_all / rule all request
    metrics: tuple[str, ...] = ()  # small JSON metrics (persist: true; cached, so experiments show them)
    plots: tuple[str, ...] = ()
    data_files: tuple[str, ...] = ()  # non-Python files the stage's code reads (captions, numbers)

    @property
    def params(self) -> tuple[str, ...]:
        """The top-level params.yaml sections the stage reads (its DVC params)."""
        out: list[str] = []
        for keys in self.jobs.values():
            for key in keys:
                if key.split(".")[0] not in out:
                    out.append(key.split(".")[0])
        return tuple(out)

    @property
    def target(self) -> str:
        return f"{self.name}_all"

    @property
    def rules_file(self) -> str:
        return rules_file(self.name)

    @property
    def code(self) -> tuple[str, ...]:
        return (self.rules_file,) + code_deps(self.name) + self.data_files


@cache
def code_deps(name: str) -> tuple[str, ...]:
    """Source files stage ``name`` runs: the closure of its CLI module's and its rules file's imports."""
    return codedeps.source_files(f"wikiref.cli.{name}", REPO_ROOT / rules_file(name))


# Every job's parameters: (stage, job) -> top-level sections or key paths it reads. A rule passes exactly
# these (wikiref.config.job_params), the job's CLI asks for the same (wikiref.config.params_from_args).
def _abstractive_train_keys(family: str) -> tuple[str, ...]:
    """The keys an abstractive run of ``family`` reads: its family's section only (not the other's)."""
    return (
        "seed",
        "model.device",
        "model.amp",
        "model.eval_batch_size",
        "abstractive.vocab",
        "abstractive.max_train_examples",
        "abstractive.max_eval_examples",
        f"abstractive.{family}",
        "abstractive.decode",
        "abstractive.rouge_flags",
        "abstractive.duc",
        "abstractive.runs",
        "psg2sum.rouge_flags",
        "duc.rouge_flags",
        "duc.summary_words",
    )


def section_keys_except(section: str, *excluded: str) -> tuple[str, ...]:
    """The key paths of every parameter of ``section`` but ``excluded`` (the schema's properties, in its order):
    what a job reads of a section whose ``excluded`` entries it makes itself (the comparison cells' own
    ``pretrain.variants`` / ``finetune.settings``), so editing those reruns none of its jobs, while a key added to
    the section reaches the job (and reruns it) without a change here."""
    from wikiref.config import load_schema

    props = load_schema()["properties"][section]["properties"]
    unknown = [k for k in excluded if k not in props]
    if unknown:
        raise KeyError(f"section {section!r} has no parameters {unknown} (schema: {', '.join(props)})")
    return tuple(f"{section}.{k}" for k in props if k not in excluded)


JOB_KEYS: dict[tuple[str, str], tuple[str, ...]] = {
    # One job per external input; its rule passes only its own entry (wikiref.stages.resources.job_params_json).
    ("resources", "get"): ("resources", "collect.fetch.user_agent"),
    ("sample", "run"): ("sample", "collect"),  # collect: citation types/aliases pick the stand-in URLs
    # The download jobs (index + one per part file) read the dump's name and the transport settings; the part job
    # reads everything of collect but the download settings (a retries/timeout change never reruns a part).
    ("collect", "download"): (
        "collect.dump.dir",
        "collect.dump.parts",
        "collect.dump.download",
        "collect.fetch.user_agent",
    ),
    ("collect", "part"): (
        "collect.dump.dir",
        "collect.dump.parts",
        "collect.dump.max_pages",
        "collect.dump.parse_workers",
        "collect.citation_types",
        "collect.statements",
        "collect.fetch",
        "collect.extract",
        "collect.resume",
    ),
    ("collect", "merge"): ("collect",),  # with parts: all it reads the part list from the downloaded index
    # The part job reads only these curate keys, so changing a filter threshold reruns the merge, not spaCy.
    ("curate", "part"): ("text", "curate.include_doc_title", "curate.oracle_max_sentences", "curate.max_raw_per_part"),
    ("curate", "merge"): ("curate",),
    ("split", "run"): ("profile", "seed", "split"),
    ("oracle", "run"): ("oracle",),
    # The sibling augmentation sources, on the common example schema. collect: the stand-ins read the sample
    # dump with the collect section handling; collect.fetch: the title lookups use its cache and HTTP settings.
    ("qmdscnn", "standin"): ("seed", "text", "collect", "qmdscnn"),
    ("qmdscnn", "articles"): ("seed", "text", "collect.fetch", "qmdscnn"),
    ("qmdscnn", "build"): ("profile", "qmdscnn"),
    ("qmdsir", "standin"): ("seed", "text", "collect", "qmdsir"),
    ("qmdsir", "part"): ("seed", "text", "qmdsir"),
    ("qmdsir", "merge"): ("profile", "qmdsir"),
    ("wcep", "standin"): ("seed", "text", "collect", "wcep.standin_articles"),
    ("wcep", "events"): ("wcep.portal",),
    ("wcep", "sources"): ("collect.fetch", "collect.extract", "wcep.sources"),
    ("wcep", "ccnews"): ("collect.extract", "wcep.ccnews"),
    ("wcep", "classify"): ("seed", "wcep.classifier"),
    ("wcep", "build"): ("profile", "seed", "text", "wcep.split", "wcep.truncate", "wcep.source_variant"),
    ("wcep", "supervised"): ("seed", "model", "pretrain", "wcep.source_variant", "wcep.supervised", "wcep.evaluation"),
    ("wcep", "evaluate"): ("profile", "seed", "wcep.source_variant", "wcep.evaluation"),
    ("psg2sum", "standin"): ("seed", "collect.statements.skip_sections", "psg2sum.dump", "psg2sum.standin_articles"),
    ("psg2sum", "part"): (
        "text",
        "collect.statements.skip_sections",
        "psg2sum.dump",
        "psg2sum.namespaces",
        "psg2sum.max_edit_chars",
        "psg2sum.min_sentence_tokens",
        "psg2sum.min_passage_tokens",
        "psg2sum.overlap_grid",
        "psg2sum.pages_per_chunk",
    ),
    ("psg2sum", "merge"): ("profile", "seed", "text", "psg2sum.min_overlap", "psg2sum.overlap_grid", "psg2sum.split"),
    ("psg2sum", "baselines"): ("profile", "seed", "model", "pretrain", "psg2sum.supervised", "psg2sum.rouge_flags"),
    ("duc", "standin"): ("seed", "sample", "duc"),
    ("duc", "prepare"): ("text", "duc"),
    ("duc", "baselines"): ("profile", "duc"),
    ("duc", "table5"): ("profile",),
    ("pretrain", "variant"): ("seed", "model", "pretrain"),
    ("pretrain", "table"): ("profile", "seed", "model", "pretrain"),
    # A fine-tuning job gets its own finetune.settings entry only (replace=), the pretrain section only
    # when it starts from (or prunes on) WikiRef.
    ("finetune", "run"): ("seed", "model", "finetune", "duc"),
    ("finetune", "run_pretrained"): ("seed", "model", "finetune", "duc", "pretrain"),
    ("finetune", "prune"): ("seed", "model", "pretrain", "finetune"),
    ("finetune", "table"): ("profile", "model", "finetune", "duc"),
    # A cell gets these without the grid lists (wikiref.stages.ablations.cell_params_json).
    ("ablations", "cell"): ("seed", "model", "pretrain", "finetune", "duc", "ablations"),
    ("ablations", "collect"): ("profile", "seed", "model", "pretrain", "finetune", "duc", "ablations"),
    ("qmsum", "standin"): ("seed", "qmsum.standin_meetings"),
    ("qmsum", "prepare"): ("seed", "qmsum.files", "qmsum.standin", "qmsum.resplit", "qmsum.with_speaker"),
    ("qmsum", "baselines"): ("profile", "seed", "qmsum"),
    ("qmsum", "ltr"): ("profile", "seed", "model.encoder", "model.device", "qmsum"),
    ("qmsum", "bi"): ("profile", "seed", "model", *section_keys_except("finetune", "settings"), "qmsum"),
    # The source comparison. A cell job reads the pretrain / finetune sections but their Table IV variants /
    # Table VI settings (it makes its own entries: wikiref.stages.compare.variant_spec / start_setting), and only
    # the compare keys it reads, so editing those lists, adding a budget or toggling a benchmark reruns only the
    # jobs that change.
    ("compare", "oracle"): ("oracle",),
    ("compare", "pretrain"): (
        "seed",
        "model",
        *section_keys_except("pretrain", "variants"),
        "compare.sources",  # with equal.examples null, N = the smallest training split among these
        "compare.union",
        "compare.head",
        "compare.pooling",
        "compare.equal",
        "compare.natural",
        "compare.budget",
    ),
    ("compare", "duc"): (
        "seed",
        "model",
        *section_keys_except("pretrain", "variants"),
        *section_keys_except("finetune", "settings"),
        "duc",
        "compare.head",
        "compare.pooling",
        "compare.budget",
        "compare.duc",
        "compare.ltr",
    ),
    ("compare", "qmsum"): (
        "seed",
        "model",
        *section_keys_except("pretrain", "variants"),
        *section_keys_except("finetune", "settings"),
        "qmsum",
        "compare.head",
        "compare.pooling",
        "compare.budget",
        "compare.qmsum",
        "compare.ltr",
    ),
    # An abstractive cell: the pre-training cell's data keys, its abstractive model alone (replace=,
    # wikiref.stages.compare.abstractive_only), the abstractive sizes / training / decoding, DUC and QMSum.
    ("compare", "abstractive"): (
        "seed",
        "model",
        "compare.sources",
        "compare.union",
        "compare.equal",
        "compare.natural",
        "compare.budget",
        "compare.qmsum",
        "compare.abstractive",
        "abstractive.vocab",
        "abstractive.seq2seq",
        "abstractive.hiersumm",
        "abstractive.decode",
        "abstractive.duc",
        "duc",
        "qmsum",
    ),
    ("compare", "table"): ("profile", "seed", "model", "duc", "qmsum", "compare"),
    # The abstractive models: one training job per abstractive.runs entry, which gets that entry alone (replace=,
    # wikiref.stages.abstractive.runs.run_only) and only its family's section, so editing one run or the other
    # family's settings reruns nothing else; the table reads every run's metrics.
    **{("abstractive", f"train_{family}"): _abstractive_train_keys(family) for family in ("seq2seq", "hiersumm")},
    ("abstractive", "table"): ("profile", "abstractive.runs", "abstractive.duc.years"),
    # The human-evaluation kit: the sample job reads psg2sum's part list (the mined pairs it samples from).
    ("humaneval", "sample"): ("seed", "humaneval", "psg2sum.dump.parts"),
    ("humaneval", "score"): ("profile", "seed", "humaneval"),
    ("report", "run"): ("profile", "report"),
}


def job_keys(name: str, job: str) -> tuple[str, ...]:
    """The parameter keys job ``job`` of stage ``name`` reads (what its rule passes, what its CLI asks for)."""
    try:
        return JOB_KEYS[name, job]
    except KeyError:
        raise KeyError(f"no job {job!r} in stage {name!r} (jobs: {sorted(JOB_KEYS)})") from None


def unknown_job_keys(jobs: Mapping[tuple[str, str], tuple[str, ...]] | None = None) -> list[str]:
    """The key paths of ``jobs`` (default :data:`JOB_KEYS`) that name no parameter of the schema, as
    ``stage/job: key``; [] = every job reads real parameters."""
    from wikiref.config import schema_at

    return [
        f"{stage}/{job}: {key}"
        for (stage, job), keys in (JOB_KEYS if jobs is None else jobs).items()
        for key in keys
        if schema_at(key.split(".")) is None
    ]


def params_json(config: Mapping, name: str, job: str, **replace) -> str:
    """The ``--params-json`` of job ``job`` of stage ``name``: exactly the parameters it reads, with
    ``replace`` (key path -> value) standing in for configured values (the Snakefile's ``stage_params``)."""
    from wikiref.config import job_params

    return job_params(config, *job_keys(name, job), replace=replace or None)


def _jobs(name: str, *jobs: str) -> dict[str, tuple[str, ...]]:
    return {j: job_keys(name, j) for j in jobs}


# ------------------------------------------------------------------------------------- the stages


def _resources(c: Mapping) -> Stage:
    # External inputs (params section resources: key path of the local path -> url / files / manual), one job
    # each. Neither deps nor outs: like the downloaded dump, they are tens of GB that DVC need not hash or cache
    # (downloads are sha1-verified or their sha1 is recorded beside them); the consumer stages list the paths
    # as their deps. No targets of its own either: the consumers' jobs pull them in, and the rules file's
    # resources_all asks for every entry (wikiref.stages.resources.paths; not imported here, so the other stages'
    # code deps stay free of the download code).
    return Stage("resources", jobs=_jobs("resources", "get"), deps=(), outs=(), targets=())


def _sample(c: Mapping) -> Stage:
    out = L.sample_dir(c)
    return Stage(
        "sample",
        jobs=_jobs("sample", "run"),
        deps=(),
        outs=(out,),
        targets=(f"{out}/{L.SAMPLE_MANIFEST}",),
    )


def _collect(c: Mapping) -> Stage:
    sample_dir, dump_dir = L.sample_dir(c), L.dump_dir(c)
    fetch = c["collect"]["fetch"]
    archives = list(fetch.get("warc_paths", [])) if fetch["backend"] == "warc" else []
    download = L.dump_download(c) is not None
    deps: list[str] = []
    # Inputs that the sample stage produces are tracked through that stage's outs.
    if L.under(dump_dir, sample_dir) or any(L.under(p, sample_dir) for p in archives):
        deps.append(sample_dir)
    # A downloaded dump is neither a dep nor an out: params name it (wiki, date, parts) and every file is
    # verified against the dump's sha1, so DVC need not hash or cache tens of GB of it.
    if not L.under(dump_dir, sample_dir) and not download:
        deps.append(dump_dir)
    deps += [p for p in archives if not L.under(p, sample_dir)]
    parts = c["collect"]["dump"]["parts"]
    # parts: all -> the part list is known once the dump's index is downloaded (Snakemake checkpoint
    # collect_download_index): the target is the merged metrics, which need every part.
    per_part = () if parts == "all" else tuple(L.RAW_PART.format(part=p) for p in parts)
    return Stage(
        "collect",
        jobs=_jobs("collect", *(("download",) if download else ()), "part", "merge"),
        deps=tuple(deps),
        outs=(L.RAW_DIR,),
        metrics=(L.COLLECT_METRICS,),
        targets=per_part + (L.COLLECT_METRICS,),
    )


def _curate(c: Mapping) -> Stage:
    return Stage(
        "curate",
        jobs=_jobs("curate", "part", "merge"),
        deps=(L.RAW_DIR,),
        outs=(L.CURATED_DIR,),
        metrics=(L.CURATE_METRICS,),
        targets=(L.CURATED, L.CURATE_THRESHOLDS, L.CURATE_METRICS),
    )


def _split(c: Mapping) -> Stage:
    return Stage(
        "split",
        jobs=_jobs("split", "run"),
        deps=(L.CURATED_DIR,),
        # + WikiRef on the common example schema (data/sources/wikiref/<split>.parquet)
        outs=(L.SPLIT_DIR, L.SOURCE_DIR.format(source="wikiref")) + L.table_files(L.TABLE1) + L.table_files(L.TABLE2),
        metrics=(L.SPLIT_METRICS,),
        targets=tuple(L.SPLIT_FILE.format(split=s) for s in L.SPLITS)
        + L.source_splits("wikiref")
        + (f"{L.TABLE1}.md", f"{L.TABLE2}.md", L.SPLIT_METRICS),
    )


def _oracle(c: Mapping) -> Stage:
    return Stage(
        "oracle",
        jobs=_jobs("oracle", "run"),
        deps=(L.SPLIT_DIR,),
        outs=(L.ORACLE_DIR,),
        metrics=(L.ORACLE_METRICS,),
        targets=tuple(L.ORACLE_FILE.format(split=s) for s in L.SPLITS) + (L.ORACLE_METRICS,),
    )


def _qmdscnn(c: Mapping) -> Stage:
    # CNN/DailyMail stories (or their STAND-IN, built from the sample dump) -> data/qmdscnn/articles/<shard>
    # -> BM25 retrieval -> data/sources/qmdscnn/<split>.parquet + Table 1 statistics. Declared from params
    # alone (the same dvc.yaml on every machine): with standin auto the STAND-IN is always built, and the
    # real stories_dir, read when it exists, is outside what DVC tracks (Snakemake sees it).
    q = c["qmdscnn"]
    build_standin = q["standin"] in (True, "auto")
    deps = ((L.sample_dir(c),) if build_standin else ()) + (
        (q["stories_dir"].rstrip("/"),) if q["standin"] is False else ()
    )
    return Stage(
        "qmdscnn",
        jobs=_jobs("qmdscnn", *(("standin",) if build_standin else ()), "articles", "build"),
        deps=deps + tuple(q["titles"]["warc_paths"]),
        outs=((L.QMDSCNN_STANDIN,) if build_standin else ())
        + (L.QMDSCNN_DIR, L.SOURCE_DIR.format(source="qmdscnn"))
        + L.table_files(L.QMDSCNN_TABLE),
        metrics=(L.QMDSCNN_METRICS,),
        targets=((L.QMDSCNN_STANDIN,) if build_standin else ())
        + L.source_splits("qmdscnn")
        + (f"{L.QMDSCNN_TABLE}.md", L.QMDSCNN_METRICS),
    )


def _qmdsir(c: Mapping) -> Stage:
    # MS MARCO QnA (or its STAND-IN, built from the sample dump) -> data/qmdsir/parts/<shard> (filters)
    # -> data/sources/qmdsir/<split>.parquet + Table 1 statistics.
    q = c["qmdsir"]
    standin = bool(q["standin"])
    return Stage(
        "qmdsir",
        jobs=_jobs("qmdsir", *(("standin",) if standin else ()), "part", "merge"),
        deps=(L.sample_dir(c),) if standin else (q["dir"].rstrip("/"),),
        outs=((q["dir"].rstrip("/"),) if standin else ())
        + (L.QMDSIR_DIR, L.SOURCE_DIR.format(source="qmdsir"))
        + L.table_files(L.QMDSIR_TABLE),
        metrics=(L.QMDSIR_METRICS,),
        targets=L.source_splits("qmdsir") + (f"{L.QMDSIR_TABLE}.md", L.QMDSIR_METRICS),
    )


def _wcep(c: Mapping) -> Stage:
    # Current Events Portal (dump wikitext / monthly HTML; or the STAND-IN built from the sample dump) -> events
    # -> source articles (fetch) + CC-NEWS candidates (per shard) -> classifier -> data/sources/wcep/<split>
    # (WCEP-<n>) + WCEP-total, Tables 3-5, Figs. 1-2.
    w = c["wcep"]
    standin = bool(w["standin"])
    inputs = (
        ()
        if standin
        else tuple(
            dict.fromkeys(
                p.rstrip("/")
                for p in w["portal"]["dump_paths"]
                + w["portal"]["html_paths"]
                + w["ccnews"]["paths"]
                + w["sources"]["warc_paths"]
            )
        )
    )
    supervised = (L.WCEP_SUPERVISED_DIR,) if w["supervised"]["enabled"] else ()
    return Stage(
        "wcep",
        jobs=_jobs(
            "wcep",
            *(("standin",) if standin else ()),
            "events",
            "sources",
            "ccnews",
            "classify",
            "build",
            "supervised",
            "evaluate",
        ),
        deps=((L.sample_dir(c),) if standin else ()) + inputs,
        outs=((L.WCEP_STANDIN,) if standin else ())
        + (L.WCEP_DIR, L.SOURCE_DIR.format(source="wcep"), f"{L.RESULTS}/wcep")
        + supervised
        + L.table_files(L.WCEP_TABLE3)
        + L.table_files(L.WCEP_TABLE4)
        + L.table_files(L.WCEP_TABLE5)
        + L.figure_data(L.STAGE_FIGURES),  # the report draws them (report.dpi reruns the report alone)
        metrics=(L.WCEP_CLASSIFIER_METRICS, L.WCEP_METRICS, L.WCEP_EVALUATE_METRICS),
        targets=L.source_splits("wcep")
        + (
            f"{L.WCEP_TABLE3}.md",
            f"{L.WCEP_TABLE4}.md",
            f"{L.WCEP_TABLE5}.md",
        )
        + L.figure_data(L.STAGE_FIGURES)
        + (L.WCEP_CLASSIFIER_METRICS, L.WCEP_METRICS, L.WCEP_EVALUATE_METRICS),
    )


def _psg2sum(c: Mapping) -> Stage:
    # Page-history dump parts (or the STAND-IN built from the sample dump) -> data/psg2sum/parts/<part>
    # (mined candidate pairs) -> data/sources/psg2sum/<split>.parquet, Tables 2-4.
    p = c["psg2sum"]
    standin = bool(p["standin"])
    return Stage(
        "psg2sum",
        jobs=_jobs("psg2sum", *(("standin",) if standin else ()), "part", "merge", "baselines"),
        deps=(L.sample_dir(c),) if standin else (p["dump"]["dir"].rstrip("/"),),
        outs=((L.PSG2SUM_STANDIN,) if standin else ())
        + (L.PSG2SUM_DIR, L.SOURCE_DIR.format(source="psg2sum"), L.PSG2SUM_MODEL_DIR, f"{L.RESULTS}/psg2sum")
        + L.table_files(L.PSG2SUM_TABLE2)
        + L.table_files(L.PSG2SUM_TABLE3)
        + L.table_files(L.PSG2SUM_TABLE4),
        metrics=(L.PSG2SUM_METRICS, L.PSG2SUM_BASELINES_METRICS),
        targets=L.source_splits("psg2sum")
        + (f"{L.PSG2SUM_TABLE2}.md", f"{L.PSG2SUM_TABLE3}.md", f"{L.PSG2SUM_TABLE4}.md")
        + (L.PSG2SUM_METRICS, L.PSG2SUM_BASELINES_METRICS),
    )


def _duc(c: Mapping) -> Stage:
    # NIST DUC (or its STAND-IN, built from data/raw minus WikiRef's articles/documents when duc.standin) -> data/duc/<year>.parquet
    # (sentences + ROUGE-2 recall targets); baselines LEAD / QUERY-SIM / ORACLE with official ROUGE.
    standin, root = bool(c["duc"]["standin"]), L.duc_root(c)
    return Stage(
        "duc",
        jobs=_jobs("duc", *(("standin",) if standin else ()), "prepare", "baselines", "table5"),
        deps=(L.RAW_DIR, L.SPLIT_DIR) if standin else (root,),  # the STAND-IN holds WikiRef's split out
        outs=((root,) if standin else ()) + (L.DUC_DIR,) + L.table_files(L.TABLE6_BASELINES) + L.table_files(L.TABLE5),
        metrics=(L.DUC_BASELINES_METRICS,),
        targets=tuple(L.DUC_YEAR.format(year=y) for y in c["duc"]["years"])
        + (L.DUC_BASELINES_METRICS, f"{L.TABLE6_BASELINES}.md", f"{L.TABLE5}.md"),
    )


def _abstractive(c: Mapping) -> Stage:
    # The common example files of the runs' sources (+ DUC years for duc runs) -> one training job per run
    # (models/abstractive/<run>, test + DUC summaries and scores) -> Psg2Sum Table 4 (with the psg2sum
    # baselines' extractive rows), QmdsCnn Table 3, QmdsIr Table 4, DUC Table 5.
    runs = c["abstractive"]["runs"]
    sources = sorted({s for r in runs for s in (*r["train"], *r["test"])})
    duc = any(r["duc"] for r in runs)
    per_run = tuple(L.ABSTRACTIVE_RUN_METRICS.format(run=r["name"]) for r in runs)
    return Stage(
        "abstractive",
        jobs=_jobs("abstractive", *sorted({f"train_{r['family']}" for r in runs}), "table"),
        deps=tuple(L.SOURCE_DIR.format(source=s) for s in sources)
        + ((L.DUC_DIR,) if duc else ())
        + (L.PSG2SUM_BASELINES_METRICS,),
        outs=(L.ABSTRACTIVE_MODELS_DIR, L.ABSTRACTIVE_RESULTS)
        + tuple(f for t in L.ABSTRACTIVE_TABLES for f in L.table_files(t)),
        metrics=(L.ABSTRACTIVE_METRICS,) + per_run,
        plots=(L.ABSTRACTIVE_LIVE_ROOT,),
        targets=tuple(f for t in L.ABSTRACTIVE_TABLES for f in L.table_files(t)) + (L.ABSTRACTIVE_METRICS,) + per_run,
    )


def _pretrain(c: Mapping) -> Stage:
    per_variant = tuple(L.PRETRAIN_VARIANT_METRICS.format(variant=v["name"]) for v in c["pretrain"]["variants"])
    return Stage(
        "pretrain",
        jobs=_jobs("pretrain", "variant", "table"),
        deps=(L.ORACLE_DIR,),
        outs=(L.PRETRAIN_DIR,) + L.table_files(L.TABLE4),
        metrics=(L.PRETRAIN_METRICS,) + per_variant,
        plots=(L.DVCLIVE_DIR,),
        targets=L.table_files(L.TABLE4) + (L.PRETRAIN_METRICS,) + per_variant,
    )


def _finetune(c: Mapping) -> Stage:
    # One Snakemake job per finetune.settings x duc.years; starts from models/pretrain (+DA settings)
    # and, for iterative pruning, trains on data/oracle; the baseline rows come from the duc stage.
    settings = c["finetune"]["settings"]
    from_pretrained = any(s["init"] == "pretrained" for s in settings)
    iterative = any(s["method"] == "iterative" for s in settings)
    pretrain_metrics = tuple(L.PRETRAIN_VARIANT_METRICS.format(variant=v["name"]) for v in c["pretrain"]["variants"])
    jobs = tuple(L.FINETUNE_JOB_METRICS.format(setting=s["name"], year=y) for s in settings for y in c["duc"]["years"])
    return Stage(
        "finetune",
        jobs=_jobs(
            "finetune",
            "run",
            *(("run_pretrained",) if from_pretrained else ()),
            *(("prune",) if iterative else ()),
            "table",
        ),
        deps=(L.DUC_DIR, L.DUC_BASELINES_METRICS)
        + ((L.PRETRAIN_DIR,) + pretrain_metrics if from_pretrained else ())
        + ((L.ORACLE_DIR,) if iterative else ()),
        outs=(L.FINETUNE_DIR,) + L.table_files(L.TABLE6),
        metrics=(L.FINETUNE_METRICS,) + jobs,
        targets=L.table_files(L.TABLE6) + (L.FINETUNE_METRICS,),
    )


def _ablations(c: Mapping) -> Stage:
    # Journal §VI as grids of cells: WikiRef pre-training on subsets / with each pooling / with gradual
    # pruning, DUC fine-tuning of each, collected into results/metrics/ablations.json.
    return Stage(
        "ablations",
        jobs=_jobs("ablations", "cell", "collect"),
        deps=(L.ORACLE_DIR, L.DUC_DIR),
        outs=(L.ABLATIONS_MODELS, L.ABLATIONS_RESULTS),
        metrics=(L.ABLATIONS_METRICS,),
        targets=(L.ABLATIONS_METRICS,),
    )


def _qmsum(c: Mapping) -> Stage:
    # QMSum (open benchmark): the STAND-IN is built on every machine (standin true/auto) so dvc.yaml does not
    # depend on whether the real files exist; the real files, read when present, are outside what DVC tracks
    # unless the profile names them without a STAND-IN (paper).
    q = c["qmsum"]
    build_standin = q["standin"] in (True, "auto")
    real = tuple(f for f in q["files"].values() if f) if q["standin"] is False else ()
    return Stage(
        "qmsum",
        jobs=_jobs("qmsum", *(("standin",) if build_standin else ()), "prepare", "baselines", "ltr", "bi"),
        deps=real,
        outs=((L.QMSUM_STANDIN,) if build_standin else ())
        + (L.QMSUM_DIR,)
        + L.table_files(L.QMSUM_TABLE)
        + L.table_files(L.QMSUM_LTR_TABLE)
        + L.table_files(L.QMSUM_BI_TABLE),
        metrics=(L.QMSUM_METRICS, L.QMSUM_BASELINES_METRICS, L.QMSUM_LTR_METRICS, L.QMSUM_BI_METRICS),
        targets=tuple(L.QMSUM_SPLIT.format(split=s) for s in L.SPLITS)
        + (
            L.QMSUM_METRICS,
            L.QMSUM_BASELINES_METRICS,
            f"{L.QMSUM_TABLE}.md",
            L.QMSUM_LTR_METRICS,
            f"{L.QMSUM_LTR_TABLE}.md",
            L.QMSUM_BI_METRICS,
            f"{L.QMSUM_BI_TABLE}.md",
        ),
    )


def _compare(c: Mapping) -> Stage:
    # Every source on the common schema -> per-source oracle -> one pre-training run per (source, budget)
    # cell -> DUC (transfer + held-out-year fine-tuning) and QMSum -> the comparison table and metrics.
    from wikiref.stages import compare

    sources = compare.compared_sources(c)
    return Stage(
        "compare",
        jobs=_jobs("compare", "oracle", "pretrain", "duc", "qmsum", "abstractive", "table"),
        deps=tuple(L.SOURCE_DIR.format(source=s) for s in sources)
        + (L.DUC_DIR, L.DUC_BASELINES_METRICS, L.QMSUM_DIR, L.QMSUM_BASELINES_METRICS),
        outs=(L.COMPARE_ORACLE_DIR, L.COMPARE_MODELS_DIR, L.COMPARE_RESULTS) + L.table_files(L.COMPARE_TABLE),
        metrics=(L.COMPARE_METRICS,),
        targets=L.table_files(L.COMPARE_TABLE) + (L.COMPARE_METRICS,),
    )


def _humaneval(c: Mapping) -> Stage:
    # The papers' human studies: other stages' declared files -> per study items, key and blank sheets ->
    # the raters' files (ratings/, human input kept in git) -> the papers' tables ("awaiting ratings" without).
    studies = L.humaneval_studies(c)
    tables = tuple(f for s in studies for f in L.table_files(L.HUMANEVAL_TABLE.format(study=s)))
    return Stage(
        "humaneval",
        jobs=_jobs("humaneval", "sample", "score"),
        deps=tuple(L.humaneval_all_inputs(c)) + (L.HUMANEVAL_RATINGS_DIR,),
        outs=(L.HUMANEVAL_DIR,) + tables,
        metrics=(L.HUMANEVAL_SAMPLE_METRICS, L.HUMANEVAL_METRICS),
        targets=tuple(L.HUMANEVAL_ITEMS.format(study=s) for s in studies)
        + tuple(f"{L.HUMANEVAL_TABLE.format(study=s)}.md" for s in studies)
        + (L.HUMANEVAL_SAMPLE_METRICS, L.HUMANEVAL_METRICS),
    )


def _report(c: Mapping) -> Stage:
    # Tables VIII-IX, Figs. 4-6, the paper comparison and results/README.md; its deps (every other
    # stage's tables and metrics) are filled in by stages().
    return Stage(
        "report",
        jobs=_jobs("report", "run"),
        deps=(),
        outs=L.report_tables() + L.report_figure_files() + L.stage_figure_files() + (L.REPORT_INDEX, L.REPORT_HTML),
        metrics=(L.REPORT_METRICS,),
        plots=L.report_figures(),
        targets=L.report_tables()
        + L.report_figure_files()
        + L.report_figures()
        + L.stage_figure_files()
        + (L.REPORT_INDEX, L.REPORT_HTML, L.REPORT_METRICS),
        data_files=("src/wikiref/stages/report/paper_numbers.yaml", "workflow/report"),
    )


# The stages in pipeline order: the one hand-written list of stages. The Snakefile includes their rules
# files (rules_files), the CLI makes their subcommands (wikiref.cli.COMMANDS), dvc.yaml is generated from
# them, and tests/test_stage_declaration.py checks every other place a stage appears against NAMES.
DECLARATIONS: tuple[Callable[[Mapping], Stage], ...] = (
    _resources,
    _sample,
    _collect,
    _curate,
    _split,
    _oracle,
    _qmdscnn,
    _qmdsir,
    _wcep,
    _psg2sum,
    _duc,
    _qmsum,
    _abstractive,
    _pretrain,
    _finetune,
    _ablations,
    _compare,
    _humaneval,
    _report,
)
NAMES = tuple(f.__name__.lstrip("_") for f in DECLARATIONS)


def rules_file(name: str) -> str:
    """The rules file of stage ``name``, relative to the repository root."""
    return f"{RULES_DIR}/{name}.smk"


def rules_files() -> list[str]:
    """Every stage's rules file, in pipeline order: what the Snakefile includes."""
    return [rules_file(name) for name in NAMES]


def stages(config: Mapping) -> list[Stage]:
    """Every stage, in pipeline order, for the given (validated) config."""
    out = [declare(config) for declare in DECLARATIONS]
    # The report reads what every other stage wrote under results/ (tables + metrics): of a table, named by
    # its .md target, it reads the .csv.
    upstream = [
        t
        for st in out
        if st.name != "report"
        for t in st.targets
        if t.startswith((L.TABLES + "/", L.METRICS + "/")) or t in L.figure_data(L.STAGE_FIGURES)
    ]
    tables_csv = [f"{t[: -len('.md')]}.csv" for t in upstream if t.startswith(L.TABLES + "/") and t.endswith(".md")]
    upstream = tuple(dict.fromkeys(upstream + tables_csv))
    return [replace(st, deps=upstream) if st.name == "report" else st for st in out]


def stage(config: Mapping, name: str) -> Stage:
    for st in stages(config):
        if st.name == name:
            return st
    raise KeyError(f"no stage {name!r} (stages: {', '.join(NAMES)})")


def report_inputs(config: Mapping) -> list[str]:
    """The upstream tables and metrics the report stage reads (its DVC deps and Snakemake inputs)."""
    return list(stage(config, "report").deps)


def all_targets(config: Mapping) -> list[str]:
    """What ``rule all`` asks for: every target of every stage."""
    return [t for st in stages(config) for t in st.targets]


def stage_targets(config: Mapping, name: str) -> list[str]:
    return list(stage(config, name).targets)


def dvc_yaml_dict(config: Mapping) -> dict:
    """The dvc.yaml content for ``config``."""
    out: dict = {"stages": {}}
    for st in stages(config):
        entry: dict = {"cmd": SNAKEMAKE_CMD.format(target=st.target)}
        entry["params"] = list(st.params)
        entry["deps"] = list(st.code) + list(st.deps)
        entry["outs"] = [{o: {"persist": True}} for o in st.outs]
        if st.metrics:
            # cached (small JSON) so `dvc exp show` reads each experiment's metrics from its dvc.lock
            entry["metrics"] = [{m: {"persist": True}} for m in st.metrics]
        if st.plots:
            entry["plots"] = [{p: {"cache": False, "persist": True}} for p in st.plots]
        out["stages"][st.name] = entry
    return out


def render_dvc_yaml(config: Mapping) -> str:
    import yaml

    header = (
        "# GENERATED by `wikiref dvc-yaml --write` from src/wikiref/registry.py and params.yaml.\n"
        "# Do not edit by hand: tests/test_dvc_yaml.py fails when this file is stale.\n"
        "# Each stage runs one Snakemake aggregate target; outs persist so Snakemake can skip finished jobs.\n"
        "# Code deps are derived from the imports of each stage's CLI module and rules file.\n"
    )
    return header + yaml.safe_dump(dvc_yaml_dict(config), sort_keys=False, default_flow_style=False, width=120)
