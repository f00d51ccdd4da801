"""Every artefact path between stages, declared once.

The Snakemake rules, the CLI defaults, the stage registry (``dvc.yaml``, ``rule all``) and the tests
read these names; no other module spells a path between stages. Paths are relative to the working
directory (the repository root, or ``snakemake --directory``). Templates use ``{wildcard}`` fields,
which are at once Snakemake wildcards and :meth:`str.format` fields::

    layout.RAW_PART.format(part="enwiki-sample")  ->  "data/raw/enwiki-sample.parquet"

Three locations come from params, not from here: the offline sample (``sample.out_dir``), the DUC
tree (``duc.root``) and the dump parts' folder (``collect.dump.dir``, where the dump download writes);
:func:`sample_dir`, :func:`duc_root` and :func:`dump_dir` read them.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

TABLE_FORMATS = ("csv", "md", "tex")

DATA = "data"
MODELS = "models"
RESULTS = "results"
LOGS = "logs"
TABLES = f"{RESULTS}/tables"
FIGURES = f"{RESULTS}/figures"
METRICS = f"{RESULTS}/metrics"
BENCHMARKS = f"{LOGS}/benchmarks"

# ------------------------------------------------------------------------------------------ sample
SAMPLE_MANIFEST = "MANIFEST.json"  # inside sample.out_dir
SAMPLE_DUMP = "dump/enwiki-sample.xml.bz2"  # inside sample.out_dir: the real Wikipedia fragment
SAMPLE_WARC = "warc/standin.warc.gz"  # inside sample.out_dir: the STAND-IN cited pages

# ----------------------------------------------------------------------------------------- collect
RAW_DIR = f"{DATA}/raw"
RAW_PART = f"{RAW_DIR}/{{part}}.parquet"
RAW_PART_STATS = f"{RAW_DIR}/{{part}}.stats.json"
COLLECT_METRICS = f"{METRICS}/collect.json"
# The dump download (collect.dump.download.mirror set): inside collect.dump.dir, under the mirror's names.
DUMP_STATUS = "{wiki}-{date}-dumpstatus.json"  # the mirror's <wiki>/<date>/dumpstatus.json, as served
DUMP_SHA1SUMS = "{wiki}-{date}-sha1sums.txt"  # the mirror's <wiki>/<date>/<wiki>-<date>-sha1sums.txt
DUMP_FILE = "{dumpfile}"  # one downloaded part file (the {dumpfile} wildcard: the mirror's file name)

# ------------------------------------------------------------------------------------------ curate
CURATED_DIR = f"{DATA}/curated"
CURATED_PART = f"{CURATED_DIR}/parts/{{part}}.parquet"
CURATED_PART_STATS = f"{CURATED_DIR}/parts/{{part}}.stats.json"
CURATED = f"{CURATED_DIR}/examples.parquet"
CURATE_THRESHOLDS = f"{CURATED_DIR}/thresholds.json"
CURATE_STATS = f"{CURATED_DIR}/stats.json"
CURATE_METRICS = f"{METRICS}/curate.json"

# ------------------------------------------------------------------------------------------- split
SPLITS = ("train", "dev", "test")
SPLIT_DIR = f"{DATA}/split"
SPLIT_FILE = f"{SPLIT_DIR}/{{split}}.parquet"
TABLE1 = f"{TABLES}/table1_wikiref_splits"  # table stems: + .csv / .md / .tex
TABLE2 = f"{TABLES}/table2_wikiref_percentiles"
SPLIT_METRICS = f"{METRICS}/split.json"

# ------------------------------------------------------------------------------------------ oracle
ORACLE_DIR = f"{DATA}/oracle"
ORACLE_FILE = f"{ORACLE_DIR}/{{split}}.parquet"
ORACLE_METRICS = f"{METRICS}/oracle.json"

# --------------------------------------------------------------------------------------------- duc
DUC_DIR = f"{DATA}/duc"
DUC_YEAR = f"{DUC_DIR}/{{year}}.parquet"
DUC_YEAR_STATS = f"{DUC_DIR}/{{year}}.stats.json"
DUC_BASELINES_METRICS = f"{METRICS}/duc_baselines.json"
TABLE6_BASELINES = f"{TABLES}/table6_duc_baselines"
TABLE5 = f"{TABLES}/table5_duc_statistics"  # journal Table V, from the DUC_YEAR_STATS files

# ----------------------------------------------------------------------- the common example schema
# Every augmentation source on one schema (wikiref.schemas.EXAMPLE): data/sources/<source>/<split>.parquet
SOURCES_DIR = f"{DATA}/sources"
SOURCE_DIR = f"{SOURCES_DIR}/{{source}}"
SOURCE_SPLIT = f"{SOURCE_DIR}/{{split}}.parquet"

# ----------------------------------------------------------------------------------------- qmdscnn
QMDSCNN_STANDIN = "resources/qmdscnn-standin"  # STAND-IN .story corpus built from the Wikipedia sample
QMDSCNN_STANDIN_ARCHIVE = "archive.warc.gz"  # inside QMDSCNN_STANDIN: the stand-in article pages
QMDSCNN_DIR = f"{DATA}/qmdscnn"
QMDSCNN_SHARD = f"{QMDSCNN_DIR}/articles/{{shard}}.parquet"
QMDSCNN_SHARD_STATS = f"{QMDSCNN_DIR}/articles/{{shard}}.stats.json"
QMDSCNN_TABLE = f"{TABLES}/qmdscnn_table1"
QMDSCNN_METRICS = f"{METRICS}/qmdscnn.json"

# ------------------------------------------------------------------------------------------ qmdsir
QMDSIR_STANDIN = "resources/qmdsir-standin"  # STAND-IN MS MARCO QnA v2.1 files built from the Wikipedia sample
QMDSIR_DIR = f"{DATA}/qmdsir"
QMDSIR_SHARD = f"{QMDSIR_DIR}/parts/{{shard}}.parquet"
QMDSIR_SHARD_STATS = f"{QMDSIR_DIR}/parts/{{shard}}.stats.json"
QMDSIR_TABLE = f"{TABLES}/qmdsir_table1"
QMDSIR_METRICS = f"{METRICS}/qmdsir.json"

# -------------------------------------------------------------------------------------------- wcep
WCEP_STANDIN = "resources/wcep-standin"  # STAND-IN portal pages, source archive and CC-NEWS built from the sample
WCEP_STANDIN_PORTAL_DUMP = "portal/enwiki-standin-portal.xml.bz2"  # inside WCEP_STANDIN: daily wikitext pages
WCEP_STANDIN_HTML = "html"  # inside WCEP_STANDIN: monthly HTML pages (table.vevent / div.vevent)
WCEP_STANDIN_SOURCES = "sources.warc.gz"  # inside WCEP_STANDIN: the events' source articles (archived pages)
WCEP_STANDIN_CCNEWS = "ccnews"  # inside WCEP_STANDIN: CC-NEWS-style WARC files
WCEP_DIR = f"{DATA}/wcep"
WCEP_EVENTS = f"{WCEP_DIR}/events.parquet"
WCEP_EVENTS_STATS = f"{WCEP_DIR}/events.stats.json"
WCEP_SOURCES = f"{WCEP_DIR}/sources.parquet"
WCEP_SOURCES_STATS = f"{WCEP_DIR}/sources.stats.json"
WCEP_CCNEWS = f"{WCEP_DIR}/ccnews/{{shard}}.parquet"
WCEP_CCNEWS_STATS = f"{WCEP_DIR}/ccnews/{{shard}}.stats.json"
WCEP_CLASSIFIER = f"{WCEP_DIR}/classifier.json"  # the fitted model (JSON, never pickled)
WCEP_ASSIGNMENTS = f"{WCEP_DIR}/assignments.parquet"  # CC-NEWS article -> event, probability
WCEP_TOTAL_DIR = f"{WCEP_DIR}/total"  # WCEP-total on the common schema (Fig. 2 reads every added article)
WCEP_TOTAL = f"{WCEP_TOTAL_DIR}/{{split}}.parquet"
WCEP_SUPERVISED_DIR = f"{MODELS}/wcep"  # the BERT extractive scorer trained on WCEP
WCEP_SUPERVISED = f"{RESULTS}/wcep/bert_summaries.json"
WCEP_TABLE3 = f"{TABLES}/wcep_table3_sizes"
WCEP_TABLE4 = f"{TABLES}/wcep_table4_clusters"
WCEP_TABLE5 = f"{TABLES}/wcep_table5_baselines"
WCEP_FIG1 = f"{FIGURES}/wcep_fig1_coverage_density"
WCEP_FIG2 = f"{FIGURES}/wcep_fig2_added_articles"
WCEP_CLASSIFIER_METRICS = f"{METRICS}/wcep_classifier.json"
WCEP_METRICS = f"{METRICS}/wcep.json"
WCEP_EVALUATE_METRICS = f"{METRICS}/wcep_baselines.json"


# Figures whose numbers a stage writes (``<stem>.csv``) and the report stage draws (``.png``, ``.svg``),
# so that a report setting (report.dpi) reruns the report alone: stem -> renderer in the stage's module.
STAGE_FIGURES = (WCEP_FIG1, WCEP_FIG2)


def figure_data(stems) -> tuple[str, ...]:
    """The CSVs of the plotted numbers of ``stems``."""
    return tuple(f"{s}.csv" for s in stems)


def stage_figure_files() -> tuple[str, ...]:
    """The drawings (PNG, SVG) of :data:`STAGE_FIGURES`, written by the report stage."""
    return tuple(f"{s}.{e}" for s in STAGE_FIGURES for e in ("png", "svg"))


def figure_files(stem: str) -> tuple[str, ...]:
    """A figure's files: ``<stem>.png``, ``.svg`` and the plotted numbers ``<stem>.csv``."""
    return tuple(f"{stem}.{ext}" for ext in ("png", "svg", "csv"))


# ----------------------------------------------------------------------------------------- psg2sum
PSG2SUM_STANDIN = "resources/psg2sum-standin"  # STAND-IN page-history dump parts built from the sample
PSG2SUM_DIR = f"{DATA}/psg2sum"
PSG2SUM_PART = f"{PSG2SUM_DIR}/parts/{{part}}.parquet"  # mined candidate pairs of one history dump part
PSG2SUM_PART_STATS = f"{PSG2SUM_DIR}/parts/{{part}}.stats.json"
PSG2SUM_MODEL_DIR = f"{MODELS}/psg2sum"  # the BERT scorer trained on Psg2Sum (NN-SE's row)
PSG2SUM_SUMMARIES = f"{RESULTS}/psg2sum/summaries.json"
PSG2SUM_TABLE2 = f"{TABLES}/psg2sum_table2_statistics"
PSG2SUM_TABLE3 = f"{TABLES}/psg2sum_table3_threshold"
PSG2SUM_TABLE4 = f"{TABLES}/psg2sum_table4_baselines"
PSG2SUM_METRICS = f"{METRICS}/psg2sum.json"
PSG2SUM_BASELINES_METRICS = f"{METRICS}/psg2sum_baselines.json"

# ------------------------------------------------------------------------------------- abstractive
# The abstractive models (Psg2Sum Table 4 s2s / s2s+copy / PGN; QmdsCnnIr Tables 3-5 HEROSumm), one run each.
ABSTRACTIVE_MODELS_DIR = f"{MODELS}/abstractive"
ABSTRACTIVE_MODEL_DIR = f"{ABSTRACTIVE_MODELS_DIR}/{{run}}"  # the best epoch's weights, config, vocab
ABSTRACTIVE_RESULTS = f"{RESULTS}/abstractive"
ABSTRACTIVE_SUMMARIES = f"{ABSTRACTIVE_RESULTS}/{{run}}/summaries.json"  # test + DUC summaries of one run
# dvclive of the runs: beside pretrain's DVCLIVE_DIR (results/dvclive), not inside it (that folder is the
# pretrain stage's plot output; DVC would see it change whenever an abstractive run trains)
ABSTRACTIVE_LIVE_ROOT = f"{RESULTS}/dvclive_abstractive"
ABSTRACTIVE_LIVE_DIR = f"{ABSTRACTIVE_LIVE_ROOT}/{{run}}"
ABSTRACTIVE_RUN_METRICS_DIR = f"{METRICS}/abstractive"
ABSTRACTIVE_RUN_METRICS = f"{ABSTRACTIVE_RUN_METRICS_DIR}/{{run}}.json"
ABSTRACTIVE_PSG2SUM_TABLE4 = f"{TABLES}/abstractive_psg2sum_table4"
ABSTRACTIVE_QMDSCNN_TABLE3 = f"{TABLES}/abstractive_qmdscnn_table3"
ABSTRACTIVE_QMDSIR_TABLE4 = f"{TABLES}/abstractive_qmdsir_table4"
ABSTRACTIVE_DUC_TABLE5 = f"{TABLES}/abstractive_duc_table5"
ABSTRACTIVE_TABLES = (
    ABSTRACTIVE_PSG2SUM_TABLE4,
    ABSTRACTIVE_QMDSCNN_TABLE3,
    ABSTRACTIVE_QMDSIR_TABLE4,
    ABSTRACTIVE_DUC_TABLE5,
)
ABSTRACTIVE_METRICS = f"{METRICS}/abstractive.json"


# ------------------------------------------------------------------------------------ checkpoints
# Every file of a saved sentence scorer (wikiref.model.scorer.save_scorer writes exactly these; a test checks it).
# A rule that writes a checkpoint declares them all, and so does every rule that loads one.
CHECKPOINT_WEIGHTS = "model.safetensors"
CHECKPOINT_CONFIG = "config.json"
CHECKPOINT_TOKENIZER = ("tokenizer.json", "tokenizer_config.json")
CHECKPOINT_FILES = (CHECKPOINT_WEIGHTS, CHECKPOINT_CONFIG, *CHECKPOINT_TOKENIZER)
# What gradual magnitude pruning writes beside the checkpoint (wikiref.supervised.duc_finetune.prune).
PRUNED_FILES = ("subnet_masks.safetensors", "pruning.json")


def checkpoint_files(model_dir: str, names: tuple[str, ...] = CHECKPOINT_FILES) -> list[str]:
    """The files ``names`` (default: all) of the checkpoint in ``model_dir`` (wildcards such as ``{variant}``
    may stay in it)."""
    return [f"{model_dir}/{name}" for name in names]


# ---------------------------------------------------------------------------------------- pretrain
PRETRAIN_DIR = f"{MODELS}/pretrain"
PRETRAIN_MODEL_DIR = f"{PRETRAIN_DIR}/{{variant}}"
PRETRAIN_MODEL = f"{PRETRAIN_MODEL_DIR}/{CHECKPOINT_WEIGHTS}"
PRETRAIN_CONFIG = f"{PRETRAIN_MODEL_DIR}/{CHECKPOINT_CONFIG}"
PRETRAIN_VARIANT_METRICS = f"{METRICS}/pretrain_{{variant}}.json"
DVCLIVE_DIR = f"{RESULTS}/dvclive"
PRETRAIN_LIVE_DIR = f"{DVCLIVE_DIR}/{{variant}}"
TABLE4 = f"{TABLES}/table4_wikiref"
PRETRAIN_METRICS = f"{METRICS}/pretrain.json"

# ---------------------------------------------------------------------------------------- finetune
FINETUNE_DIR = f"{MODELS}/finetune"
FINETUNE_PRUNED_DIR = f"{FINETUNE_DIR}/{{setting}}/pruned"
FINETUNE_PRUNED_FILES = (*CHECKPOINT_FILES, *PRUNED_FILES)
FINETUNE_JOB_DIR = f"{FINETUNE_DIR}/{{setting}}/{{year}}"
FINETUNE_PREDICTIONS = f"{FINETUNE_JOB_DIR}/predictions.parquet"
FINETUNE_SUMMARIES = f"{FINETUNE_JOB_DIR}/summaries.json"
FINETUNE_JOB_METRICS = f"{METRICS}/duc_{{setting}}_{{year}}.json"
TABLE6 = f"{TABLES}/table6_duc"
FINETUNE_METRICS = f"{METRICS}/finetune.json"

# --------------------------------------------------------------------------------------- ablations
ABLATIONS_MODELS = f"{MODELS}/ablations"
ABLATIONS_PRETRAIN_DIR = f"{ABLATIONS_MODELS}/pretrain"
ABLATIONS_MODEL_DIR = f"{ABLATIONS_PRETRAIN_DIR}/{{aug}}"
ABLATIONS_MODEL = f"{ABLATIONS_MODEL_DIR}/{CHECKPOINT_WEIGHTS}"
ABLATIONS_FINETUNE_WORK = f"{ABLATIONS_MODELS}/finetune/{{aug}}/{{duc}}"
ABLATIONS_RESULTS = f"{RESULTS}/ablations"
ABLATIONS_WIKIREF_RESULT = f"{ABLATIONS_RESULTS}/wikiref/{{aug}}.json"
ABLATIONS_DUC_RESULT = f"{ABLATIONS_RESULTS}/duc/{{aug}}/{{duc}}.json"
ABLATIONS_METRICS = f"{METRICS}/ablations.json"

# ------------------------------------------------------------------------------------------- qmsum
QMSUM_STANDIN = "resources/qmsum-standin/qmsum_standin.jsonl"
QMSUM_DIR = f"{DATA}/qmsum"
QMSUM_SPLIT = f"{QMSUM_DIR}/{{split}}.parquet"
QMSUM_STATS = f"{QMSUM_DIR}/stats.json"
QMSUM_METRICS = f"{METRICS}/qmsum.json"
QMSUM_TABLE = f"{TABLES}/qmsum_baselines"
QMSUM_BASELINES_METRICS = f"{METRICS}/qmsum_baselines.json"
QMSUM_LTR_TABLE = f"{TABLES}/qmsum_ltr"
QMSUM_LTR_METRICS = f"{METRICS}/qmsum_ltr.json"
QMSUM_BI_TABLE = f"{TABLES}/qmsum_bi"
QMSUM_BI_METRICS = f"{METRICS}/qmsum_bi.json"

# ----------------------------------------------------------------------------------------- compare
COMPARE_ORACLE_DIR = f"{DATA}/compare/oracle"
COMPARE_ORACLE_FILE = f"{COMPARE_ORACLE_DIR}/{{source}}/{{split}}.parquet"
COMPARE_MODELS_DIR = f"{MODELS}/compare"
COMPARE_MODEL_DIR = f"{COMPARE_MODELS_DIR}/{{cell}}"
COMPARE_MODEL = f"{COMPARE_MODEL_DIR}/{CHECKPOINT_WEIGHTS}"
COMPARE_WORK_DIR = f"{COMPARE_MODELS_DIR}/work/{{cell}}"  # fine-tuned copies (only their training.json is kept)
COMPARE_RESULTS = f"{RESULTS}/compare"
COMPARE_ORACLE_METRICS = f"{COMPARE_RESULTS}/oracle/{{source}}.json"
COMPARE_PRETRAIN_RESULT = f"{COMPARE_RESULTS}/pretrain/{{cell}}.json"
COMPARE_DUC_RESULT = f"{COMPARE_RESULTS}/duc/{{cell}}.json"
COMPARE_QMSUM_RESULT = f"{COMPARE_RESULTS}/qmsum/{{cell}}.json"
COMPARE_ABSTRACTIVE_RESULT = f"{COMPARE_RESULTS}/abstractive/{{cell}}.json"  # an abstractive cell (+ its summaries)
COMPARE_TABLE = f"{TABLES}/compare_sources"
COMPARE_METRICS = f"{METRICS}/compare.json"

# -------------------------------------------------------------------------------------- humaneval
# The human-evaluation kit: per study the items raters see and blank CSV sheets, the key (which hidden
# system is A / B) in a folder of its own, the raters' answers (human input: kept in git, never generated),
# the papers' tables.
HUMANEVAL_DIR = f"{DATA}/humaneval"
HUMANEVAL_ITEMS = f"{HUMANEVAL_DIR}/{{study}}/items.json"
HUMANEVAL_SHEET = f"{HUMANEVAL_DIR}/{{study}}/sheets/{{rater}}.csv"
HUMANEVAL_KEYS_DIR = f"{HUMANEVAL_DIR}/keys"
HUMANEVAL_KEY = f"{HUMANEVAL_KEYS_DIR}/{{study}}.json"
HUMANEVAL_RATINGS_DIR = "ratings"  # tracked (with its README.md): <study>/<rater>.json (web page) or .csv (sheet)
HUMANEVAL_RATINGS = f"{HUMANEVAL_RATINGS_DIR}/{{study}}"
HUMANEVAL_TABLE = f"{TABLES}/humaneval_{{study}}"
HUMANEVAL_SAMPLE_METRICS = f"{METRICS}/humaneval_sample.json"
HUMANEVAL_METRICS = f"{METRICS}/humaneval.json"

# ------------------------------------------------------------------------------------------ report
REPORT_TABLE_STEMS = ("table8_pooling", "table9_subnetworks", "paper_comparison", "paper_claims")
REPORT_FIGURE_STEMS = ("fig4_duc_train_size", "fig5_wikiref_size", "fig6_wikiref_quality", "fig_compare_sources")
REPORT_INDEX = f"{RESULTS}/README.md"
REPORT_HTML = f"{RESULTS}/report/tables.html"
REPORT_METRICS = f"{METRICS}/report.json"


def source_splits(source: str) -> tuple[str, ...]:
    """The common-schema files of ``source``, one per split."""
    return tuple(SOURCE_SPLIT.format(source=source, split=s) for s in SPLITS)


def shards(n: int) -> tuple[str, ...]:
    """The ``{shard}`` values of a stage split into ``n`` shards: "0", "1", ..."""
    return tuple(str(i) for i in range(int(n)))


def table_files(stem: str) -> tuple[str, ...]:
    """A table's files: ``<stem>.csv``, ``.md``, ``.tex`` (what :func:`wikiref.tables.write_table` writes)."""
    return tuple(f"{stem}.{ext}" for ext in TABLE_FORMATS)


def in_folder(folder, template: str, **fields) -> Path:
    """The file ``template`` names, in ``folder`` instead of its default folder (a folder given on the
    command line): ``in_folder("x", DUC_YEAR, year=2005)`` -> ``x/2005.parquet``."""
    return Path(folder) / Path(template).name.format(**fields)


def table_stem(files) -> str:
    """The stem of a table's files (``[<stem>.csv, <stem>.md, <stem>.tex]`` -> ``<stem>``)."""
    stems = {str(f).rsplit(".", 1)[0] for f in files}
    if len(stems) != 1:
        raise ValueError(f"not the files of one table: {list(files)}")
    return stems.pop()


def report_tables() -> tuple[str, ...]:
    return tuple(f for s in REPORT_TABLE_STEMS for f in table_files(f"{TABLES}/{s}"))


def report_figures() -> tuple[str, ...]:
    """The figure PNGs (DVC image plots)."""
    return tuple(f"{FIGURES}/{s}.png" for s in REPORT_FIGURE_STEMS)


def report_figure_files() -> tuple[str, ...]:
    """Each figure's SVG and the CSV of the plotted numbers."""
    return tuple(f"{FIGURES}/{s}.{e}" for s in REPORT_FIGURE_STEMS for e in ("svg", "csv"))


def log_file(name: str) -> str:
    return f"{LOGS}/{name}.log"


def benchmark_file(name: str) -> str:
    return f"{BENCHMARKS}/{name}.tsv"


def sample_dir(config: Mapping) -> str:
    return config["sample"]["out_dir"].rstrip("/")


def sample_dump(config: Mapping) -> str:
    """The offline sample's Wikipedia dump fragment (the STAND-IN corpora are built from it)."""
    return f"{sample_dir(config)}/{SAMPLE_DUMP}"


def duc_root(config: Mapping) -> str:
    return config["duc"]["root"].rstrip("/")


def dump_dir(config: Mapping) -> str:
    """The folder of the collect stage's dump parts (``collect.dump.dir``)."""
    return config["collect"]["dump"]["dir"].rstrip("/")


def dump_download(config: Mapping) -> Mapping | None:
    """The dump download settings when the parts are downloaded (``collect.dump.download.mirror`` set), else
    None (the parts are read from ``collect.dump.dir`` as they are, e.g. the offline sample's fragment)."""
    download = config["collect"]["dump"].get("download") or {}
    return download if download.get("mirror") else None


def _dump_index(config: Mapping, template: str) -> str:
    download = config["collect"]["dump"]["download"]
    return f"{dump_dir(config)}/{template.format(wiki=download['wiki'], date=download['date'])}"


def dump_status(config: Mapping) -> str:
    """The downloaded ``dumpstatus.json`` of ``collect.dump.download``'s wiki and date."""
    return _dump_index(config, DUMP_STATUS)


def dump_sha1sums(config: Mapping) -> str:
    """The downloaded ``<wiki>-<date>-sha1sums.txt`` of ``collect.dump.download``'s wiki and date."""
    return _dump_index(config, DUMP_SHA1SUMS)


def dump_file(config: Mapping) -> str:
    """Where a downloaded part goes: ``<collect.dump.dir>/{dumpfile}``."""
    return f"{dump_dir(config)}/{DUMP_FILE}"


def humaneval_studies(config: Mapping) -> list[str]:
    """The human studies ``humaneval.studies`` enables, sorted by name."""
    return sorted(name for name, study in config["humaneval"]["studies"].items() if study["enabled"])


def humaneval_rating_files(studies) -> list[str]:
    """The rating files present now under each study's ratings folder (``.json`` / ``.csv``): the score
    job's input, so a new or changed rating file reruns it."""
    from pathlib import Path

    return sorted(
        str(p)
        for s in studies
        for p in Path(HUMANEVAL_RATINGS.format(study=s)).glob("*")
        if p.suffix in (".json", ".csv")
    )


def humaneval_inputs(config: Mapping, study: str) -> dict:
    """The declared files human study ``study`` samples from (nested: system / year -> path)."""
    cfg = config["humaneval"]["studies"][study]
    if study == "wikiref_table3":
        return {"oracle": ORACLE_FILE.format(split=cfg["split"])}
    if study == "wikiref_table7":
        y = cfg["year"]
        return {
            "summaries": {s: FINETUNE_SUMMARIES.format(setting=s, year=y) for s in cfg["systems"]},
            "duc": DUC_YEAR.format(year=y),
            "duc_stats": DUC_YEAR_STATS.format(year=y),
        }
    if study == "qmdscnnir_table6":
        return {
            "summaries": {s: ABSTRACTIVE_SUMMARIES.format(run=s) for s in cfg["systems"]},
            "duc": {y: DUC_YEAR.format(year=y) for y in cfg["years"]},
            "duc_stats": {y: DUC_YEAR_STATS.format(year=y) for y in cfg["years"]},
        }
    if study == "psg2sum_table3":
        return {"pairs": [PSG2SUM_PART.format(part=p) for p in config["psg2sum"]["dump"]["parts"]]}
    if study == "wcep_ccnews":
        return {"total": [WCEP_TOTAL.format(split=s) for s in SPLITS]}
    raise KeyError(f"no human study {study!r}")


def flat_files(obj) -> list[str]:
    """Every path in a nested value of paths (dicts and lists), in order."""
    if isinstance(obj, Mapping):
        return [p for v in obj.values() for p in flat_files(v)]
    if isinstance(obj, (list, tuple)):
        return [p for v in obj for p in flat_files(v)]
    return [str(obj)]


def humaneval_all_inputs(config: Mapping) -> list[str]:
    """Every file the enabled human studies read (the sample job's inputs, the stage's DVC deps)."""
    return list(dict.fromkeys(f for s in humaneval_studies(config) for f in flat_files(humaneval_inputs(config, s))))


def under(path: str, folder: str) -> bool:
    """``path`` is ``folder`` or inside it (plain string paths, as params give them)."""
    path, folder = path.rstrip("/"), folder.rstrip("/")
    return path == folder or path.startswith(folder + "/")
