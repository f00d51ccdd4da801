"""`wikiref oracle`: oracle labels and regression targets for every split (journal §IV-C)."""

from __future__ import annotations

import argparse
import logging

from wikiref.config import add_params_arguments, params_from_args

HELP = "greedy oracle labels and per-sentence regression targets"
DESCRIPTION = """In: data/split/{train,dev,test}.parquet (split). Out: data/oracle/<split>.parquet with
columns id, query, doc_sentences, statement, oracle_labels (0/1 per sentence: the greedy oracle
maximising oracle.label_metric, ROUGE-2 F1 in the paper, adding one sentence at a time until no
addition strictly improves it), oracle_scores (each sentence's own oracle.score_metric: the
regression targets), oracle_indices, oracle_score; rows sorted by id. And
results/metrics/oracle.json (per split: examples, mean oracle score, mean selected sentences,
examples with no positive label). ROUGE values equal rouge-score with stemming (wikiref.rouge.fast)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--split-dir", default="data/split", help="folder with train/dev/test.parquet (default: %(default)s)")
    parser.add_argument("--out-dir", default="data/oracle", help="output folder (default: %(default)s)")
    parser.add_argument("--metrics", default="results/metrics/oracle.json", help="metrics JSON (default: %(default)s)")
    parser.add_argument("--splits", nargs="+", default=["train", "dev", "test"], help="splits to process (default: all)")
    parser.add_argument("--threads", type=int, default=1, help="worker processes (default: %(default)s)")
    parser.add_argument("--batch-rows", type=int, default=20000, help="rows per batch (memory bound; default: %(default)s)")


def main(args: argparse.Namespace) -> int:
    import statistics
    import time
    from pathlib import Path

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    from wikiref.stages import oracle
    from wikiref.files import write_json, write_parquet

    log = logging.getLogger("wikiref.stages.oracle")
    params = params_from_args(args, "oracle")["oracle"]
    metrics: dict = {"label_metric": params["label_metric"], "score_metric": params["score_metric"], "splits": {}}
    for name in args.splits:
        t0 = time.monotonic()
        src = Path(args.split_dir) / f"{name}.parquet"
        table = pq.read_table(src, columns=["id", "query", "doc_sentences", "statement"])
        table = table.take(pc.sort_indices(table, sort_keys=[("id", "ascending")]))
        # Batches of rows keep memory bounded at paper scale (256k training examples).
        pieces, scores, n_sel, n_sent = [], [], [], []
        for start in range(0, table.num_rows, args.batch_rows):
            chunk = table.slice(start, args.batch_rows)
            docs = chunk.column("doc_sentences").to_pylist()
            records = oracle.oracle_records(docs, chunk.column("statement").to_pylist(),
                                            label_metric=params["label_metric"], score_metric=params["score_metric"],
                                            threads=args.threads)
            pieces.append(pa.table({
                "id": chunk.column("id"),
                "query": chunk.column("query"),
                "doc_sentences": chunk.column("doc_sentences"),
                "statement": chunk.column("statement"),
                "oracle_labels": pa.array([r["oracle_labels"] for r in records], type=pa.list_(pa.int8())),
                "oracle_scores": pa.array([r["oracle_scores"] for r in records], type=pa.list_(pa.float64())),
                "oracle_indices": pa.array([r["oracle_indices"] for r in records], type=pa.list_(pa.int32())),
                "oracle_score": pa.array([r["oracle_score"] for r in records], type=pa.float64()),
            }))
            scores += [r["oracle_score"] for r in records]
            n_sel += [len(r["oracle_indices"]) for r in records]
            n_sent += [len(d) for d in docs]
            log.info("%s: %d/%d examples", name, start + len(records), table.num_rows)
        out = pa.concat_tables(pieces) if pieces else pa.table(
            {c: pa.array([], type=t) for c, t in oracle._oracle_schema().items()})
        write_parquet(Path(args.out_dir) / f"{name}.parquet", out)
        dt = time.monotonic() - t0
        n = len(scores)
        metrics["splits"][name] = {
            "examples": n,
            "oracle_score_mean": round(statistics.fmean(scores), 6) if n else 0.0,
            "selected_sentences_mean": round(statistics.fmean(n_sel), 6) if n else 0.0,
            "no_positive_label": sum(1 for k in n_sel if k == 0),
            "doc_sentences_mean": round(statistics.fmean(n_sent), 6) if n else 0.0,
        }
        log.info("%s: %d examples in %.1fs (%.1f examples/s)", name, n, dt, n / max(dt, 1e-9))
    write_json(args.metrics, metrics)
    print("oracle: " + ", ".join(f"{k}={v['examples']} (mean {params['label_metric']} {v['oracle_score_mean']:.3f})"
                                 for k, v in metrics["splits"].items()) + f" -> {args.out_dir}")
    return 0
