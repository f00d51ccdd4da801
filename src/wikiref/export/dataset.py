"""A built source (``data/sources/<source>/<split>.parquet``) as a folder ``datasets.load_dataset`` loads.

The folder: ``data/<split>.parquet`` (the split files, copied byte for byte; an empty split is left out,
the ``datasets`` library cannot load an empty Parquet file), ``metrics/<stage metrics>.json`` (when there
is one) and ``README.md``, the dataset card. Everything the card says about the data is counted from the
files: sizes, features, the STAND-IN label (the ``standin`` column) and the inputs' terms that apply; how
it was built comes from what the build left: the stage's metrics JSON, the profile named in its table's
caption, the parameters DVC recorded in ``dvc.lock``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wikiref import layout
from wikiref.export.common import METRICS_DIR, ExportError, card_text, md_table, read_json, write_export
from wikiref.export.sources import COLUMNS, SOURCES, STANDIN_TERMS, SourceInfo

DATA_DIR = "data"  # inside an export: <split>.parquet
SIZE_CATEGORIES = ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M"))
MAX_INPUT_FILES = 10  # the most frequent input_file values listed in a card


@dataclass
class Split:
    """One split file and what the card says about it, counted from its rows."""

    name: str
    path: Path
    rows: int
    nbytes: int  # the table's size in memory (the Hub's dataset_info num_bytes)
    standin: int  # rows with standin true
    documents: float  # mean documents per example
    retrieved: float  # mean retrieved documents per example
    summary_sentences: float
    query_levels: float
    input_files: Counter = field(default_factory=Counter)
    schema: object = None  # the file's pyarrow schema


@dataclass
class Provenance:
    """What the build left beside the data: the metrics JSON, the profile, DVC's recorded parameters."""

    in_dir: Path
    metrics_path: Path | None
    metrics: dict | None
    profile: str | None
    profile_from: str
    dvc_stage: str | None = None
    dvc_params: dict | None = None


# ------------------------------------------------------------------------------------------ reading
def _mean(values) -> float:
    return float(values.to_numpy().mean()) if len(values) else float("nan")


def read_split(name: str, path: Path) -> Split:
    """The split file ``path``, checked to be on the common example schema; :class:`ExportError` when not."""
    import pyarrow.compute as pc

    from wikiref import examples

    try:
        table = examples.read(path)
    except Exception as exc:  # pyarrow's errors, SchemaError: any reason the file cannot be used
        raise ExportError(f"cannot read split file {path}: {exc}") from None
    docs = table.column("documents")
    origins = pc.struct_field(pc.list_flatten(docs), "origin")
    retrieved = pc.sum(pc.equal(origins, "retrieved")).as_py() if table.num_rows else 0
    return Split(
        name=name,
        path=path,
        rows=table.num_rows,
        nbytes=table.nbytes,
        standin=int(pc.sum(pc.fill_null(table.column("standin"), False)).as_py() or 0),
        documents=_mean(pc.list_value_length(docs)),
        retrieved=(retrieved or 0) / table.num_rows if table.num_rows else float("nan"),
        summary_sentences=_mean(pc.list_value_length(table.column("summary"))),
        query_levels=_mean(pc.list_value_length(table.column("query"))),
        input_files=Counter(v or "(none)" for v in table.column("input_file").to_pylist()),
        schema=table.schema,
    )


def read_splits(source: str, in_dir: Path) -> list[Split]:
    """The split files of ``in_dir`` (``<split>.parquet`` for each of :data:`wikiref.layout.SPLITS` there)."""
    if not in_dir.is_dir():
        raise ExportError(
            f"no folder {in_dir}: build the {source} source first (see `wikiref {_stage(source)} --help`)"
        )
    paths = {s: layout.in_folder(in_dir, layout.SOURCE_SPLIT, source=source, split=s) for s in layout.SPLITS}
    found = [read_split(s, p) for s, p in paths.items() if p.is_file()]
    if not found:
        names = ", ".join(p.name for p in paths.values())
        raise ExportError(f"{in_dir} has no split file ({names}): build the {source} source first")
    return found


def _stage(source: str) -> str:
    return SOURCES[source].stage if source in SOURCES else source


def table_profile(stem: Path) -> str | None:
    """The profile named in the caption of a table's Markdown file (``_profile: <name> ..._``), if any."""
    md = stem.with_name(stem.name + ".md")
    if not md.is_file():
        return None
    m = re.search(r"^_profile: ([\w.-]+)", md.read_text(encoding="utf-8", errors="replace"), flags=re.M)
    return m.group(1) if m else None


def dvc_params(lock: Path, in_dir: Path) -> tuple[str, dict] | None:
    """(stage, its recorded params) of the ``dvc.lock`` stage whose outputs include ``in_dir``, if any."""
    import yaml

    if not lock.is_file():
        return None
    try:
        stages = (yaml.safe_load(lock.read_text(encoding="utf-8")) or {}).get("stages") or {}
    except yaml.YAMLError:
        return None
    base = lock.resolve().parent
    target = in_dir.resolve()
    for name, stage in stages.items():
        outs = {(base / str(o.get("path", ""))).resolve() for o in stage.get("outs") or () if isinstance(o, dict)}
        if target in outs or any(o in target.parents for o in outs):
            params = {k: v for f in (stage.get("params") or {}).values() if isinstance(f, dict) for k, v in f.items()}
            return str(name), params
    return None


def provenance(source: str, in_dir: Path, metrics: Path | None, table: Path | None, lock: Path | None) -> Provenance:
    """What the build left: ``metrics`` / ``table`` given explicitly must exist; the defaults may be missing."""
    info = SOURCES.get(source)
    if table is not None and not table.with_name(table.name + ".md").is_file():
        raise ExportError(f"table {table}.md does not exist (give the table's stem, without .md)")
    if metrics is None and info is not None and Path(info.metrics).is_file():
        metrics = Path(info.metrics)
    if table is None and info is not None:
        table = Path(info.table)
    metrics_obj = read_json(metrics, "metrics file") if metrics is not None else None
    profile = table_profile(table) if table is not None else None
    where = f"the caption of {table}.md" if profile else "not recorded"
    if profile is None and metrics_obj and isinstance(metrics_obj.get("profile"), str):
        profile, where = metrics_obj["profile"], f"{metrics}"
    recorded = dvc_params(lock, in_dir) if lock is not None else None
    prov = Provenance(in_dir, metrics, metrics_obj, profile, where)
    if recorded:
        prov.dvc_stage, prov.dvc_params = recorded
        if prov.profile is None and isinstance(prov.dvc_params.get("profile"), Mapping):
            prov.profile, prov.profile_from = prov.dvc_params["profile"].get("name"), f"{lock} (stage {recorded[0]})"
    return prov


# ------------------------------------------------------------------------------------------ the card
def type_name(t) -> str:
    """A pyarrow type as the card's schema table writes it: ``list<string>``, ``struct<id: string, ...>``."""
    import pyarrow as pa

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return f"list<{type_name(t.value_type)}>"
    if pa.types.is_struct(t):
        return "struct<" + ", ".join(f"{f.name}: {type_name(f.type)}" for f in t) + ">"
    return dtype(t)


def feature(t):
    """A pyarrow type as the Hub's YAML ``dataset_info.features`` entry (what ``datasets`` writes itself)."""
    import pyarrow as pa

    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"list": _inner(t.value_type)}
    if pa.types.is_struct(t):
        return {"struct": [{"name": f.name, **feature(f.type)} for f in t]}
    return {"dtype": dtype(t)}


def dtype(t) -> str:
    """A primitive pyarrow type's name as ``datasets.Value`` spells it (``double`` -> ``float64``)."""
    name = str(t)
    return {"double": "float64", "float": "float32", "halffloat": "float16"}.get(name, name)


def _inner(t):
    import pyarrow as pa

    if pa.types.is_struct(t):
        return [{"name": f.name, **feature(f.type)} for f in t]
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return {"list": _inner(t.value_type)}
    return dtype(t)


def size_category(n: int) -> str:
    return next((name for limit, name in SIZE_CATEGORIES if n < limit), "n>1M")


def licence_fields(info: SourceInfo | None, real: int) -> dict:
    """The header's licence: cc-by-sa-4.0 when every input is Wikipedia text (the source's own, or STAND-IN
    inputs built from the Wikipedia sample), else ``other`` (the body says which terms apply)."""
    if real == 0 or (info is not None and info.wikipedia_only):
        return {"license": "cc-by-sa-4.0"}
    return {"license": "other", "license_name": "mixed-terms"}  # the card's "Licences of the inputs" says which


def header(source: str, info: SourceInfo | None, splits: list[Split]) -> dict:
    total = sum(s.rows for s in splits)
    standin = sum(s.standin for s in splits)
    title = info.title if info else source
    exported = [s for s in splits if s.rows]
    tags = ["query-focused-summarization", "multi-document-summarization", "wikiref", source]
    out = {
        "pretty_name": f"{title} (STAND-IN)" if standin else title,
        "language": ["en"],
        **licence_fields(info, total - standin),
        "task_categories": ["summarization"],
        "tags": tags + (["stand-in-data"] if standin else []),
        "size_categories": [size_category(total)],
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": s.name, "path": data_file(s)} for s in exported],
            }
        ],
        "dataset_info": {
            "features": [{"name": f.name, **feature(f.type)} for f in exported[0].schema],
            "splits": [{"name": s.name, "num_bytes": s.nbytes, "num_examples": s.rows} for s in exported],
            "dataset_size": sum(s.nbytes for s in exported),
        },
    }
    return out


def standin_banner(splits: list[Split]) -> str:
    """The STAND-IN label, from the ``standin`` column: empty when no row is a stand-in."""
    from wikiref.tables import STANDIN_NOTE

    total, standin = sum(s.rows for s in splits), sum(s.standin for s in splits)
    if not standin:
        return ""
    which = "Every example" if standin == total else f"{standin} of the {total} examples"
    return (
        f"> **{STANDIN_NOTE}.** {which} (the rows whose `standin` column is true) came from STAND-IN inputs "
        "built offline from a Wikipedia sample, not from the corpus the paper used: use them to try code, not to "
        "report results.\n"
    )


def sizes_section(splits: list[Split], skipped: list[str]) -> str:
    rows = [(s.name, s.rows, s.standin, s.documents, s.retrieved, s.query_levels, s.summary_sentences) for s in splits]
    cols = ("split", "examples", "stand-in examples", "documents / example", "retrieved / example")
    text = "## Sizes\n\nCounted from the files:\n\n"
    text += md_table((*cols, "query levels / example", "summary sentences / example"), rows) + "\n"
    if skipped:
        text += f"\nNot exported: {', '.join(skipped)} (no split file, or an empty one).\n"
    return text


def schema_section(split: Split) -> str:
    rows = [(f"`{f.name}`", f"`{type_name(f.type)}`", COLUMNS.get(f.name, "")) for f in split.schema]
    return (
        "## Schema\n\nOne query-focused multi-document summarization example per row, on the package's common "
        "example schema (`wikiref.schemas.EXAMPLE`):\n\n" + md_table(("column", "type", "meaning"), rows) + "\n"
    )


def loading_section() -> str:
    return (
        "## Loading\n\n```python\nfrom datasets import load_dataset\n\n"
        'ds = load_dataset("path/to/this/folder")  # or the Hub repository it is uploaded to\n'
        'print(ds["train"][0]["query"], ds["train"][0]["summary"])\n```\n\n'
        "`documents` is a list of structs; `meta` is a JSON string (`json.loads`).\n"
    )


def build_section(source: str, prov: Provenance, splits: list[Split], metrics_copy: str | None) -> str:
    from wikiref.export.common import metrics_section

    stage = _stage(source)
    lines = [
        "## How it was built\n",
        f"- Stage: `{stage}` of the wikiref workflow (`wikiref {stage} --help` says what it reads and writes; "
        f"Snakemake and DVC run it under the same name), which writes `{layout.SOURCE_DIR.format(source=source)}/`; "
        f"exported from `{prov.in_dir}/`.",
        f"- Profile: `{prov.profile}` (from {prov.profile_from})." if prov.profile else "- Profile: not recorded.",
    ]
    if prov.metrics is not None:
        lines.append(f"- The build's metrics: `{prov.metrics_path}`, copied as [{metrics_copy}]({metrics_copy}).")
        recorded = prov.metrics.get("sizes")
        counted = {s.name: s.rows for s in splits}
        if isinstance(recorded, Mapping) and {k: v for k, v in recorded.items() if k in counted} != counted:
            lines.append(
                f"- Note: that metrics file records the sizes {dict(recorded)}, the files hold {counted}: "
                "it may come from another build."
            )
    else:
        lines.append("- The build's metrics: not found (no metrics file was given or found at its default path).")
    text = "\n".join(lines) + "\n"
    if prov.dvc_params:
        import yaml

        params = yaml.safe_dump(prov.dvc_params, sort_keys=True, allow_unicode=True, width=100)
        text += f"\nThe parameters DVC recorded for stage `{prov.dvc_stage}` (`dvc.lock`):\n\n```yaml\n{params}```\n"
    files = sum((s.input_files for s in splits), Counter())
    top = files.most_common(MAX_INPUT_FILES)
    more = f" (the {MAX_INPUT_FILES} most frequent of {len(files)})" if len(files) > len(top) else ""
    top = [(f"`{name}`", n) for name, n in top]
    text += f"\nInput files (the `input_file` column){more}:\n\n" + md_table(("input file", "examples"), top) + "\n"
    if prov.metrics is not None and metrics_copy:
        text += statistics_table(prov.metrics.get("statistics"))
        rest = {k: v for k, v in prov.metrics.items() if k != "statistics"}
        text += "\n" + metrics_section("The build's metrics", rest, metrics_copy)
    return text


def statistics_table(stats) -> str:
    """The per-split statistics a build recorded (``statistics``: split -> column -> value) as one table."""
    if not isinstance(stats, Mapping) or not all(isinstance(v, Mapping) for v in stats.values()) or not stats:
        return ""
    columns = list(dict.fromkeys(k for v in stats.values() for k in v))
    rows = [(split, *(v.get(c) for c in columns)) for split, v in stats.items()]
    return "\nStatistics the build recorded (tokens: word tokens):\n\n" + md_table(("split", *columns), rows) + "\n"


def licence_section(info: SourceInfo | None, splits: list[Split]) -> str:
    standin = sum(s.standin for s in splits)
    real = sum(s.rows for s in splits) - standin
    lines = ["## Licences of the inputs\n"]
    if info is None:
        lines.append("- The inputs of this source are not described here: check the terms of each input.")
    elif real:
        lines += [f"- {t}" for t in info.terms]
    if standin:
        lines.append(f"- {STANDIN_TERMS.format(n=standin)}")
    lines.append(
        "- The code that built it: the wikiref package (MIT). These terms are a summary, not legal advice: "
        "check the terms of every input before you redistribute the data."
    )
    return "\n".join(lines) + "\n"


def data_file(split: Split) -> str:
    """The split's file in the export."""
    return f"{DATA_DIR}/{split.name}.parquet"


def card(source: str, splits: list[Split], skipped: list[str], prov: Provenance, out: Path, metrics_copy) -> str:
    info = SOURCES.get(source)
    exported = [s for s in splits if s.rows]
    title = f"{info.title if info else source}: query-focused summarization examples"
    standin = any(s.standin for s in splits)
    sections = [
        standin_banner(splits),
        (info.about + f"\n\nFrom {info.paper}; built by the wikiref reproduction package.\n") if info else "",
        loading_section(),
        sizes_section(splits, skipped),
        schema_section(exported[0]),
        build_section(source, prov, splits, metrics_copy),
        licence_section(info, splits),
    ]
    return card_text(header(source, info, splits), title, standin, sections, out, [data_file(s) for s in exported])


# ------------------------------------------------------------------------------------------ the export
def export_dataset(
    source: str,
    out_dir: str | Path,
    *,
    in_dir: str | Path | None = None,
    metrics: str | Path | None = None,
    table: str | Path | None = None,
    dvc_lock: str | Path | None = "dvc.lock",
) -> dict:
    """Export ``source``'s split files (``in_dir``, default ``data/sources/<source>``) to ``out_dir``.

    ``metrics`` / ``table`` (a table stem): the build's metrics JSON and statistics table, by default the
    stage's (:data:`wikiref.export.sources.SOURCES`; a default that is missing is noted in the card, a file
    given here that is missing is an error); ``dvc_lock``: DVC's lock file (used when it has a stage that
    wrote ``in_dir``). Returns a summary: ``source``, ``out``, ``sizes`` (exported splits), ``standin``
    (stand-in rows), ``profile``."""
    in_dir = Path(in_dir if in_dir is not None else layout.SOURCE_DIR.format(source=source))
    out_dir = Path(out_dir)
    splits = read_splits(source, in_dir)
    exported = [s for s in splits if s.rows]
    if not exported:
        raise ExportError(f"every split file in {in_dir} is empty: nothing to export")
    skipped = [s for s in layout.SPLITS if s not in {x.name for x in exported}]
    prov = provenance(
        source,
        in_dir,
        Path(metrics) if metrics is not None else None,
        Path(table) if table is not None else None,
        Path(dvc_lock) if dvc_lock else None,
    )
    metrics_copy = f"{METRICS_DIR}/{prov.metrics_path.name}" if prov.metrics_path is not None else None
    files = {data_file(s): s.path for s in exported} | ({metrics_copy: prov.metrics_path} if metrics_copy else {})
    write_export(out_dir, (in_dir,), files, lambda tmp: card(source, splits, skipped, prov, tmp, metrics_copy))
    return {
        "source": source,
        "out": str(out_dir),
        "sizes": {s.name: s.rows for s in exported},
        "standin": sum(s.standin for s in splits),
        "profile": prov.profile,
    }
