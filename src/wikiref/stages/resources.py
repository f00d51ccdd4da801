"""External inputs: the datasets a profile reads that no rule of the workflow builds (``resources`` params).

``resources`` maps the *key path of the parameter that already holds the local path* (``qmsum.files.train``,
``qmdsir.dir``, ``wcep.ccnews.paths.0``: list items by index) to how to obtain it, so the path itself is
declared once, where its consumer reads it:

* ``{url, sha1, sha1sums_url, unpack, member}``: downloaded with :func:`wikiref.web.download.download_file`
  (resumable with HTTP Range, atomic rename); verified against ``sha1``, else against the line naming the
  URL's file in ``sha1sums_url`` (``sha1sum`` output, e.g. a Wikimedia dump's ``<wiki>-<date>-sha1sums.txt``).
  With neither the file is *unpinned*: downloaded, its sha1 recorded and a warning logged. Every download
  writes ``<path>.source.json`` beside the path (url, sha1, bytes, date, pinned). ``unpack``: ``none`` (the
  file as served), ``gz`` (gunzipped), ``tar.gz`` / ``tgz`` / ``zip`` (extracted; ``member`` keeps one file or
  folder of the archive as the path, else the whole archive is the folder). Archive members with absolute
  paths, ``..`` parts, links or device files are refused. Extraction goes to a temporary folder next to the
  path, renamed into place when complete.
* ``{files: {<name>: <source as above>}}``: a folder of several downloaded files (``qmdsir.dir``: the MS
  MARCO train and dev files), each under ``<name>``.
* ``{manual: "<where to get it and where to put it>"}``: nothing to download (licensed data, data without a
  stable URL): the job fails with the instructions. A user who has put the data there never sees it run
  (Snakemake finds the path).

``directory: true`` marks a path the consumer reads as a folder (needed for ``manual`` entries and archives
with a ``member`` that is a folder; inferred otherwise). Every entry is checked when the params are loaded
(:func:`resources`): the key path must exist outside ``resources`` and hold a path.

One Snakemake job per entry (``workflow/rules/resources.smk``: ``resources_file`` / ``resources_dir``, whose
output is the path the consumer rule reads), each running ``wikiref resources get --key <key path>``.
"""

from __future__ import annotations

import datetime as _dt
import gzip
import json
import logging
import os
import re
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit

from wikiref.config import ParamsError, job_params

log = logging.getLogger(__name__)

SECTION = "resources"
ARCHIVES = ("tar.gz", "tgz", "zip")
UNPACK = ("none", "gz") + ARCHIVES
MANIFEST_SUFFIX = ".source.json"
# Transport settings (the dump download's defaults: collect.dump.download of the paper profile).
RETRIES = 5
BACKOFF_S = 2.0
TIMEOUT_S = 60.0
CHUNK_BYTES = 1 << 20
_SHA1 = re.compile(r"^[0-9a-f]{40}$")


class ResourceError(RuntimeError):
    """An external input could not be obtained (download failed, checksum mismatch, unsafe archive)."""


class ManualResource(ResourceError):
    """An external input that must be obtained by hand (its instructions are the message)."""


@dataclass(frozen=True)
class Resource:
    key: str  # the key path holding the local path
    path: str  # the local path (what the consumer rule reads)
    directory: bool
    entry: Mapping  # resources[key]


# ------------------------------------------------------------------------------------------ params


def _derived_psg2sum_part(config: Mapping, part: str) -> str:
    from wikiref.wiki.dump import part_path

    return part_path(config["psg2sum"]["dump"]["dir"], part)


# Lists whose items are names, not paths: item -> the path its consumer reads.
DERIVED = {"psg2sum.dump.parts": _derived_psg2sum_part}


def _value_at(config: Mapping, key: str):
    node = config
    for i, part in enumerate(key.split(".")):
        where = ".".join(key.split(".")[:i]) or "the params"
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            raise ParamsError(
                f"resources: {key!r}: no {part!r} in {where} (the key must name the parameter holding the path)"
            )
    return node


def _is_archive(source: Mapping) -> bool:
    return source.get("unpack", "none") in ARCHIVES


def is_directory(entry: Mapping) -> bool:
    """Whether the entry makes a folder: ``directory`` when given, else a ``files`` entry or a whole archive."""
    if "directory" in entry:
        return bool(entry["directory"])
    return "files" in entry or (_is_archive(entry) and not entry.get("member"))


def _check_source(key: str, source: Mapping, directory: bool | None) -> None:
    unpack = source.get("unpack", "none")
    if unpack not in UNPACK:
        raise ParamsError(f"resources: {key}: unpack {unpack!r} is not one of {', '.join(UNPACK)}")
    sha1 = source.get("sha1")
    if sha1 is not None and not _SHA1.match(str(sha1)):
        raise ParamsError(f"resources: {key}: sha1 {sha1!r} is not 40 lowercase hex digits")
    member = source.get("member")
    if member is not None:
        if not _is_archive(source):
            raise ParamsError(f"resources: {key}: member {member!r} needs unpack tar.gz, tgz or zip")
        _safe_member(str(member), key)
    if directory is not None:
        if directory and not _is_archive(source):
            raise ParamsError(f"resources: {key}: a folder, but unpack {unpack!r} makes one file")
        if not directory and _is_archive(source) and not member:
            raise ParamsError(f"resources: {key}: a whole archive makes a folder; set member or directory: true")


def resources(config: Mapping) -> dict[str, Resource]:
    """The entries of ``resources``, checked: key path -> :class:`Resource`. A clear :class:`ParamsError` when a
    key path is not in the params or does not hold a path, or an entry contradicts itself."""
    out: dict[str, Resource] = {}
    seen: dict[str, str] = {}
    for key, entry in (config.get(SECTION) or {}).items():
        if key.split(".")[0] == SECTION:
            raise ParamsError(f"resources: {key!r}: a key path outside the resources section is expected")
        if not isinstance(entry, Mapping) or sum(k in entry for k in ("url", "files", "manual")) != 1:
            raise ParamsError(f"resources: {key}: give exactly one of url, files, manual")
        parent, _, last = key.rpartition(".")
        value = _value_at(config, key)
        if parent in DERIVED and last.isdigit() and isinstance(value, str) and value:
            path = DERIVED[parent](config, value)
        elif isinstance(value, str) and value.strip():
            path = value
        else:
            raise ParamsError(f"resources: {key}: its value {value!r} is not a path (a non-empty string)")
        directory = is_directory(entry)
        if "url" in entry:
            _check_source(key, entry, directory)
        elif "files" in entry:
            if not directory or not entry["files"]:
                raise ParamsError(f"resources: {key}: files makes a folder with at least one file")
            for name, source in entry["files"].items():
                if "/" in name or name in (".", "..") or not name:
                    raise ParamsError(f"resources: {key}: file name {name!r} is not a plain name")
                _check_source(f"{key}.files.{name}", source, None)
                if _is_archive(source) and not source.get("member"):
                    raise ParamsError(f"resources: {key}.files.{name}: an archive here needs a member (one file)")
        if path in seen:
            raise ParamsError(f"resources: {key} and {seen[path]} both name {path}")
        seen[path] = key
        out[key] = Resource(key=key, path=path, directory=directory, entry=entry)
    return out


def paths(config: Mapping, *, directory: bool | None = None) -> list[str]:
    """The local paths of the entries (only folders / only files with ``directory``)."""
    return [r.path for r in resources(config).values() if directory is None or r.directory == directory]


def path_constraint(config: Mapping, *, directory: bool) -> str:
    """A wildcard regex matching exactly these paths (one that matches nothing when there are none)."""
    wanted = paths(config, directory=directory)
    return "|".join(re.escape(p) for p in wanted) if wanted else r"(?!x)x"


def of_path(config: Mapping, path: str) -> Resource:
    for r in resources(config).values():
        if r.path == path:
            return r
    raise ParamsError(f"resources: no entry for {path}")


def job_params_json(config: Mapping, path: str) -> str:
    """The ``--params-json`` of the job making ``path``: its own entry only (editing another entry never
    reruns it) and the HTTP user agent."""
    r = of_path(config, path)
    from wikiref.registry import job_keys

    return job_params(config, *job_keys(SECTION, "get"), replace={SECTION: {r.key: dict(r.entry)}})


def key_of(config: Mapping, path: str) -> str:
    return of_path(config, path).key


# ------------------------------------------------------------------------------------------ the job


def _settings(user_agent: str):
    from wikiref.web.download import DownloadSettings

    return DownloadSettings(
        mirror="",
        wiki="",
        date="",
        multistream=False,
        retries=RETRIES,
        backoff_s=BACKOFF_S,
        timeout_s=TIMEOUT_S,
        chunk_bytes=CHUNK_BYTES,
        user_agent=user_agent,
    )


def _url_name(url: str) -> str:
    name = PurePosixPath(urlsplit(url).path).name
    if not name or name in (".", ".."):
        raise ResourceError(f"{url}: no file name in the URL")
    return name


def _expected_sha1(source: Mapping, s, session, where: str) -> str | None:
    if source.get("sha1"):
        return str(source["sha1"])
    if not source.get("sha1sums_url"):
        return None
    from wikiref.web.download import get_small
    from wikiref.wiki.index import parse_sha1sums

    sums_url = str(source["sha1sums_url"])
    text = get_small(session, s, sums_url, "checksum file").decode("utf-8", errors="replace")
    sums = parse_sha1sums(text, sums_url)
    name = _url_name(str(source["url"]))
    if name not in sums:
        raise ResourceError(f"{where}: {sums_url} lists no {name} ({len(sums)} file(s) listed)")
    return sums[name]


def _safe_member(name: str, where: str) -> PurePosixPath:
    p = PurePosixPath(name.replace("\\", "/"))
    if name.startswith(("/", "\\")) or p.is_absolute() or re.match(r"^[A-Za-z]:", name) or ".." in p.parts:
        raise ResourceError(f"{where}: archive member {name!r} is an absolute path or leaves the folder (..)")
    return p


def _under(name: PurePosixPath, member: PurePosixPath | None) -> bool:
    return member is None or name == member or member in name.parents


def _extract(archive: Path, unpack: str, into: Path, member: str | None, where: str) -> None:
    """Extract ``archive`` (only ``member`` and what is under it, when given) into ``into``; refuse unsafe members
    before extracting anything."""
    keep = PurePosixPath(member.strip("/")) if member else None
    found = False
    if unpack == "zip":
        with zipfile.ZipFile(archive) as zf:
            infos = zf.infolist()
            for info in infos:
                p = _safe_member(info.filename, where)
                if (info.external_attr >> 16) & 0o170000 == 0o120000:
                    raise ResourceError(f"{where}: archive member {info.filename!r} is a symbolic link")
                found |= _under(p, keep)
            if not found:
                raise ResourceError(f"{where}: no member {member!r} in {archive.name}")
            for info in infos:
                if _under(PurePosixPath(info.filename.replace("\\", "/")), keep):
                    zf.extract(info, into)
        return
    with tarfile.open(archive, "r:gz") as tf:
        members = tf.getmembers()
        for m in members:
            p = _safe_member(m.name, where)
            if not (m.isfile() or m.isdir()):
                raise ResourceError(f"{where}: archive member {m.name!r} is a link or special file")
            found |= _under(p, keep)
        if not found:
            raise ResourceError(f"{where}: no member {member!r} in {archive.name}")
        tf.extractall(into, members=[m for m in members if _under(PurePosixPath(m.name), keep)], filter="data")


def _place(src: Path, dest: Path) -> None:
    """Rename ``src`` (a file or folder beside ``dest``) to ``dest``; an existing ``dest`` is replaced."""
    if dest.is_dir() and not dest.is_symlink():
        old = dest.with_name(f".{dest.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        os.replace(dest, old)
        os.replace(src, dest)
        shutil.rmtree(old)
    else:
        os.replace(src, dest)


def _complete_download(target: Path, sha1: str | None) -> dict | None:
    """An archive a killed job downloaded completely (only complete files get its name) before unpacking it:
    reused when its sha1 is the expected one (or nothing is expected), else None (downloaded again)."""
    if not target.is_file():
        return None
    from wikiref.web.download import sha1_file

    actual = sha1_file(target, CHUNK_BYTES)
    if sha1 is not None and actual != sha1:
        target.unlink()
        return None
    log.info("%s: downloaded earlier, sha1 %s; unpacking it", target, actual)
    return {"sha1": actual, "bytes": target.stat().st_size}


def fetch(source: Mapping, dest: str | os.PathLike, *, user_agent: str, where: str, session=None) -> dict:
    """One ``url`` source -> ``dest`` (a file, or a folder for a whole archive), atomically; writes
    ``<dest>.source.json``. Returns the manifest."""
    from wikiref.files import write_json
    from wikiref.web.download import DownloadError, download_file, new_session

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    s = _settings(user_agent)
    session = session or new_session(s)
    url = str(source["url"])
    unpack = source.get("unpack", "none")
    try:
        sha1 = _expected_sha1(source, s, session, where)
        # unpack none: straight to dest; else the download sits beside it (resumable) until unpacked
        target = dest if unpack == "none" else dest.with_name(f".{dest.name}.{_url_name(url)}")
        got = (unpack != "none" and _complete_download(target, sha1)) or download_file(
            url, target, sha1=sha1, size=None, s=s, session=session
        )
    except DownloadError as exc:
        raise ResourceError(f"{where}: {exc}") from exc
    if sha1 is None:
        log.warning(
            "%s: %s is UNPINNED (no sha1 or sha1sums_url in its resources entry): downloaded with sha1 %s; pin it "
            "by adding that sha1 to the entry",
            where,
            url,
            got["sha1"],
        )
    if unpack == "gz":
        with (
            gzip.open(target, "rb") as src,
            tempfile.NamedTemporaryFile(dir=dest.parent, prefix=f".{dest.name}.", suffix=".tmp", delete=False) as out,
        ):
            try:
                shutil.copyfileobj(src, out, CHUNK_BYTES)
                out.flush()
                os.fsync(out.fileno())
            except (OSError, EOFError, gzip.BadGzipFile) as exc:
                os.unlink(out.name)
                raise ResourceError(f"{where}: {url} is not a complete gzip file: {exc}") from exc
        os.chmod(out.name, 0o644)
        os.replace(out.name, dest)
    elif unpack in ARCHIVES:
        tmp = Path(tempfile.mkdtemp(prefix=f".{dest.name}.unpack-", dir=dest.parent))
        try:
            try:
                _extract(target, unpack, tmp, source.get("member"), where)
            except (tarfile.TarError, zipfile.BadZipFile, EOFError, OSError) as exc:
                raise ResourceError(f"{where}: {url}: not a readable {unpack} archive: {exc}") from exc
            member = source.get("member")
            _place(tmp / member.strip("/") if member else tmp, dest)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if unpack != "none":
        target.unlink()
    manifest = {
        "url": url,
        "sha1": got["sha1"],
        "bytes": got["bytes"],
        "pinned": sha1 is not None,
        "unpack": unpack,
        "member": source.get("member"),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
    }
    write_json(f"{dest}{MANIFEST_SUFFIX}", manifest)
    return manifest


def get(params: Mapping, key: str, out: str | os.PathLike, *, session=None) -> dict:
    """The job of entry ``key``: obtain it at ``out`` (the path its consumer reads). A ``manual`` entry raises
    :class:`ManualResource` with its instructions."""
    entries = params.get(SECTION) or {}
    if key not in entries:
        raise ParamsError(f"resources: no entry {key!r} in the job's params (entries: {sorted(entries)})")
    entry = entries[key]
    out = Path(out)
    user_agent = str(params["collect"]["fetch"]["user_agent"])
    if "manual" in entry:
        raise ManualResource(
            f"{key} = {out} is not downloadable and is missing; obtain it by hand:\n  "
            + str(entry["manual"]).strip().replace("\n", "\n  ")
        )
    if "url" in entry:
        return {key: fetch(entry, out, user_agent=user_agent, where=key, session=session)}
    # files: a folder of downloads, staged beside it (finished files survive a killed job), then renamed
    staging = out.with_name(f".{out.name}.files")
    staging.mkdir(parents=True, exist_ok=True)
    manifests = {}
    for name, source in entry["files"].items():
        file = staging / name
        done = Path(f"{file}{MANIFEST_SUFFIX}")
        if file.exists() and done.exists() and json.loads(done.read_text(encoding="utf-8")).get("url") == source["url"]:
            manifests[name] = json.loads(done.read_text(encoding="utf-8"))
            continue
        manifests[name] = fetch(source, file, user_agent=user_agent, where=f"{key}.files.{name}", session=session)
    _place(staging, out)
    return {key: manifests}
