"""The common example schema shared by every augmentation source (:data:`wikiref.schemas.EXAMPLE`).

One multi-document QFS example = a query (levels), documents (each: id, title, sentences, url, origin,
retrieval score), a summary (sentences), its split and provenance. The builders of every source
(``wikiref.stages.split`` exports WikiRef, ``wikiref.stages.qmdscnn``, ``wikiref.stages.qmdsir``) make rows
with :func:`example` / :func:`document`, check them with :func:`check`, write one file per split with
:func:`write_splits` and describe them with :func:`statistics` (the QmdsCnnIr paper's Table 1 columns).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wikiref.layout import SPLITS
from wikiref.schemas import EXAMPLE, ORIGINS, SchemaError, require_columns

# Word tokens for the statistics: runs of letters/digits, or single other non-space characters.
_WORD = re.compile(r"\w+|[^\w\s]")


class ExampleError(ValueError):
    """An example that breaks the common schema's rules (no document, empty summary, duplicate id...)."""


@dataclass
class Tally:
    """The counts of a source build (``records_read``, ``dropped:<reason>``, ``kept:<split>``, info
    counters) and, per drop reason, the first ``max_locations`` places (file names, ``<file>:<line>``...)."""

    max_locations: int = 20
    counts: Counter = field(default_factory=Counter)
    locations: dict[str, list[str]] = field(default_factory=dict)

    def drop(self, reason: str, where: str = "") -> None:
        self.counts[f"dropped:{reason}"] += 1
        if where:
            kept = self.locations.setdefault(reason, [])
            if len(kept) < self.max_locations:
                kept.append(where)

    def to_json(self) -> dict:
        return {
            "counts": dict(sorted(self.counts.items())),
            "locations": {k: list(v) for k, v in sorted(self.locations.items())},
        }


def n_tokens(text: str) -> int:
    """Word tokens of ``text`` (``\\w+`` runs and punctuation marks), as counted in the statistics."""
    return len(_WORD.findall(text))


def document(
    doc_id: str,
    sentences: Sequence[str],
    *,
    title: str = "",
    url: str = "",
    origin: str = "original",
    score: float | None = None,
) -> dict:
    return {
        "id": str(doc_id),
        "title": title or "",
        "sentences": [str(s) for s in sentences],
        "url": url or "",
        "origin": origin,
        "score": None if score is None else float(score),
    }


def example(
    source: str,
    source_id: str,
    *,
    split: str,
    query: Sequence[str],
    documents: Sequence[Mapping],
    summary: Sequence[str],
    query_origin: str,
    standin: bool,
    input_file: str = "",
    meta: Mapping | None = None,
) -> dict:
    """A row of :data:`wikiref.schemas.EXAMPLE`; its id is ``<source>:<source_id>``."""
    return {
        "id": f"{source}:{source_id}",
        "source": source,
        "split": split,
        "query": [str(q) for q in query],
        "documents": [dict(d) for d in documents],
        "summary": [str(s) for s in summary],
        "source_id": str(source_id),
        "query_origin": query_origin,
        "standin": bool(standin),
        "input_file": input_file or "",
        "meta": json.dumps(dict(meta or {}), sort_keys=True, ensure_ascii=False),
    }


def check(row: Mapping) -> None:
    """Raise :class:`ExampleError` unless ``row`` is a usable example: a known split, a non-empty query,
    at least one document with a sentence, known origins, unique document ids and a non-empty summary."""
    where = f"example {row.get('id')!r}"
    if row.get("split") not in SPLITS:
        raise ExampleError(f"{where}: split {row.get('split')!r} is not one of {SPLITS}")
    if not row.get("query") or not any(str(q).strip() for q in row["query"]):
        raise ExampleError(f"{where}: empty query")
    docs = row.get("documents") or []
    if not docs:
        raise ExampleError(f"{where}: no document")
    ids = [d["id"] for d in docs]
    if len(set(ids)) != len(ids):
        raise ExampleError(f"{where}: duplicate document ids")
    for d in docs:
        if d["origin"] not in ORIGINS:
            raise ExampleError(f"{where}: document {d['id']!r} has origin {d['origin']!r} (not one of {ORIGINS})")
        if not d["sentences"]:
            raise ExampleError(f"{where}: document {d['id']!r} has no sentence")
    if not row.get("summary") or not any(str(s).strip() for s in row["summary"]):
        raise ExampleError(f"{where}: empty summary")


def to_table(rows: Iterable[Mapping]):
    """The rows as an Arrow table with :data:`EXAMPLE`, sorted by id; every row checked, ids unique."""
    import pyarrow as pa

    rows = sorted(rows, key=lambda r: r["id"])
    seen: set[str] = set()
    for r in rows:
        check(r)
        if r["id"] in seen:
            raise ExampleError(f"duplicate example id {r['id']!r}")
        seen.add(r["id"])
    return pa.Table.from_pylist([{f: r[f] for f in EXAMPLE.names} for r in rows], schema=EXAMPLE)


def write_splits(rows: Iterable[Mapping], outputs: Mapping[str, str | Path]) -> dict[str, int]:
    """Write one file per split (``outputs``: split -> path; every split written, empty ones too); returns
    the sizes. Rows of a split without an output are an error (nothing is dropped silently)."""
    import pyarrow.compute as pc

    from wikiref.files import write_parquet

    table = to_table(rows)
    unknown = set(table.column("split").to_pylist()) - set(outputs)
    if unknown:
        raise ExampleError(f"rows of split(s) {sorted(unknown)} have no output file")
    sizes = {}
    for split, path in outputs.items():
        part = table.filter(pc.equal(table.column("split"), split))
        write_parquet(path, part)
        sizes[split] = part.num_rows
    return sizes


def read(path: str | Path):
    """One split file as an Arrow table, checked to have every column of :data:`EXAMPLE`."""
    import pyarrow.parquet as pq

    table = pq.read_table(str(path))
    require_columns(table.column_names, EXAMPLE.names, str(path))
    if table.schema.field("documents").type != EXAMPLE.field("documents").type:
        raise SchemaError(f"{path}: documents column is {table.schema.field('documents').type}, not the common type")
    return table


def statistics(rows_by_split: Mapping[str, Sequence[Mapping]]):
    """Per split: examples, documents per example (all / original / retrieved), mean document, query and
    summary lengths in word tokens (:func:`n_tokens`), summary sentences: the QmdsCnnIr paper's Table 1
    columns plus the summary side. Returns a DataFrame, one row per split in :data:`SPLITS` order."""
    import numpy as np
    import pandas as pd

    def mean(values) -> float:
        return float(np.mean(values)) if len(values) else float("nan")

    out = []
    for split in SPLITS:
        rows = rows_by_split.get(split, [])
        docs = [d for r in rows for d in r["documents"]]
        out.append(
            {
                "Split": split,
                "Examples": len(rows),
                "Documents / example": mean([len(r["documents"]) for r in rows]),
                "Original / example": mean([sum(d["origin"] == "original" for d in r["documents"]) for r in rows]),
                "Retrieved / example": mean([sum(d["origin"] == "retrieved" for d in r["documents"]) for r in rows]),
                "Document tokens": mean([sum(n_tokens(s) for s in d["sentences"]) for d in docs]),
                "Query tokens": mean([sum(n_tokens(q) for q in r["query"]) for r in rows]),
                "Summary sentences": mean([len(r["summary"]) for r in rows]),
                "Summary tokens": mean([sum(n_tokens(s) for s in r["summary"]) for r in rows]),
            }
        )
    return pd.DataFrame(out)


def split_rows(table) -> dict[str, list[dict]]:
    """An EXAMPLE table's rows grouped by split."""
    out: dict[str, list[dict]] = {s: [] for s in SPLITS}
    for r in table.to_pylist():
        out.setdefault(r["split"], []).append(r)
    return out


def drop_counts(stats: Mapping[str, int], prefix: str = "dropped:") -> dict[str, int]:
    """The ``<prefix><reason>`` counters of ``stats`` as {reason: count}, sorted by reason."""
    return {k[len(prefix) :]: int(v) for k, v in sorted(stats.items()) if k.startswith(prefix)}


# The QmdsCnnIr paper's Table 1 (Pasunuru et al., AAAI 2021), per split: examples, documents per example,
# document length and query length (tokens). Printed beside the measured columns of each source's table.
PAPER_TABLE1 = {
    "qmdscnn": {
        "train": (287_113, 6.5, 355, 13.8),
        "dev": (13_368, 6.5, 346, 14.5),
        "test": (11_490, 6.5, 353, 14.2),
    },
    "qmdsir": {
        "train": (82_076, 5.8, 1_291, 6.2),
        "dev": (10_259, 5.4, 1_402, 6.2),
        "test": (10_260, 5.5, 1_379, 6.2),
    },
}
PAPER_COLUMNS = ("Paper examples", "Paper documents / example", "Paper document tokens", "Paper query tokens")


def finish(
    source: str,
    rows: Sequence[Mapping],
    outputs: Mapping,
    *,
    profile: Mapping,
    title: str,
    counts: Mapping,
    notes: str = "",
    extra: Mapping | None = None,
) -> dict:
    """Write a source's outputs and return its metrics: the split files (``outputs["splits"]``: split ->
    path), the statistics table (``outputs["table"]``, a stem: csv/md/tex, with the paper's Table 1 columns
    when the paper has the source) and the metrics JSON (``outputs["metrics"]``: sizes, ``counts`` = every
    counted drop and total of the build, the statistics, then ``extra``). The STAND-IN flag comes from the data (any row
    with ``standin``), not from ``profile.standin``; when set it is in the metrics and the table caption."""
    from wikiref.files import write_json
    from wikiref.tables import STANDIN_NOTE, write_table

    sizes = write_splits(rows, outputs["splits"])
    by_split: dict[str, list[Mapping]] = {s: [] for s in SPLITS}
    for r in rows:
        by_split[r["split"]].append(r)
    stats = statistics(by_split)
    paper = PAPER_TABLE1.get(source)
    if paper:
        for i, col in enumerate(PAPER_COLUMNS):
            stats[col] = [paper[s][i] if s in paper else float("nan") for s in stats["Split"]]
    standin_rows = sum(bool(r["standin"]) for r in rows)
    standin = bool(standin_rows)
    caption_profile = dict(profile, standin=standin)
    write_table(stats, outputs["table"], title=title, profile=caption_profile, notes=notes, floatfmt=".1f")
    metrics = {
        "source": source,
        "standin": standin,
        **({"label": STANDIN_NOTE} if standin else {}),
        "standin_examples": standin_rows,
        "examples": len(rows),
        "sizes": sizes,
        "counts": dict(sorted((str(k), v) for k, v in counts.items())),
        "statistics": {
            r["Split"]: {k: (None if v != v else v) for k, v in r.items() if k != "Split"}
            for r in stats.to_dict("records")
        },
        **(extra or {}),
    }
    write_json(outputs["metrics"], metrics)
    return metrics
