"""`wikiref humaneval sample|score|serve|export|import`: the papers' human studies (docs/humaneval.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wikiref import layout
from wikiref.cli import add_default, add_inputs, add_jobs, files_by_keys, input_errors, run_job, standin_label
from wikiref.config import add_params_arguments
from wikiref.stages.humaneval.studies import NAMES as STUDY_NAMES  # a light module (declarations only)

HELP = "human evaluation kit: seeded samples, a local rating page, CSV sheets, the papers' tables"
DESCRIPTION = f"""Five declared studies (humaneval.studies): WikiRef Table III (relatedness + salience 1-3 by
oracle-score bin), WikiRef Table VII (DUC 2007 summaries of two finetune settings, relatedness + redundancy
1-3), QmdsCnnIr Table 6 (head-to-head of two abstractive runs' DUC summaries on six criteria), Psg2Sum Table 3
(Good / Unsupported per overlap threshold) and WCEP's CC-NEWS check (on-topic / related / unrelated).

sample (workflow): the declared files of the other stages -> per study {layout.HUMANEVAL_ITEMS} (what raters
    see; no system names, A/B drawn per item), {layout.HUMANEVAL_KEY} (kept apart: which system is A / B),
    {layout.HUMANEVAL_SHEET} (one blank CSV sheet per declared rater), {layout.HUMANEVAL_SAMPLE_METRICS}.
score (workflow): {layout.HUMANEVAL_RATINGS}/<rater>.json|.csv -> {layout.HUMANEVAL_TABLE}.{{csv,md,tex}} beside
    the published numbers (means, win/tie/loss, paired bootstrap p, Krippendorff's alpha) and
    {layout.HUMANEVAL_METRICS}; "awaiting ratings" without ratings. A bad or partial sheet is an error naming
    the rater and the items (exit 1); no rating file is ever changed.
serve: a rating page on http://127.0.0.1:<port>/ for one rater; answers saved to
    {layout.HUMANEVAL_RATINGS}/<rater>.json after every item; reopening resumes; Submit when done.
export: a blank CSV sheet for a rater (offline rating). import: check a filled sheet and put it in
    {layout.HUMANEVAL_RATINGS}/<rater>.csv."""


def _study_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--study", required=True, choices=STUDY_NAMES)
    add_default(p, "--items", layout.HUMANEVAL_ITEMS, "items file ({study} filled in)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_jobs(parser, {name: text for name, (_, text) in {**JOBS, **TOOLS}.items()})
    for name in JOBS:
        add_params_arguments(jobs[name])
    add_default(jobs["score"], "--ratings-dir", layout.HUMANEVAL_RATINGS_DIR, "folder of <study>/<rater>.json|.csv")
    add_inputs(jobs["score"], "items.<study>, key.<study> (the sample job's files)", "the layout's paths are")
    jobs["score"].add_argument(
        "--ratings",
        nargs="*",
        metavar="FILE",
        help="the rating files (<study>/<rater>.json|.csv: a file's folder names its study); when given, "
        "--ratings-dir is not read",
    )
    serve, export, imp = jobs["serve"], jobs["export"], jobs["import"]
    for p in (serve, export, imp):
        _study_args(p)
        p.add_argument("--rater", required=True, help="the rater's name (the rating file's name)")
    for p in (serve, imp):
        add_default(p, "--ratings-dir", layout.HUMANEVAL_RATINGS_DIR, "folder of <study>/<rater>.json|.csv")
    add_default(serve, "--port", 8765, "port on 127.0.0.1 (0: any free port)", type=int)
    export.add_argument("--out", required=True, help="the CSV sheet to write")
    imp.add_argument("sheet", help="the filled CSV sheet")
    imp.add_argument("--replace", action="store_true", help="replace the rater's existing rating file")


def _items_path(args) -> str:
    return args.items.format(study=args.study)


def _inputs_outputs(params: dict, ratings_dir: str | None = None, list_ratings: bool = True):
    """The sample job's inputs and outputs, or (``ratings_dir`` given) the score job's (the rating files found
    in ``ratings_dir``; none unless ``list_ratings``)."""
    from wikiref.stages.humaneval import sheets, stage
    from wikiref.stages.humaneval.studies import enabled

    studies = enabled(params["humaneval"])
    outputs = {s: stage.outputs(params, s) for s in studies}
    if ratings_dir is None:
        return {s: stage.study_inputs(params, s) for s in studies}, outputs
    inputs = {
        s: {**outputs[s], "ratings": sheets.rating_files(Path(ratings_dir) / s) if list_ratings else []}
        for s in studies
    }
    return inputs, {s: layout.HUMANEVAL_TABLE.format(study=s) for s in studies}


def _sample(args, params) -> None:
    from wikiref.stages.humaneval import stage

    inputs, outputs = _inputs_outputs(params)
    m = stage.sample(params, inputs, {**outputs, "metrics": layout.HUMANEVAL_SAMPLE_METRICS})
    sizes = ", ".join(f"{s}: {v['items']}" for s, v in m["studies"].items())
    print(f"humaneval sample: items {sizes}{standin_label(m)} -> {layout.HUMANEVAL_DIR}")


def _given_inputs(args, inputs: dict) -> dict:
    """The score job's ``inputs`` with the files ``--inputs`` and ``--ratings`` name (a rating file's folder
    names its study), where given."""
    from wikiref.config import ParamsError
    from wikiref.stages.humaneval import sheets

    studies = list(inputs)
    named = files_by_keys(args, {"items": studies, "key": studies})
    ratings = [Path(f) for f in args.ratings or []]
    stray = [str(f) for f in ratings if f.parent.name not in studies]
    if stray:
        raise ParamsError(f"--ratings: {', '.join(stray)} not in a folder of a study ({', '.join(studies)})")
    return {
        s: {
            **inputs[s],
            **({"items": named["items"][s], "key": named["key"][s]} if named else {}),
            **(
                {"ratings": sheets.one_file_per_rater([f for f in ratings if f.parent.name == s], s)}
                if args.ratings is not None
                else {}
            ),
        }
        for s in studies
    }


def _score(args, params) -> None:
    from wikiref.stages.humaneval import stage

    inputs, outputs = _inputs_outputs(params, args.ratings_dir, list_ratings=args.ratings is None)
    if args.ratings is not None or args.inputs:
        inputs = _given_inputs(args, inputs)
    m = stage.score(params, inputs, {**outputs, "metrics": layout.HUMANEVAL_METRICS})
    print("humaneval score: " + ", ".join(f"{s}: {v['status']}" for s, v in m["studies"].items()))


def _serve(args) -> None:
    from wikiref.files import read_json
    from wikiref.stages.humaneval import server

    sample = read_json(_items_path(args))
    folder = Path(args.ratings_dir) / args.study
    if (folder / f"{args.rater}.csv").exists():
        raise server.sheets.SheetError(f"rater {args.rater}: {folder / args.rater}.csv exists (an offline sheet)")
    httpd = server.make_server(sample, args.rater, folder / f"{args.rater}.json", args.port)
    host, port = httpd.server_address[:2]
    print(f"humaneval serve: {args.study} for rater {args.rater} at http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()


def _export(args) -> None:
    from wikiref.files import read_json, write_text
    from wikiref.stages.humaneval import sheets

    sample = read_json(_items_path(args))
    write_text(args.out, sheets.blank_sheet(sample, args.rater))
    print(f"humaneval export: {len(sample['items'])} items for rater {args.rater} -> {args.out}")


def _import(args) -> None:
    from wikiref.files import read_json, write_text
    from wikiref.stages.humaneval import sheets

    sample = read_json(_items_path(args))
    answers = sheets.read_csv(args.sheet, sample, args.rater)
    sheets.check(sample, args.rater, answers, where=args.sheet, complete=True)
    folder = Path(args.ratings_dir) / args.study
    existing = [p for p in (folder / f"{args.rater}.json", folder / f"{args.rater}.csv") if p.exists()]
    if existing and not args.replace:
        raise sheets.SheetError(f"rater {args.rater}: {existing[0]} exists (--replace to replace it)")
    for p in existing:
        p.unlink()
    write_text(folder / f"{args.rater}.csv", Path(args.sheet).read_text(encoding="utf-8-sig"))
    print(f"humaneval import: {len(answers)} items of rater {args.rater} -> {folder / args.rater}.csv")


JOBS = {  # workflow jobs: name -> (run(args, params), help)
    "sample": (_sample, "draw every enabled study's sample: items, key, blank sheets"),
    "score": (_score, "rating files -> the papers' tables (awaiting ratings without any)"),
}
TOOLS = {  # a person's commands (no params): name -> (run(args), help)
    "serve": (_serve, "the rating page for one rater on 127.0.0.1"),
    "export": (_export, "write a blank CSV sheet for a rater"),
    "import": (_import, "check a filled CSV sheet and add it to the ratings"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.humaneval.sampling import SampleError
    from wikiref.stages.humaneval.sheets import SheetError
    from wikiref.stages.humaneval.stage import HumanevalError
    from wikiref.tables import StandinMismatch

    errors = (SampleError, SheetError, HumanevalError, StandinMismatch)
    if args.job in JOBS:
        jobs = {name: (run, text, text) for name, (run, text) in JOBS.items()}
        return run_job(args, "humaneval", jobs, (errors, 1))
    try:
        TOOLS[args.job][0](args)
    except (*errors, *input_errors()) as exc:
        print(f"wikiref humaneval {args.job}: {exc}", file=sys.stderr)
        return 1
    return 0
