"""The oracle stage (journal §IV-C): oracle labels and regression targets for every split.

Labels come from :func:`wikiref.rouge.oracle.greedy_oracle` (greedy ROUGE-2 F1, no sentence cap),
targets from :func:`wikiref.rouge.oracle.sentence_scores` (each sentence's own ROUGE-2 F1). The
stage's one job is :func:`run` (``wikiref oracle``); its tables have the schema
:data:`wikiref.schemas.ORACLE`.

The same labelling reads any source on the common example schema (:data:`wikiref.schemas.EXAMPLE`):
:func:`wikiref.supervised.labels.example_oracle_table` pools the sentences of all of an example's documents in
document order (the oracle chooses among all of them; ``doc_lengths`` keeps where each document starts, for the
input packing) and labels them against the summary sentences joined into one statement. The source
comparison (``wikiref compare oracle``) runs it per source.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from wikiref.schemas import ORACLE
from wikiref.supervised.labels import SPLIT_COLUMNS, oracle_records

log = logging.getLogger(__name__)
STANDIN_COLUMN = "doc_standin"  # the split's per-example STAND-IN flag (collect: the page is a stand-in)


def run(params: Mapping, inputs: Mapping, outputs: Mapping, *, threads: int = 1, batch_rows: int = 20000) -> dict:
    """The oracle job.

    ``params``: the ``oracle`` section; ``inputs``: split name -> data/split/<split>.parquet (the splits
    processed, in this order); ``outputs``: split name -> data/oracle/<split>.parquet (schema
    :data:`wikiref.schemas.ORACLE`, rows sorted by id) and ``metrics`` (per split: examples, mean
    oracle score, mean selected sentences, examples with no positive label). Rows are processed in
    batches of ``batch_rows`` (memory bound) on ``threads`` processes. A split table without the
    columns needed raises :class:`wikiref.schemas.SchemaError`. Returns the metrics (also written)."""
    import statistics
    import time

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import SchemaError, empty, require_columns

    oracle = params["oracle"]
    label_metric, score_metric = oracle["label_metric"], oracle["score_metric"]
    metrics: dict = {"label_metric": label_metric, "score_metric": score_metric, "splits": {}}
    for name, src in inputs.items():
        t0 = time.monotonic()
        names = pq.read_schema(src).names
        require_columns(names, SPLIT_COLUMNS, str(src))
        # STAND-IN provenance travels with the rows (a split without doc_standin holds real documents).
        table = pq.read_table(src, columns=list(SPLIT_COLUMNS) + [c for c in (STANDIN_COLUMN,) if c in names])
        if STANDIN_COLUMN not in names:
            table = table.append_column(STANDIN_COLUMN, pa.array([False] * table.num_rows, pa.bool_()))
        table = table.take(pc.sort_indices(table, sort_keys=[("id", "ascending")]))
        # Batches of rows keep memory bounded at paper scale (256k training examples).
        pieces, scores, n_sel, n_sent = [], [], [], []
        for start in range(0, table.num_rows, batch_rows):
            chunk = table.slice(start, batch_rows)
            docs = chunk.column("doc_sentences").to_pylist()
            records = oracle_records(
                docs,
                chunk.column("statement").to_pylist(),
                label_metric=label_metric,
                score_metric=score_metric,
                threads=threads,
            )
            computed = {
                field.name: pa.array([r[field.name] for r in records], type=field.type)
                for field in ORACLE
                if field.name not in SPLIT_COLUMNS and field.name != "standin"
            }
            computed["standin"] = pa.array(chunk.column(STANDIN_COLUMN).to_pylist(), pa.bool_())
            # The carried columns keep their arrays as read (a list's child field name is part of the bytes).
            piece = pa.Table.from_arrays(
                [chunk.column(f.name) if f.name in SPLIT_COLUMNS else computed[f.name] for f in ORACLE],
                names=ORACLE.names,
            )
            if not piece.schema.equals(ORACLE):
                raise SchemaError(f"{src}: column types {piece.schema} differ from {ORACLE}")
            pieces.append(piece)
            scores += [r["oracle_score"] for r in records]
            n_sel += [len(r["oracle_indices"]) for r in records]
            n_sent += [len(d) for d in docs]
            log.info("%s: %d/%d examples", name, start + len(records), table.num_rows)
        write_parquet(outputs[name], pa.concat_tables(pieces) if pieces else empty(ORACLE))
        dt = time.monotonic() - t0
        n = len(scores)
        metrics["splits"][name] = {
            "examples": n,
            "oracle_score_mean": round(statistics.fmean(scores), 6) if n else 0.0,
            "selected_sentences_mean": round(statistics.fmean(n_sel), 6) if n else 0.0,
            "no_positive_label": sum(1 for k in n_sel if k == 0),
            "doc_sentences_mean": round(statistics.fmean(n_sent), 6) if n else 0.0,
        }
        metrics["splits"][name]["standin_examples"] = int(sum(table.column(STANDIN_COLUMN).to_pylist()))
        log.info("%s: %d examples in %.1fs (%.1f examples/s)", name, n, dt, n / max(dt, 1e-9))
    metrics["standin"] = any(s["standin_examples"] for s in metrics["splits"].values())
    write_json(outputs["metrics"], metrics)
    return metrics


# --------------------------------------------------------------------------- any source (common schema)
