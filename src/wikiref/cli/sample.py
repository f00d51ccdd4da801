"""`wikiref sample`: materialise the offline sample (dump fragment + stand-in WARC)."""

from __future__ import annotations

import argparse
import sys

from wikiref import layout
from wikiref.config import add_params_arguments, params_from_args
from wikiref.registry import job_keys

HELP = "materialise the offline sample (real Wikipedia fragment, stand-in WARC)"
DESCRIPTION = f"""In: the installed gensim package (its test data holds a real English Wikipedia dump fragment).
Out: <out>/dump/enwiki-sample.xml.bz2 (the fragment, copied), <out>/warc/standin.warc.gz (one
clearly labelled STAND-IN page per URL that a kept statement cites, built from the citing article
without the citing paragraphs; every record has WARC-Wikiref-Standin: true) and <out>/{layout.SAMPLE_MANIFEST}
(files, sha256, counts, gensim version, stand-in note). Same params -> identical bytes.
Reads the `sample` section and the `collect` section (citation types and aliases decide which URLs
get a stand-in)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--out", help="output folder (default: sample.out_dir)")


def main(args: argparse.Namespace) -> int:
    from wikiref.stages import sample

    params = params_from_args(args, *job_keys("sample", "run"))
    out = args.out or layout.sample_dir(params)
    try:
        m = sample.run(params, {}, {"dir": out})
    except sample.SampleError as exc:
        print(f"wikiref sample: {exc}", file=sys.stderr)
        return 1
    print(
        f"sample: {m['dump']['articles']} articles, {m['dump']['statements_kept']} kept statements, "
        f"{m['warc']['records']} STAND-IN pages (mean {m['warc']['mean_tokens']} tokens) -> {out}"
    )
    return 0
