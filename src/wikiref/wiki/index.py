"""The dump's part list and checksums, from the dump's own index files; no network (that is :mod:`.download`).

A Wikimedia dump directory ``<mirror>/<wiki>/<date>/`` carries ``dumpstatus.json`` (each job's status and
files, with their size, md5 and sha1) and ``<wiki>-<date>-sha1sums.txt`` (``sha1sum`` output for every file).
The articles dump is the ``articlesdump`` job (``articlesmultistreamdump`` with ``multistream: true``): its
``.xml.bz2`` / ``.xml-p<first>p<last>.bz2`` files are the parts (the multistream index files are not).

Part names are what ``collect.dump.parts`` lists and ``data/raw/<part>.parquet`` is named after: the file
name without ``.bz2`` (split parts, ``enwiki-20190101-pages-articles1.xml-p10p30302``) or without ``.xml.bz2``
(a dump in one file, ``simplewiki-20190101-pages-articles``): :func:`part_of_file` / :func:`file_of_part`.

``collect.dump.parts: all`` means every part of the chosen articles job; the Snakemake rules learn them from
the downloaded ``dumpstatus.json`` (checkpoint ``collect_download_index``), everything else from the file
once it is there (:func:`dump_parts`). The rules and the registry plan with these functions, so this module
imports nothing heavy.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from wikiref import layout
from wikiref.config import ParamsError

ALL = "all"
ARTICLES_JOBS = {False: "articlesdump", True: "articlesmultistreamdump"}
# A part file of an articles dump (the multistream index files, *-index*.txt*, do not match).
_PART_FILE = re.compile(r"\.xml(?:-p\d+p\d+)?\.bz2$")
_SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_SHA1 = re.compile(r"^[0-9a-f]{40}$")
_SHA1SUMS_LINE = re.compile(r"^([0-9A-Fa-f]{40}) [ *]?(\S+)$")


class DumpIndexError(ValueError):
    """The dump's index files are unusable, or do not hold what the params name."""


def file_of_part(part: str) -> str:
    """The dump file of ``part``: ``<part>.bz2`` for a split part (``...xml-p10p30302``) or a name ending in
    ``.xml``, ``<part>.xml.bz2`` for a whole-dump name; a name already ending in ``.bz2`` is the file itself."""
    if part.endswith(".bz2"):
        return part
    if ".xml-p" in part or part.endswith(".xml"):
        return f"{part}.bz2"
    return f"{part}.xml.bz2"


def part_of_file(name: str) -> str:
    """The part name of dump file ``name`` (the inverse of :func:`file_of_part` for articles dump files)."""
    stem = name.removesuffix(".bz2")
    return stem.removesuffix(".xml")


def _natural_key(name: str) -> list:
    """Sort key that orders ``articles2`` before ``articles10`` and ``p10`` before ``p2062``."""
    return [(0, int(t), "") if t.isdigit() else (1, 0, t) for t in re.split(r"(\d+)", name)]


def settings(config: Mapping) -> dict:
    """``collect.dump.download`` with ``date`` as a string; a clear error when the download is off."""
    download = layout.dump_download(config)
    if download is None:
        raise ParamsError(
            "collect.dump.download.mirror is empty (download off): set it to a Wikimedia dump mirror "
            "(e.g. https://dumps.wikimedia.org) to download the dump"
        )
    return dict(download, date=str(download["date"]))


def parse_sha1sums(text: str, where: str = "sha1sums") -> dict[str, str]:
    """``sha1sum`` output (``<40 hex>  <file>`` per line, ``*<file>`` for binary mode) -> file name -> sha1."""
    out: dict[str, str] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _SHA1SUMS_LINE.match(line.strip())
        if not m:
            raise DumpIndexError(f"{where}: line {lineno} is not '<sha1>  <file>': {line[:120]!r}")
        sha1, name = m.group(1).lower(), m.group(2)
        if out.get(name, sha1) != sha1:
            raise DumpIndexError(f"{where}: {name} is listed twice with different sha1 ({out[name]}, {sha1})")
        out[name] = sha1
    if not out:
        raise DumpIndexError(f"{where}: no checksum lines")
    return out


def articles_files(status: Mapping, *, wiki: str, date: str, multistream: bool, where: str = "dumpstatus.json") -> dict:
    """The part files of the articles job in a parsed ``dumpstatus.json``: name -> its entry (size, sha1...).

    Refuses a job that is not ``done`` (its file list may be incomplete) and file names that are not plain
    ``<wiki>-<date>-...`` names (they become local paths)."""
    job_name = ARTICLES_JOBS[bool(multistream)]
    jobs = status.get("jobs") if isinstance(status, Mapping) else None
    if not isinstance(jobs, Mapping):
        raise DumpIndexError(f"{where}: no 'jobs' object (not a Wikimedia dumpstatus.json)")
    job = jobs.get(job_name)
    if not isinstance(job, Mapping):
        raise DumpIndexError(
            f"{where}: no {job_name!r} job in the {wiki} {date} dump (jobs: {', '.join(sorted(jobs))})"
        )
    if job.get("status") != "done":
        raise DumpIndexError(
            f"{where}: the {job_name} job of the {wiki} {date} dump is {job.get('status')!r}, not 'done'; "
            "choose a finished dump date"
        )
    files = job.get("files")
    if not isinstance(files, Mapping):
        raise DumpIndexError(f"{where}: the {job_name} job has no 'files' object")
    prefix = f"{wiki}-{date}-"
    out = {}
    for name, entry in files.items():
        if not _PART_FILE.search(name):
            continue
        if not name.startswith(prefix) or not _SAFE_NAME.match(name):
            raise DumpIndexError(f"{where}: file {name!r} of the {job_name} job is not a {prefix}... file name")
        out[name] = dict(entry) if isinstance(entry, Mapping) else {}
    if not out:
        raise DumpIndexError(f"{where}: the {job_name} job of the {wiki} {date} dump lists no .xml(-p...).bz2 part")
    return dict(sorted(out.items(), key=lambda kv: _natural_key(kv[0])))


def checksums(status: Mapping, sha1sums: Mapping[str, str], *, wiki: str, date: str, multistream: bool) -> dict:
    """Every part file of the articles job -> ``{"sha1": ..., "size": bytes or None}``.

    The sha1 comes from ``dumpstatus.json`` and ``<wiki>-<date>-sha1sums.txt``; where both give one they must
    agree, and a part neither gives a sha1 for is refused (it could not be verified)."""
    out = {}
    for name, entry in articles_files(status, wiki=wiki, date=date, multistream=multistream).items():
        from_status = str(entry.get("sha1") or "").lower() or None
        from_sums = sha1sums.get(name)
        if from_status is not None and not _SHA1.match(from_status):
            raise DumpIndexError(f"dumpstatus.json: {name} has a malformed sha1 {from_status!r}")
        if from_status and from_sums and from_status != from_sums:
            raise DumpIndexError(
                f"{name}: dumpstatus.json says sha1 {from_status}, {wiki}-{date}-sha1sums.txt says {from_sums}"
            )
        sha1 = from_status or from_sums
        if not sha1:
            raise DumpIndexError(f"{name}: no sha1 in dumpstatus.json nor in {wiki}-{date}-sha1sums.txt")
        size = entry.get("size")
        out[name] = {"sha1": sha1, "size": int(size) if isinstance(size, int) and size >= 0 else None}
    return out


def read_index(config: Mapping, status_path: str | Path | None = None, sha1sums_path: str | Path | None = None) -> dict:
    """The checksums (:func:`checksums`) from the downloaded index files (default: their layout paths)."""
    s = settings(config)
    status_path = Path(status_path or layout.dump_status(config))
    sha1sums_path = Path(sha1sums_path or layout.dump_sha1sums(config))
    try:
        status = json.loads(status_path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise DumpIndexError(f"{status_path}: not JSON ({exc})") from exc
    sums = parse_sha1sums(sha1sums_path.read_text(encoding="utf-8"), str(sha1sums_path))
    return checksums(status, sums, wiki=s["wiki"], date=s["date"], multistream=s["multistream"])


def dump_parts(config: Mapping, checkpoints=None) -> list[str]:
    """The parts ``collect.dump.parts`` names: the list itself, or with ``all`` every part of the articles dump.

    For ``all`` the part list comes from the downloaded ``dumpstatus.json``: inside Snakemake pass its
    ``checkpoints`` object (the rules then wait for ``collect_download_index``); elsewhere the file must exist
    (else a clear error saying how to get it)."""
    parts = config["collect"]["dump"]["parts"]
    if parts != ALL:
        return list(parts)
    s = settings(config)
    if checkpoints is not None:
        out = checkpoints.collect_download_index.get().output
        status_path, sums_path = out.status, out.sha1sums
    else:
        status_path, sums_path = layout.dump_status(config), layout.dump_sha1sums(config)
        missing = [p for p in (status_path, sums_path) if not Path(p).is_file()]
        if missing:
            raise DumpIndexError(
                f"collect.dump.parts is 'all': the part list comes from the {s['wiki']} {s['date']} dump's index, "
                f"but {', '.join(missing)} does not exist; download it first "
                "(`wikiref collect download --index-only` or `snakemake collect_download_index`)"
            )
    return [part_of_file(name) for name in read_index(config, status_path, sums_path)]


def check_parts(config: Mapping) -> None:
    """Refuse ``collect.dump.parts: all`` without the download (nothing would say which parts exist)."""
    if config["collect"]["dump"]["parts"] == ALL and layout.dump_download(config) is None:
        raise ParamsError(
            "collect.dump.parts is 'all', which lists the parts from the dump mirror's dumpstatus.json, but "
            "collect.dump.download.mirror is empty; set the mirror or list the parts"
        )


def part_constraint(config: Mapping) -> str:
    """The regex of the ``{part}`` wildcard: the listed parts, or with ``all`` any ``<wiki>-<date>-`` part."""
    check_parts(config)
    parts = config["collect"]["dump"]["parts"]
    if parts != ALL:
        return "|".join(re.escape(p) for p in parts)
    s = settings(config)
    return re.escape(f"{s['wiki']}-{s['date']}-") + r"[A-Za-z0-9._-]+"


def dumpfile_constraint(config: Mapping) -> str:
    """The regex of the ``{dumpfile}`` wildcard of rule ``collect_download`` (the files of the listed parts,
    or with ``all`` any ``<wiki>-<date>-...bz2`` file; never the index files next to them)."""
    check_parts(config)
    parts = config["collect"]["dump"]["parts"]
    if parts != ALL:
        return "|".join(re.escape(file_of_part(p)) for p in parts)
    s = settings(config)
    return re.escape(f"{s['wiki']}-{s['date']}-") + r"[A-Za-z0-9._-]+\.bz2"


def dump_option(config: Mapping, part: str) -> str:
    """``--dump <file>`` for the part job when the part is downloaded (it then reads exactly the file rule
    ``collect_download`` wrote, whatever else lies in ``collect.dump.dir``), else nothing (found there)."""
    if layout.dump_download(config) is None:
        return ""
    return f"--dump {shlex.quote(downloaded_part(config, part))}"


def downloaded_part(config: Mapping, part: str) -> str:
    """Where the download puts the file of ``part``: ``<collect.dump.dir>/<its dump file name>``."""
    return layout.dump_file(config).format(dumpfile=file_of_part(part))
