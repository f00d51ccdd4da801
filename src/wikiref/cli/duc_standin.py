"""`wikiref duc-standin`: the STAND-IN DUC-format benchmark of the offline sample."""

from __future__ import annotations

import argparse
import logging

from wikiref.config import add_params_arguments, params_from_args

HELP = "build the STAND-IN DUC-format benchmark (NIST layout, 3 pseudo-years) from data/raw"
DESCRIPTION = """In: data/raw/<part>.parquet (collect: id, article, query, statement, url, doc_title, doc_text).
Out: --out (duc.root, e.g. resources/duc-standin/): per pseudo-year (sample.duc.years)
<year>/duc<year>_topics.sgml, <year>/duc<year>_docs/<topic>/<DOCNO> (TREC SGML) and
<year>/models/<topic>.M.250.A.<X>, plus NOTICE.txt and MANIFEST.json (file hashes, clusters).

A cluster is a Wikipedia article with >= 2 distinct cited documents (the most-citing articles first);
its documents are up to sample.duc.docs_per_cluster of them, its references the article's statements
citing them (real Wikipedia text), dealt into up to sample.duc.models_per_cluster references of at most
duc.summary_words words; sample.duc.clusters_per_year clusters per pseudo-year, assigned by a shuffle
seeded with `seed`. Everything is labelled STAND-IN: it is NOT NIST DUC data."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--raw", nargs="+", required=True, metavar="PARQUET", help="raw example files (collect)")
    parser.add_argument("--out", required=True, help="output folder (replaced atomically)")


def main(args: argparse.Namespace) -> int:
    import os
    import shutil
    import tempfile
    from pathlib import Path

    import pandas as pd

    from wikiref.stages.duc import standin as ds

    log = logging.getLogger("wikiref.duc_standin")
    p = params_from_args(args, "seed", "sample", "duc")
    cfg = p["sample"]["duc"]
    years = list(cfg["years"])
    cols = ["id", "article", "query", "statement", "url", "doc_title", "doc_text"]
    frames = []
    for path in args.raw:
        df = pd.read_parquet(path)
        missing = [c for c in cols if c not in df.columns]
        if missing:
            raise SystemExit(f"wikiref duc-standin: {path} lacks columns {missing} (expected the collect output)")
        frames.append(df[cols])
    rows = pd.concat(frames, ignore_index=True).to_dict("records") if frames else []
    clusters = ds.clusters_from_examples(rows, docs_per_cluster=cfg["docs_per_cluster"])
    need = len(years) * cfg["clusters_per_year"]
    log.info("%d examples, %d candidate clusters (articles with >= 2 distinct cited documents), %d needed",
             len(rows), len(clusters), need)
    if len(clusters) < len(years):
        raise SystemExit(f"wikiref duc-standin: only {len(clusters)} articles with >= 2 distinct cited documents; "
                         f"need at least one per pseudo-year ({len(years)})")
    if len(clusters) < need:
        log.warning("only %d clusters available for %d requested; the pseudo-years get fewer topics",
                    len(clusters), need)
    assignment = ds.plan(clusters, years, cfg["clusters_per_year"], p["seed"])
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        manifest = ds.write_standin(tmp, assignment, models_per_cluster=cfg["models_per_cluster"],
                                    summary_words=p["duc"]["summary_words"], seed=p["seed"],
                                    source=[os.path.basename(x) for x in args.raw])
        manifest_counts = {y: len(v["topics"]) for y, v in manifest["years"].items()}
        if out.exists():
            old = out.with_name(f".{out.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(out, old)
            os.replace(tmp, out)
            shutil.rmtree(old)
        else:
            os.replace(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    print(f"duc-standin: STAND-IN topics per pseudo-year {manifest_counts} -> {out}")
    return 0
