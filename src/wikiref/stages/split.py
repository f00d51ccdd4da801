"""The split stage: train/dev/test without document overlap (journal §II-A-2, last paragraph); Tables I-II.

Examples are grouped so that any two examples citing the same document - the same normalised URL
(``doc_key``) or the same body text (``doc_hash``) - fall in one group (union-find over both keys).
Groups are shuffled with the seed and dealt to test, then dev, each until its size is reached:
a group goes to a split only if it fits entirely, so the sizes are exact whenever enough small
groups exist; everything else is train. Sizes (``split.dev``/``split.test``) are counts (>= 1,
the paper's 12,000 each) or fractions of the curated examples (< 1, for the sample).

Tables I and II of the journal paper are computed from the split dataset: Table I gives, per split,
the number of examples, of distinct Wikipedia articles, and the mean of the six statistics; Table II
the percentiles (5, 20, 40, 50, 60, 80, 95) of the six statistics over the whole dataset. Rows and
columns mirror the paper; the statistics are those computed by curation (:mod:`wikiref.stages.curate`).

The split files are also written on the common example schema (:data:`wikiref.schemas.EXAMPLE`, one
document per example: the cited page), so later steps read every augmentation source in one format
(:func:`to_examples`).

The stage's one job is :func:`run` (``wikiref split``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from wikiref.layout import SPLITS
from wikiref.schemas import CURATE_STATISTICS

TABLE1_TITLE = "Table I: Statistics of training set, development set and test set of the WikiRef dataset"
TABLE2_TITLE = "Table II: Percentiles for different aspects of the whole WikiRef dataset"
PERCENTILES = (5, 20, 40, 50, 60, 80, 95)
SPLIT_HEADERS = {"train": "Train", "dev": "Dev", "test": "Test"}
# Table I/II row labels of the curation statistics.
STATISTIC_LABELS = {
    "doc_tokens": "Document Tokens",
    "doc_sents": "Document Sents",
    "summary_tokens": "Summary Tokens",
    "summary_sents": "Summary Sents",
    "query_depth": "Query Depth",
    "query_tokens": "Query Tokens",
}


class SplitError(ValueError):
    """Bad input to the split (sizes that do not fit the curated examples)."""


def resolve_size(value: float, total: int) -> int:
    """A count (>= 1) or a fraction of ``total`` (< 1, rounded to the nearest integer)."""
    if value <= 0:
        raise SplitError(f"split size must be positive, got {value}")
    return int(value) if value >= 1 else int(round(value * total))


def document_groups(doc_keys: Sequence[str], doc_hashes: Sequence[str]) -> list[int]:
    """Group id per example: connected components of 'shares a doc_key or a doc_hash'. Empty keys
    never link examples. Group ids are numbered in order of first appearance."""
    n = len(doc_keys)
    parent = list(range(n))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for keys in (doc_keys, doc_hashes):
        first: dict[str, int] = {}
        for i, k in enumerate(keys):
            if not k:
                continue
            j = first.setdefault(k, i)
            if j != i:
                ri, rj = find(i), find(j)
                if ri != rj:
                    parent[max(ri, rj)] = min(ri, rj)
    ids: dict[int, int] = {}
    return [ids.setdefault(find(i), len(ids)) for i in range(n)]


def assign_splits(
    ids: Sequence[str],
    doc_keys: Sequence[str],
    doc_hashes: Sequence[str],
    *,
    dev: float,
    test: float,
    seed: int,
) -> list[str]:
    """Split name for each example. Deterministic for a given seed and set of examples, whatever
    their order (groups are ordered by their smallest example id before shuffling)."""
    n = len(ids)
    n_dev, n_test = resolve_size(dev, n), resolve_size(test, n)
    if n_dev + n_test > n:
        raise SplitError(f"dev ({n_dev}) + test ({n_test}) exceed the {n} curated examples")
    groups = document_groups(doc_keys, doc_hashes)
    members: dict[int, list[int]] = {}
    for i, g in enumerate(groups):
        members.setdefault(g, []).append(i)
    ordered = sorted(members.values(), key=lambda m: min(str(ids[i]) for i in m))
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(ordered))
    out = ["train"] * n
    targets = {"test": n_test, "dev": n_dev}
    filled = {"test": 0, "dev": 0}
    for gi in order:
        m = ordered[gi]
        for name in ("test", "dev"):
            if filled[name] + len(m) <= targets[name]:
                filled[name] += len(m)
                for i in m:
                    out[i] = name
                break
        if filled["test"] == n_test and filled["dev"] == n_dev:
            break
    return out


def overlap_report(assignment: Sequence[str], doc_keys: Sequence[str], doc_hashes: Sequence[str]) -> dict:
    """Number of document keys / hashes found in more than one split (must be 0)."""
    out = {}
    for name, keys in (("doc_key", doc_keys), ("doc_hash", doc_hashes)):
        where: dict[str, set] = {}
        for s, k in zip(assignment, keys):
            if k:
                where.setdefault(k, set()).add(s)
        out[f"{name}_in_several_splits"] = sum(1 for v in where.values() if len(v) > 1)
    return out


def split_sizes(assignment: Sequence[str]) -> Mapping[str, int]:
    return {s: sum(1 for a in assignment if a == s) for s in SPLITS}


# --------------------------------------------------------------------------------------------
# Tables I and II
# --------------------------------------------------------------------------------------------
def table1(splits: Mapping):
    """Rows: Total Examples, Wiki Articles, then the mean of each statistic; one column per split
    (``splits``: split name -> DataFrame with ``article`` and the statistics)."""
    import pandas as pd

    rows: list[list] = [["Total Examples"], ["Wiki Articles"]] + [[STATISTIC_LABELS[s]] for s in CURATE_STATISTICS]
    for name in SPLIT_HEADERS:
        df = splits[name]
        rows[0].append(int(len(df)))
        rows[1].append(int(df["article"].nunique()) if len(df) else 0)
        for k, s in enumerate(CURATE_STATISTICS):
            rows[2 + k].append(round(float(df[s].mean()), 1) if len(df) else float("nan"))
    # object dtype keeps the counts integers next to the one-decimal means
    return pd.DataFrame(rows, columns=["Statistic", *SPLIT_HEADERS.values()], dtype=object)


def table2(all_examples):
    """Rows: the six statistics; columns: percentiles (numpy linear interpolation)."""
    import pandas as pd

    rows = []
    for s in CURATE_STATISTICS:
        values = all_examples[s].to_numpy(dtype=float)
        pct = np.percentile(values, PERCENTILES) if len(values) else [float("nan")] * len(PERCENTILES)
        rows.append([STATISTIC_LABELS[s], *(round(float(v), 1) for v in pct)])
    return pd.DataFrame(rows, columns=["Statistic", *(str(p) for p in PERCENTILES)])


# The curated columns the common-schema export reads.
EXPORT_COLUMNS = ("id", "query", "doc_key", "doc_sentences", "doc_title", "url", "summary_sentences")


def to_examples(rows: Sequence[Mapping], split: str) -> list[dict]:
    """Curated WikiRef rows -> common examples: query = the query levels (article title, sections...),
    one ``original`` document (the cited page: its sentences, title, URL; id = its normalised URL),
    summary = the statement's sentences; provenance = the raw id, the dump part, STAND-IN page flag."""
    from wikiref import examples

    out = []
    for r in rows:
        doc = examples.document(r["doc_key"], r["doc_sentences"], title=r["doc_title"], url=r["url"])
        meta = {
            k: r.get(k)
            for k in ("article", "citation_type", "page_id", "statement_index", "access_date", "fetch_source")
        }
        out.append(
            examples.example(
                "wikiref",
                r["id"],
                split=split,
                query=r["query"],
                documents=[doc],
                summary=r["summary_sentences"],
                query_origin="wikipedia_headings",
                standin=bool(r.get("doc_standin")),
                input_file=str(r.get("part") or ""),
                meta=meta,
            )
        )
    return out


# --------------------------------------------------------------------------------------------
# the job
# --------------------------------------------------------------------------------------------
def run(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The split job.

    ``params``: ``profile``, ``seed`` and ``split``; ``inputs["curated"]``: data/curated/examples.parquet;
    ``outputs``: ``train`` / ``dev`` / ``test`` (the curated columns, rows sorted by id), ``table1`` /
    ``table2`` (table stems: + .csv / .md / .tex), ``metrics`` and, optionally, ``sources`` (split ->
    path: the same examples on the common example schema, :func:`to_examples`). Raises :class:`SplitError` when the
    sizes do not fit and :class:`wikiref.schemas.SchemaError` when columns are missing. Returns the
    metrics (also written)."""
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import require_columns
    from wikiref.tables import standin_flag, write_table

    curated = str(inputs["curated"])
    table = pq.read_table(curated)
    has_flag = "doc_standin" in table.column_names  # collect's per-page STAND-IN flag
    needed = ("id", "article", "doc_key", "doc_hash", *CURATE_STATISTICS)
    require_columns(table.column_names, needed + (EXPORT_COLUMNS if outputs.get("sources") else ()), curated)
    ids = table.column("id").to_pylist()
    keys = table.column("doc_key").to_pylist()
    hashes = table.column("doc_hash").to_pylist()
    assignment = assign_splits(
        ids, keys, hashes, dev=params["split"]["dev"], test=params["split"]["test"], seed=params["seed"]
    )
    overlap = overlap_report(assignment, keys, hashes)
    if any(overlap.values()):
        raise RuntimeError(f"document overlap between splits: {overlap}")  # cannot happen; guards the code
    labels = pa.array(assignment)
    frames = {}
    for name in SPLITS:
        part = table.filter(pc.equal(labels, name))
        part = part.take(pc.sort_indices(part, sort_keys=[("id", "ascending")]))
        write_parquet(outputs[name], part)
        if outputs.get("sources"):
            from wikiref import examples

            exported = examples.to_table(to_examples(part.to_pylist(), name))
            write_parquet(outputs["sources"][name], exported)
        frames[name] = part.select(["article", *CURATE_STATISTICS]).to_pandas()
    sizes = split_sizes(assignment)
    groups = document_groups(keys, hashes)

    standin_examples = sum(bool(x) for x in table.column("doc_standin").to_pylist()) if has_flag else 0
    standin = standin_flag(params["profile"], standin_examples > 0, "split")
    write_table(
        table1(frames),
        outputs["table1"],
        title=TABLE1_TITLE,
        profile=params["profile"],
        floatfmt=".1f",
        standin=standin,
    )
    write_table(
        table2(pd.concat(frames.values(), ignore_index=True)),
        outputs["table2"],
        title=TABLE2_TITLE,
        profile=params["profile"],
        floatfmt=".1f",
        standin=standin,
    )
    metrics = {
        "examples": len(ids),
        "sizes": sizes,
        "document_groups": len(set(groups)),
        "largest_group": max(Counter(groups).values(), default=0),
        **overlap,
        "seed": params["seed"],
        "standin": standin,
        "standin_examples": standin_examples,
    }
    write_json(outputs["metrics"], metrics)
    return metrics
