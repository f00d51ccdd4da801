"""`wikiref resources get`: obtain one external input (params section ``resources``)."""

from __future__ import annotations

import argparse

from wikiref.cli import add_param_jobs, run_job

HELP = "external inputs: download (sha1-verified, resumable) and unpack, or the instructions for manual data"
DESCRIPTION = """Jobs:

get --key <key path> --out <path>: the entry resources.<key path> (the key path of the parameter that holds
    the local path, e.g. qmsum.files.train) -> <path>. url: downloaded (resumable, atomic), verified against
    sha1 or the file's line in sha1sums_url (else recorded as unpinned, with a warning), unpacked (none, gz,
    tar.gz, tgz, zip; member keeps one file or folder of an archive); files: a folder of such downloads;
    <path>.source.json records url, sha1, bytes and date. manual: exits 1 with the entry's instructions."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    jobs = add_param_jobs(parser, "resources", JOBS)
    jobs["get"].add_argument("--key", required=True, help="the entry: key path of the parameter holding the path")
    jobs["get"].add_argument("--out", required=True, help="where the consumer reads it (the parameter's path)")


def _get(args, params) -> None:
    from wikiref.stages import resources

    out = resources.get(params, args.key, args.out)
    print(f"resources get: {args.key} -> {args.out} ({out})")


JOBS = {  # name: (run, help, what it does)
    "get": (_get, "obtain one external input", "Obtain one external input"),
}


def main(args: argparse.Namespace) -> int:
    from wikiref.config import ParamsError
    from wikiref.stages.resources import ResourceError

    return run_job(args, "resources", JOBS, ((ResourceError, ParamsError), 1))
