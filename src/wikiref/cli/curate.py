"""`wikiref curate`: raw examples -> the curated WikiRef dataset (journal §II-A-2)."""

from __future__ import annotations

import argparse
import logging
import time
from collections import Counter

from wikiref.config import add_params_arguments, params_from_args

HELP = "filter raw examples (lemma recall, percentile windows, oracle ROUGE-2)"
DESCRIPTION = """Two modes (the Snakemake rules run one job per raw part, then one merge):

--part data/raw/<part>.parquet --out data/curated/parts/<part>.parquet --stats ....stats.json
    Annotate one raw part on --threads processes: spaCy tokens, lemmas and sentences (text
    section), document sentences, the six statistics, the lemma recall of filter (a) and the
    greedy ROUGE-2-recall oracle score of filter (c). Invalid rows are counted skips.

--merge <part files...> --out data/curated/examples.parquet --thresholds data/curated/thresholds.json
        --stats data/curated/stats.json --metrics results/metrics/curate.json
    Apply the filters over all parts: (a) lemma recall >= curate.min_lemma_recall; (b) the
    curate.percentile_low/high percentiles of doc tokens, doc sentences, summary tokens, summary
    sentences, query depth and query tokens, computed on the survivors of (a) and written to
    --thresholds, which (b) then reads; (c) oracle ROUGE-2 recall > curate.min_oracle_rouge2_recall.
    Every input row is kept or counted under one drop reason in --stats / --metrics."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--part", metavar="RAW", help="annotate one raw part (data/raw/<part>.parquet)")
    mode.add_argument("--merge", nargs="+", metavar="PART", help="annotated part files to filter and merge")
    parser.add_argument("--out", required=True, help="output Parquet file")
    parser.add_argument("--stats", required=True, help="output stats JSON (counts of everything kept and dropped)")
    parser.add_argument("--thresholds", help="--merge: thresholds artifact written, then read by filter (b)")
    parser.add_argument("--metrics", help="--merge: small metrics JSON (results/metrics/curate.json)")
    parser.add_argument("--threads", type=int, default=1, help="--part: worker processes (default: %(default)s)")
    parser.add_argument("--shard-size", type=int, default=64, help="--part: rows per work unit (default: %(default)s)")
    parser.add_argument(
        "--annotate-json", metavar="JSON",
        help="--part: only the curate keys the annotation reads (include_doc_title, oracle_max_sentences, "
        "max_raw_per_part) as a JSON object; what the curate_part rule passes, so a filter threshold "
        "change does not re-run spaCy. Without it they come from --params / --params-json.")


def _annotate_params(args) -> dict:
    """text section + the annotation keys of the curate section, validated against the schema."""
    import json

    import jsonschema

    from wikiref.stages import curate
    from wikiref.config import ParamsError, load_schema

    if not args.annotate_json:
        params = params_from_args(args, "text", "curate")
        return {"text": params["text"], "curate": {k: params["curate"][k] for k in curate.ANNOTATE_KEYS}}
    params = params_from_args(args, "text")
    try:
        given = json.loads(args.annotate_json)
    except json.JSONDecodeError as exc:
        raise ParamsError(f"--annotate-json is not valid JSON: {exc}") from exc
    if not isinstance(given, dict) or set(given) != set(curate.ANNOTATE_KEYS):
        raise ParamsError(f"--annotate-json must hold exactly the keys {list(curate.ANNOTATE_KEYS)}")
    props = load_schema()["properties"]["curate"]["properties"]
    for key, value in given.items():
        sub = {**props[key], "$defs": load_schema().get("$defs", {})}
        errors = list(jsonschema.validators.validator_for(sub)(sub).iter_errors(value))
        if errors:
            raise ParamsError(f"invalid parameters:\n  curate.{key}: {errors[0].message}")
    return {"text": params["text"], "curate": given}


def _part(args, params) -> int:
    import pyarrow.parquet as pq

    from wikiref.stages import curate
    from wikiref.files import write_json, write_parquet

    log = logging.getLogger("wikiref.stages.curate")
    t0 = time.monotonic()
    table = pq.read_table(args.part)
    missing = [c for c in curate.RAW_COLUMNS if c not in table.column_names]
    if missing:
        log.error("%s lacks raw columns %s", args.part, missing)
        return 1
    rows = table.to_pylist()
    cap = params["curate"]["max_raw_per_part"]
    capped = 0
    if cap and len(rows) > cap:
        # Deterministic subset independent of row order: the rows whose id hashes lowest.
        from wikiref.files import stable_id

        keep = sorted(rows, key=lambda r: stable_id(str(r.get("id"))))[:cap]
        capped = len(rows) - len(keep)
        rows = keep
    annotated, dropped = curate.annotate_parallel(
        rows, params["text"], params["curate"], threads=args.threads, shard_size=args.shard_size, label=args.part
    )
    write_parquet(args.out, curate.rows_to_table(annotated, table.schema))
    stats = {
        "part_file": str(args.part),
        "rows_in": table.num_rows,
        "annotated": len(annotated),
        "dropped": {"capped_max_raw_per_part": capped, **{r: dropped.get(r, 0) for r in curate.INVALID_REASONS}},
    }
    assert stats["rows_in"] == stats["annotated"] + sum(stats["dropped"].values())
    write_json(args.stats, stats)
    dt = time.monotonic() - t0
    print(f"{args.part}: {table.num_rows} raw rows -> {len(annotated)} annotated "
          f"({sum(stats['dropped'].values())} skipped) in {dt:.1f}s ({table.num_rows / max(dt, 1e-9):.1f} rows/s) -> {args.out}")
    return 0


def _merge(args, params) -> int:
    from collections import defaultdict

    import pyarrow as pa
    import pyarrow.parquet as pq

    from wikiref.stages import curate
    from wikiref.files import read_json, write_json, write_parquet

    log = logging.getLogger("wikiref.stages.curate")
    if not args.thresholds:
        raise SystemExit("--merge needs --thresholds")
    # The filters only need a few small columns; the texts are read afterwards, only for kept rows,
    # so the merge stays light at paper scale (millions of annotated rows).
    light_cols = ["id", "lemma_recall", *curate.STATS, "curate_oracle_score"]
    light: list[dict] = []
    for pi, path in enumerate(args.merge):
        for ri, row in enumerate(pq.read_table(path, columns=light_cols).to_pylist()):
            row["_loc"] = (pi, ri)
            light.append(row)
    part_stats = []
    for p in args.merge:
        sp = p[: -len(".parquet")] + ".stats.json" if p.endswith(".parquet") else p + ".stats.json"
        try:
            part_stats.append(read_json(sp))
        except FileNotFoundError:
            part_stats.append({"part_file": p, "rows_in": None, "annotated": None, "dropped": {}})

    cparams = params["curate"]
    try:
        # Compute the window on the survivors of (a), write it, then let (b) read exactly that file.
        _, computed, _ = curate.curate(light, cparams)
    except ValueError as exc:
        log.error("%s", exc)
        return 1
    write_json(args.thresholds, computed)
    thresholds = read_json(args.thresholds)
    kept, _, stats = curate.curate(light, cparams, thresholds=thresholds)

    by_part: dict[int, list[int]] = defaultdict(list)
    for row in kept:
        pi, ri = row["_loc"]
        by_part[pi].append(ri)
    tables = [pq.read_table(p).take(sorted(by_part.get(pi, []))) for pi, p in enumerate(args.merge)]
    table = pa.concat_tables(tables, promote_options="permissive").sort_by("id")
    write_parquet(args.out, table)

    dropped = Counter()
    rows_in = 0
    for ps in part_stats:
        rows_in += ps.get("rows_in") or 0
        dropped.update(ps.get("dropped", {}))
    dropped.update(stats["dropped"])
    full = {
        "parts": part_stats,
        "rows_in": rows_in,
        "kept": stats["kept"],
        "dropped": dict(sorted(dropped.items())),
        "survivors": stats["survivors"],
        "b_outside_window_by_statistic": stats["b_outside_window_by_statistic"],
        "b_first_failing_statistic": stats["b_first_failing_statistic"],
        "thresholds": thresholds["window"],
        "params": cparams,
    }
    if all(ps.get("rows_in") is not None for ps in part_stats):
        accounted = full["kept"] + sum(full["dropped"].values())
        if accounted != rows_in:
            raise RuntimeError(f"curation lost rows: {rows_in} in, {accounted} kept or dropped")
    write_json(args.stats, full)
    if args.metrics:
        import statistics

        metrics = {
            "rows_in": rows_in,
            "kept": full["kept"],
            "kept_fraction": round(full["kept"] / rows_in, 6) if rows_in else 0.0,
            "dropped": full["dropped"],
            "oracle_rouge2_recall_mean": round(statistics.fmean(r["curate_oracle_score"] for r in kept), 6) if kept else 0.0,
        }
        write_json(args.metrics, metrics)
    print(f"curate: {rows_in} raw rows -> {full['kept']} curated examples -> {args.out}; dropped: "
          + ", ".join(f"{k}={v}" for k, v in full["dropped"].items() if v))
    return 0


def main(args: argparse.Namespace) -> int:
    if args.part:
        return _part(args, _annotate_params(args))
    params = params_from_args(args, "curate")
    return _merge(args, params)
