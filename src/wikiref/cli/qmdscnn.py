"""`wikiref qmdscnn standin|articles|build`: QmdsCnn, CNN/DailyMail as query-focused multi-document data."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_param_jobs,
    add_source_outputs,
    run_job,
    source_outputs,
    standin_label,
)

HELP = "QmdsCnn (Pasunuru et al. 2021, §3.1): CNN/DailyMail stories -> common examples, BM25 retrieved chunks"
DESCRIPTION = f"""Three jobs (standin only when qmdscnn.standin is auto or true):

standin: the sample's Wikipedia dump -> a STAND-IN corpus in the CNN/DailyMail layout under
    {layout.QMDSCNN_STANDIN}: <sha1(url)>.story files (body paragraphs of an article, then @highlight
    lines = the first sentences of its lead), all_train.txt / all_val.txt / all_test.txt (Wayback-style
    URLs on a reserved host), {layout.QMDSCNN_STANDIN_ARCHIVE} (STAND-IN pages with the titles, for
    most stories), NOTICE.txt, MANIFEST.json. Labelled STAND-IN everywhere: NOT CNN/DailyMail.

articles: <stories>/*.story + the URL split lists (qmdscnn.split_lists; sha1(url) = story file) ->
    {layout.QMDSCNN_SHARD} + {layout.QMDSCNN_SHARD_STATS} for one shard (stories dealt by sha1 over
    qmdscnn.shards). Per kept story: split, title (the query: the <title> of its archived page through
    qmdscnn.titles.backend and the collect.fetch cache, else derived from the URL path; which one is
    recorded), chunks of 1-4 consecutive paragraphs (sizes seeded per story, qmdscnn.chunk_paragraphs)
    split into sentences with the `text` spaCy pipeline, the @highlight lines (the summary). Malformed,
    empty, non-UTF-8, unlisted or missing stories are counted and skipped, with file names.

build: every shard -> BM25 (bm25s, Robertson) over every chunk of the corpus; per article the
    qmdscnn.retrieved best chunks of OTHER articles for its title are appended as retrieved documents ->
    {layout.SOURCE_SPLIT.format(source="qmdscnn", split="<split>")} (the common example schema),
    {layout.QMDSCNN_TABLE}.{{csv,md,tex}} (Table 1 statistics beside the paper's) and
    {layout.QMDSCNN_METRICS} (sizes, every counted drop, index size and times)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    standin, articles, build = add_param_jobs(parser, "qmdscnn", JOBS).values()
    standin.add_argument("--dump", required=True, help="the sample's Wikipedia dump (sample.out_dir/dump/...)")
    add_default(standin, "--out", layout.QMDSCNN_STANDIN, "output folder, replaced as a whole")

    articles.add_argument("--shard", type=int, required=True, help="this job's shard (0 .. qmdscnn.shards - 1)")
    articles.add_argument("--stories", help="the corpus folder (default: the one qmdscnn.standin selects)")
    articles.add_argument("--warc", nargs="*", help="archives for the titles (default: qmdscnn.titles.warc_paths)")
    articles.add_argument("--out", help=f"articles parquet (default: {layout.QMDSCNN_SHARD})")
    articles.add_argument("--stats", help=f"stats JSON (default: {layout.QMDSCNN_SHARD_STATS})")

    add_files(build, "--articles", "PARQUET", f"every shard's articles ({layout.QMDSCNN_SHARD})", required=True)
    add_files(build, "--stats", "JSON", f"every shard's stats ({layout.QMDSCNN_SHARD_STATS})", required=True)
    add_source_outputs(build, "qmdscnn", layout.QMDSCNN_TABLE, layout.QMDSCNN_METRICS)


def _standin(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdscnn import stage

    m = stage.standin(params, {"dump": args.dump}, {"dir": args.out})
    print(
        f"qmdscnn standin: {m['stories']} STAND-IN stories ({m['split_lists']}), "
        f"{m['archived_pages']} archived pages -> {args.out}"
    )


def _articles(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdscnn import stage
    from wikiref.stages.qmdscnn.corpus import resolve

    corpus = resolve(params) if args.stories is None else None
    inputs = {"stories": args.stories or corpus.stories_dir}
    if args.warc is not None or corpus is not None:
        inputs["warc_paths"] = [w for w in args.warc if w] if args.warc is not None else list(corpus.warc_paths)
    out = args.out or layout.QMDSCNN_SHARD.format(shard=args.shard)
    stats_path = args.stats or layout.QMDSCNN_SHARD_STATS.format(shard=args.shard)
    s = stage.articles(params, inputs, {"articles": out, "stats": stats_path}, shard=args.shard)
    dropped = {k.split(":", 1)[1]: v for k, v in s["counts"].items() if k.startswith("dropped:")}
    print(
        f"qmdscnn articles: shard {args.shard}: {s['counts'].get('kept', 0)} stories kept{standin_label(s)}, "
        f"dropped {dropped} -> {out}"
    )


def _build(args: argparse.Namespace, params: dict) -> None:
    from wikiref.stages.qmdscnn import stage

    m = stage.build(params, {"articles": args.articles, "stats": args.stats}, source_outputs(args, "qmdscnn"))
    print(
        f"qmdscnn build: {m['sizes']} examples{standin_label(m)}, {m['chunks']} chunks indexed"
        f" -> {args.out_dir}, {args.table}.md"
    )


JOBS = {  # name: (run, help, what it does)
    "standin": (_standin, "build the STAND-IN .story corpus from the sample dump", "Build the STAND-IN corpus"),
    "articles": (_articles, "stories of one shard -> titles, chunks, highlights", "Read one shard of stories"),
    "build": (_build, "BM25 retrieval -> common examples + Table 1", "Retrieve and write the QmdsCnn examples"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.qmdscnn.corpus import CorpusError

    return run_job(args, "qmdscnn", JOBS, ((CorpusError,), 1))
