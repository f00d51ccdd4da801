"""The comparison's data: the oracle job over each source's splits, and a cell's training rows.

:func:`oracle` writes ``data/compare/oracle/<source>/<split>.parquet``; :func:`training_data` reads them back
as the train / dev rows of a cell under its budget (equal: a seeded subset of the same size for every source;
natural: every example), cut to ``compare.budget``'s document caps. The extractive and the abstractive cells
train on the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.schemas import SOURCE_NAMES
from wikiref.stages.compare.plan import Cell, CompareError, members
from wikiref.supervised.pretraining import cap_rows

# --------------------------------------------------------------------------- the oracle job


def oracle(params: Mapping, inputs: Mapping, outputs: Mapping, *, source: str, threads: int = 1) -> dict:
    """The oracle of one source's splits. inputs: split -> ``data/sources/<source>/<split>.parquet``;
    outputs: split -> ``data/compare/oracle/<source>/<split>.parquet``, ``metrics`` (JSON: per split
    examples, documents and sentences per example, mean oracle score, selected sentences, STAND-IN
    examples). Returns the metrics."""
    import pyarrow.parquet as pq

    from wikiref.files import write_json, write_parquet
    from wikiref.supervised.labels import example_oracle_table

    if source not in SOURCE_NAMES:
        raise CompareError(f"source {source!r} not in {SOURCE_NAMES}")
    o = params["oracle"]
    metrics: dict[str, Any] = {
        "source": source,
        "label_metric": o["label_metric"],
        "score_metric": o["score_metric"],
        "splits": {},
    }
    for split in layout.SPLITS:
        path = Path(inputs[split])
        if not path.exists():
            raise CompareError(f"{path} missing: run the {source} stage first")
        table, selected = example_oracle_table(
            pq.read_table(path), label_metric=o["label_metric"], score_metric=o["score_metric"], threads=threads
        )
        write_parquet(outputs[split], table)
        n = table.num_rows
        cols = table.select(["oracle_score", "doc_lengths", "doc_sentences", "standin"]).to_pydict() if n else {}

        metrics["splits"][split] = {
            "examples": n,  # (the means are 0 for an empty split)
            "documents_per_example": _mean6([len(x) for x in cols.get("doc_lengths", [])]),
            "sentences_per_example": _mean6([len(x) for x in cols.get("doc_sentences", [])]),
            "oracle_score_mean": _mean6(cols.get("oracle_score", [])),
            "selected_sentences_mean": _mean6(selected),
            "no_positive_label": sum(1 for k in selected if k == 0),
            "standin_examples": int(sum(cols.get("standin", []))),
        }
    metrics["standin"] = any(v["standin_examples"] for v in metrics["splits"].values())
    write_json(outputs["metrics"], metrics)
    return metrics


def _mean6(values) -> float:
    return round(float(np.mean(values)), 6) if len(values) else 0.0


# --------------------------------------------------------------------------- training data


def read_oracle(paths: Sequence[str | Path], where: str) -> tuple[pd.DataFrame, dict]:
    """The usable rows of oracle files (``ORACLE_SOURCE``), concatenated in id order, and their counts."""
    from wikiref.files import read_parquet
    from wikiref.schemas import ORACLE_SOURCE, require_columns
    from wikiref.supervised import pretraining as pretrain

    frames = []
    for path in paths:
        if not Path(path).exists():
            raise CompareError(f"{path} missing: run `wikiref compare oracle` for its source first")
        df = read_parquet(path)
        require_columns(df.columns, ORACLE_SOURCE.names, str(path))
        frames.append(df)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ORACLE_SOURCE.names)
    df, counts = pretrain.validate_oracle_frame(df, where)
    return df.sort_values("id", kind="stable").reset_index(drop=True), counts


def shares(total: int, k: int) -> list[int]:
    """``total`` split into ``k`` near-equal integer shares (the first ones get the remainder)."""
    return [total // k + (1 if i < total % k else 0) for i in range(k)]


def seeded_subset(df: pd.DataFrame, n: int, seed: int, where: str) -> pd.DataFrame:
    """``n`` rows chosen with a seeded permutation, in id order; an error when there are fewer."""
    if n > len(df):
        raise CompareError(f"{where}: {len(df)} usable training examples, the equal budget needs {n}")
    return cap_rows(df, n, seed)


def equal_examples(params: Mapping, sizes: Mapping[str, int]) -> int:
    """N of the equal budget: ``compare.equal.examples`` or, when null, the smallest training split."""
    n = params["compare"]["equal"]["examples"]
    if n is None:
        if not sizes:
            raise CompareError("compare.equal.examples is null but no source size is known")
        n = min(sizes.values())
    if n < 1:
        raise CompareError(f"the equal budget needs at least one example (sizes: {dict(sizes)})")
    return int(n)


def cap_documents(
    df: pd.DataFrame, max_documents: int | None, document_sentences: int | None
) -> tuple[pd.DataFrame, int]:
    """Each example cut to its first ``max_documents`` documents and their first ``document_sentences``
    sentences (labels, scores, lengths and oracle indices with them); returns the frame and the number
    of sentences cut. None = no cap."""
    if max_documents is None and document_sentences is None:
        return df, 0
    df = df.copy()
    cut = 0
    cols: dict[str, list] = {
        k: [] for k in ("doc_sentences", "oracle_labels", "oracle_scores", "doc_lengths", "doc_ids")
    }
    indices = []
    for r in df.itertuples(index=False):
        keep: list[int] = []
        lengths: list[int] = []
        pos = 0
        for d, n in enumerate(int(x) for x in r.doc_lengths):
            if max_documents is None or d < max_documents:
                k = n if document_sentences is None else min(n, document_sentences)
                keep.extend(range(pos, pos + k))
                lengths.append(k)
            pos += n
        cut += len(r.doc_sentences) - len(keep)
        new_pos = {old: new for new, old in enumerate(keep)}
        cols["doc_sentences"].append([r.doc_sentences[i] for i in keep])
        cols["oracle_labels"].append([r.oracle_labels[i] for i in keep])
        cols["oracle_scores"].append([r.oracle_scores[i] for i in keep])
        cols["doc_lengths"].append(lengths)
        cols["doc_ids"].append(list(r.doc_ids)[: len(lengths)])
        indices.append([new_pos[int(i)] for i in r.oracle_indices if int(i) in new_pos])
    for k, v in cols.items():
        df[k] = v
    df["oracle_indices"] = indices
    return df, cut


def training_data(params: Mapping, cell: Cell, inputs: Mapping) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(train rows, dev rows, description) of a pre-training cell under its budget."""
    cmp, seed = params["compare"], params["seed"]
    srcs = members(params, cell)
    train_paths = dict(zip(srcs, inputs["train"]))
    dev_paths = dict(zip(srcs, inputs["dev"]))
    pools: dict[str, pd.DataFrame] = {}
    counts: dict[str, dict] = {}
    for s in srcs:
        pools[s], counts[s] = read_oracle([train_paths[s]], train_paths[s])
        if pools[s].empty:
            raise CompareError(f"{train_paths[s]}: no usable training example for source {s}")
    info: dict[str, Any] = {"sources": srcs, "train_rows": counts}
    if cell.budget == "equal":
        sizes = {s: len(df) for s, df in pools.items()}
        for path in inputs.get("sizes", []):
            other, _ = read_oracle([path], path)
            sizes[Path(path).parent.name] = len(other)
        n = equal_examples(params, sizes)
        parts = [seeded_subset(pools[s], k, seed, f"source {s}") for s, k in zip(srcs, shares(n, len(srcs)))]
        train = pd.concat(parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
        info.update(examples=n, source_sizes=sizes, steps=int(cmp["equal"]["steps"]))
    else:
        train = pd.concat(pools.values(), ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
        info.update(examples=len(train), epochs=int(cmp["natural"]["epochs"]))
    info["examples_by_source"] = {s: int((train["source"] == s).sum()) for s in srcs}
    # Dev for the epoch choice: eval_examples in total (equal shares over the union's sources).
    n_eval = cmp["budget"]["eval_examples"]
    dev_parts = []
    for s, k in zip(srcs, shares(n_eval, len(srcs)) if n_eval is not None else [None] * len(srcs)):
        dev, _ = read_oracle([dev_paths[s]], dev_paths[s])
        dev_parts.append(cap_rows(dev, k, seed))
    dev = pd.concat(dev_parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
    if dev.empty:
        raise CompareError(f"{cell.id}: no usable dev example in {list(dev_paths.values())}")
    b = cmp["budget"]
    train, cut_train = cap_documents(train, b["max_documents"], b["document_sentences"])
    dev, cut_dev = cap_documents(dev, b["max_documents"], b["document_sentences"])
    info.update(
        dev_examples=len(dev),
        sentences_cut={"train": cut_train, "dev": cut_dev},
        standin=bool(train["standin"].any() or dev["standin"].any()),
        standin_examples=int(train["standin"].sum()),
        documents_per_example=round(float(np.mean([len(x) for x in train["doc_lengths"]])), 3),
        sentences_per_example=round(float(np.mean([len(x) for x in train["doc_sentences"]])), 3),
    )
    return train, dev, info
