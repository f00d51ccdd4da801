"""`wikiref sample`: materialise the offline sample (issue #2: dump fragment + stand-in WARC)."""

from __future__ import annotations

import argparse

from wikiref.config import add_params_arguments, params_from_args

HELP = "materialise the offline sample (real Wikipedia fragment, stand-in WARC)"
DESCRIPTION = """In: the installed gensim package (its test data holds a real English Wikipedia dump fragment).
Out: <out>/dump/enwiki-sample.xml.bz2 (the fragment, copied), <out>/warc/standin.warc.gz (one
clearly labelled STAND-IN page per URL that a kept statement cites, built from the citing article
without the citing paragraphs; every record has WARC-Wikiref-Standin: true) and <out>/MANIFEST.json
(files, sha256, counts, gensim version, stand-in note). Same params -> identical bytes.
Reads the `sample` section and the `collect` section (citation types and aliases decide which URLs
get a stand-in)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_params_arguments(parser)
    parser.add_argument("--out", default=None, help="output folder (default: sample.out_dir)")


def main(args: argparse.Namespace) -> int:
    from wikiref.stages.sample import build_sample

    params = params_from_args(args, "sample", "collect")
    out = args.out or params["sample"]["out_dir"]
    m = build_sample(out, params["sample"], params["collect"])
    print(f"sample: {m['dump']['articles']} articles, {m['dump']['statements_kept']} kept statements, "
          f"{m['warc']['records']} STAND-IN pages (mean {m['warc']['mean_tokens']} tokens) -> {out}")
    return 0
