"""`wikiref wcep standin|events|sources|ccnews|classify|build|supervised|evaluate`: WCEP, the Wikipedia
Current Events Portal as multi-document summarisation data (Gholipour Ghalandari et al. 2020)."""

from __future__ import annotations

import argparse

from wikiref import layout
from wikiref.cli import (
    add_default,
    add_files,
    add_inputs,
    add_param_jobs,
    add_torch_arguments,
    named_inputs,
    run_job,
    set_torch_threads,
    standin_label,
)

HELP = "WCEP (Gholipour Ghalandari et al. 2020): Current Events Portal + CC-NEWS -> common examples, Tables 3-5"
SPLIT = layout.SOURCE_SPLIT.format(source="wcep", split="<split>")
DESCRIPTION = f"""Jobs in order (standin only when wcep.standin is true):

standin: the sample's Wikipedia dump -> {layout.WCEP_STANDIN}: a STAND-IN portal (daily wikitext pages in
    {layout.WCEP_STANDIN_PORTAL_DUMP}, monthly HTML pages in {layout.WCEP_STANDIN_HTML}/ in the table.vevent
    and div.vevent layouts), {layout.WCEP_STANDIN_SOURCES} (the events' source pages) and
    {layout.WCEP_STANDIN_CCNEWS}/*.warc.gz (CC-NEWS-style records), NOTICE.txt, MANIFEST.json.

events: wcep.portal.dump_paths (Portal namespace pages of pages-articles dumps) + html_paths ->
    {layout.WCEP_EVENTS} (+ .stats.json): one row per leaf bullet: date, category, story path, summary,
    entities (wiki links), source URLs. Events without a source URL and every malformed piece are counted.

sources: every source URL through wcep.sources.backend (wayback in the paper profile) and the collect.fetch
    cache, extracted with the collect extractor -> {layout.WCEP_SOURCES} (+ .stats.json).

ccnews: the CC-NEWS WARC files of one shard (wcep.ccnews.paths dealt over wcep.ccnews.shards) ->
    {layout.WCEP_CCNEWS} (+ .stats.json): candidate articles with their publication (or crawl) date.

classify: the article-summary logistic regression (tf-idf cosines title/body-summary, summary entities in
    title/body) trained on the events' sources vs same-date sources of other events; held-out P/R; every
    candidate within +-wcep.classifier.window_days scored, p >= threshold added to its best event only ->
    {layout.WCEP_CLASSIFIER}, {layout.WCEP_ASSIGNMENTS}, {layout.WCEP_CLASSIFIER_METRICS}.

build: sentences, chronological split (no date in two splits), WCEP-total and WCEP-<n> (wcep.truncate) ->
    {SPLIT} (WCEP-<wcep.source_variant>), {layout.WCEP_TOTAL}, {layout.WCEP_TABLE3}.*, {layout.WCEP_TABLE4}.*,
    {layout.WCEP_FIG1}.png/svg/csv, {layout.WCEP_METRICS}.

supervised: the package's BERT extractive scorer trained on the train split (regression on each sentence's
    ROUGE-1 F1) -> {layout.WCEP_SUPERVISED} (test summaries), weights in {layout.WCEP_SUPERVISED_DIR}.

evaluate: the paper's protocol (40 tokens, lower-cased, ROUGE-1/2/L F1 and recall) for ORACLE (MULTI/SINGLE),
    LEAD ORACLE, RANDOM LEAD, RANDOM, TEXTRANK, CENTROID, SUBMODULAR and the BERT scorer ->
    {layout.WCEP_TABLE5}.* (beside the paper's), {layout.WCEP_FIG2}.png/svg/csv, {layout.WCEP_EVALUATE_METRICS}."""


def _split_paths(folder: str, template: str, **fields) -> dict:
    return {s: str(layout.in_folder(folder, template, split=s, **fields)) for s in layout.SPLITS}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_param_jobs(parser, "wcep", JOBS)
    standin, events, sources, ccnews = jobs["standin"], jobs["events"], jobs["sources"], jobs["ccnews"]
    classify, build, supervised, evaluate = jobs["classify"], jobs["build"], jobs["supervised"], jobs["evaluate"]
    standin.add_argument("--dump", required=True, help="the sample's Wikipedia dump (sample.out_dir/dump/...)")
    add_default(standin, "--out", layout.WCEP_STANDIN, "output folder, replaced as a whole")

    events.add_argument("--dump-paths", nargs="*", help="portal dump files (default: wcep.portal.dump_paths)")
    events.add_argument(
        "--html-paths", nargs="*", help="monthly HTML pages or folders (default: wcep.portal.html_paths)"
    )
    add_default(events, "--out", layout.WCEP_EVENTS, "events parquet")
    add_default(events, "--stats", layout.WCEP_EVENTS_STATS, "stats JSON")

    add_default(sources, "--events", layout.WCEP_EVENTS, "events parquet")
    sources.add_argument("--warc", nargs="*", help="archives for the warc backend (default: wcep.sources.warc_paths)")
    add_default(sources, "--out", layout.WCEP_SOURCES, "sources parquet")
    add_default(sources, "--stats", layout.WCEP_SOURCES_STATS, "stats JSON")

    ccnews.add_argument("--shard", type=int, required=True, help="this job's shard (0 .. wcep.ccnews.shards - 1)")
    ccnews.add_argument("--paths", nargs="*", help="CC-NEWS files or folders (default: wcep.ccnews.paths)")
    ccnews.add_argument("--out", help=f"candidates parquet (default: {layout.WCEP_CCNEWS})")
    ccnews.add_argument("--stats", help=f"stats JSON (default: {layout.WCEP_CCNEWS_STATS})")

    for p in (classify, build):
        add_default(p, "--events", layout.WCEP_EVENTS, "events parquet")
        add_default(p, "--sources", layout.WCEP_SOURCES, "sources parquet")
        add_files(p, "--ccnews", "PARQUET", f"every shard's candidates ({layout.WCEP_CCNEWS})", required=True)
    add_default(classify, "--model", layout.WCEP_CLASSIFIER, "classifier JSON")
    add_default(classify, "--assignments", layout.WCEP_ASSIGNMENTS, "assignments parquet")
    add_default(classify, "--metrics", layout.WCEP_CLASSIFIER_METRICS, "metrics JSON")

    add_default(build, "--assignments", layout.WCEP_ASSIGNMENTS, "assignments parquet")
    build.add_argument("--stats", nargs="*", default=[], help="upstream stats/metrics JSON folded into the metrics")
    add_default(build, "--out-dir", layout.SOURCE_DIR.format(source="wcep"), "folder of the WCEP-<n> split files")
    add_default(build, "--total-dir", layout.WCEP_TOTAL_DIR, "folder of the WCEP-total split files")
    add_default(build, "--table3", layout.WCEP_TABLE3, "Table 3 stem")
    add_default(build, "--table4", layout.WCEP_TABLE4, "Table 4 stem")
    add_default(build, "--fig1", layout.WCEP_FIG1, "Fig. 1 stem")
    add_default(build, "--metrics", layout.WCEP_METRICS, "metrics JSON")

    for p in (supervised, evaluate):
        add_default(p, "--splits-dir", layout.SOURCE_DIR.format(source="wcep"), "folder of the WCEP-<n> split files")
    add_inputs(supervised, "splits.<split> (the WCEP-<n> split files)", "--splits-dir is")
    add_inputs(evaluate, "splits.<split>, total.<split> (the WCEP-<n> and WCEP-total split files)", "the folders are")
    add_default(supervised, "--out", layout.WCEP_SUPERVISED, "test summaries JSON")
    add_default(supervised, "--model-dir", layout.WCEP_SUPERVISED_DIR, "weights folder")
    add_torch_arguments(supervised)
    add_default(evaluate, "--total-dir", layout.WCEP_TOTAL_DIR, "folder of the WCEP-total split files")
    evaluate.add_argument("--supervised", help=f"the BERT scorer's summaries ({layout.WCEP_SUPERVISED}); none: no row")
    add_default(evaluate, "--table5", layout.WCEP_TABLE5, "Table 5 stem")
    add_default(evaluate, "--fig2", layout.WCEP_FIG2, "Fig. 2 stem")
    add_default(evaluate, "--metrics", layout.WCEP_EVALUATE_METRICS, "metrics JSON")


def _standin(args, params) -> None:
    from wikiref.stages.wcep import stage

    m = stage.standin(params, {"dump": args.dump}, {"dir": args.out})
    print(f"wcep standin: {m['counts'].get('events', 0)} STAND-IN events over {m['days']} days -> {args.out}")


def _events(args, params) -> None:
    from wikiref.stages.wcep import stage

    inputs = {}
    if args.dump_paths is not None:
        inputs["dump_paths"] = args.dump_paths
    if args.html_paths is not None:
        inputs["html_paths"] = args.html_paths
    s = stage.events(params, inputs, {"events": args.out, "stats": args.stats})
    dropped = {k.split(":", 1)[1]: v for k, v in s["counts"].items() if k.startswith("dropped:")}
    print(f"wcep events: {s['events']} events over {s['days']} days{standin_label(s)}, dropped {dropped} -> {args.out}")


def _sources(args, params) -> None:
    from wikiref.stages.wcep import stage

    inputs = {"events": args.events}
    if args.warc is not None:
        inputs["warc_paths"] = args.warc
    s = stage.sources(params, inputs, {"sources": args.out, "stats": args.stats})
    print(f"wcep sources: {s['ok']} of {s['urls']} source articles{standin_label(s)} ({s['counts']}) -> {args.out}")


def _ccnews(args, params) -> None:
    from wikiref.stages.wcep import stage

    out = args.out or layout.WCEP_CCNEWS.format(shard=args.shard)
    stats = args.stats or layout.WCEP_CCNEWS_STATS.format(shard=args.shard)
    inputs = {"paths": args.paths} if args.paths is not None else {}
    s = stage.ccnews(params, inputs, {"articles": out, "stats": stats}, shard=args.shard)
    print(
        f"wcep ccnews: shard {args.shard}: {s['articles']} candidate articles from {len(s['files'])} files"
        f"{standin_label(s)} -> {out}"
    )


def _classify(args, params) -> None:
    from wikiref.stages.wcep import stage

    m = stage.classify(
        params,
        {"events": args.events, "sources": args.sources, "ccnews": args.ccnews},
        {"model": args.model, "assignments": args.assignments, "metrics": args.metrics},
    )
    h = m["training"].get("heldout", {})
    print(
        f"wcep classify: held-out {h}; {m['assigned']} of {m['candidates']} candidates assigned{standin_label(m)}"
        f" -> {args.assignments}"
    )


def _build(args, params) -> None:
    from wikiref.stages.wcep import stage

    m = stage.build(
        params,
        {
            "events": args.events,
            "sources": args.sources,
            "ccnews": args.ccnews,
            "assignments": args.assignments,
            "stats": args.stats,
        },
        {
            "splits": _split_paths(args.out_dir, layout.SOURCE_SPLIT, source="wcep"),
            "total": _split_paths(args.total_dir, layout.WCEP_TOTAL),
            "table3": args.table3,
            "table4": args.table4,
            "fig1": args.fig1,
            "metrics": args.metrics,
        },
    )
    print(f"wcep build: {m['variant']} {m['sizes']}{standin_label(m)} -> {args.out_dir}, {args.table3}.md")


def _supervised(args, params) -> None:
    from wikiref.stages.wcep import stage

    set_torch_threads(args)
    m = stage.supervised(
        params,
        named_inputs(args, ("splits",))
        or {"splits": _split_paths(args.splits_dir, layout.SOURCE_SPLIT, source="wcep")},
        {"summaries": args.out, "model_dir": args.model_dir},
    )
    print(f"wcep supervised: {len(m['summaries'])} test summaries{standin_label(m)} -> {args.out}")


def _evaluate(args, params) -> None:
    from wikiref.stages.wcep import stage

    m = stage.evaluate(
        params,
        {
            **(
                named_inputs(args, ("splits", "total"))
                or {
                    "splits": _split_paths(args.splits_dir, layout.SOURCE_SPLIT, source="wcep"),
                    "total": _split_paths(args.total_dir, layout.WCEP_TOTAL),
                }
            ),
            "supervised": args.supervised,
        },
        {"table5": args.table5, "fig2": args.fig2, "metrics": args.metrics},
    )
    print(
        f"wcep evaluate: {m['test_clusters']} test clusters, {len(m['results'])} systems{standin_label(m)}"
        f" -> {args.table5}.md"
    )


JOBS = {  # name: (run, help, what it does)
    "standin": (
        _standin,
        "build the STAND-IN portal, sources and CC-NEWS from the sample dump",
        "Build the STAND-IN inputs",
    ),
    "events": (_events, "portal pages (dump wikitext, monthly HTML) -> events", "Parse the portal"),
    "sources": (_sources, "fetch and extract every event's source articles", "Fetch the source articles"),
    "ccnews": (_ccnews, "CC-NEWS WARC files of one shard -> candidate articles", "Read one shard of CC-NEWS"),
    "classify": (_classify, "train the article-summary classifier, assign candidates", "Extend the clusters"),
    "build": (_build, "split, truncate -> common examples, Tables 3-4, Fig. 1", "Write the WCEP examples"),
    "supervised": (_supervised, "train the BERT scorer on WCEP, test summaries", "Train the supervised baseline"),
    "evaluate": (_evaluate, "oracles and baselines -> Table 5, Fig. 2", "Evaluate the baselines"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.wcep.stage import WcepError
    from wikiref.wiki.dump import DumpError

    return run_job(args, "wcep", JOBS, ((WcepError, DumpError), 1))
