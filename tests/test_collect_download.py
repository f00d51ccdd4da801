"""The dump download (`wikiref collect download`, rules collect_download_index / collect_download) against a
loopback HTTP server (127.0.0.1 only) serving a fake Wikimedia dump directory: part listing, checksum files,
resume with Range after a cut, a server that ignores Range, a corrupted part, a missing part, atomicity, the
CLI, and Snakemake's plan for an explicit part list and for `parts: all`."""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import re
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from wikiref import config, layout
from wikiref.registry import job_keys, stage
from wikiref.web import download
from wikiref.web.download import DownloadError
from wikiref.wiki.index import (
    DumpIndexError,
    articles_files,
    checksums,
    dump_parts,
    dumpfile_constraint,
    file_of_part,
    parse_sha1sums,
    part_constraint,
    part_of_file,
)

WIKI, DATE = "enwiki", "20190101"
PREFIX = f"{WIKI}-{DATE}-"
# The articles dump's split parts (natural order: 2 before 10), the multistream parts and their index files.
PARTS = [
    f"{PREFIX}pages-articles{i}.xml-p{a}p{b}" for i, a, b in ((1, 10, 30302), (2, 30304, 88444), (10, 88445, 99999))
]
MS_PARTS = [
    f"{PREFIX}pages-articles-multistream1.xml-p10p30302",
    f"{PREFIX}pages-articles-multistream2.xml-p30304p88444",
]
MS_INDEX = [f"{PREFIX}pages-articles-multistream-index1.txt-p10p30302.bz2"]
OTHER = [f"{PREFIX}pages-articles.xml.bz2", f"{PREFIX}pages-meta-current1.xml-p10p30302.bz2"]
MAX_SERVER_REQUESTS = 200  # the test server answers 500 beyond this: no test can loop for long


def body(name: str, size: int = 60_000) -> bytes:
    """Deterministic bytes of a fake dump file."""
    out = bytearray()
    k = 0
    while len(out) < size:
        out += hashlib.sha256(f"{name}/{k}".encode()).digest()
        k += 1
    return bytes(out[:size])


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


FILES = {file_of_part(p): body(p) for p in PARTS + MS_PARTS} | {n: body(n, 500) for n in MS_INDEX + OTHER}


def dumpstatus(files: dict[str, bytes], *, articles_status: str = "done", sha1_in_status: bool = True) -> dict:
    def entries(names):
        return {
            n: {
                "size": len(files[n]),
                "url": f"/{WIKI}/{DATE}/{n}",
                "md5": hashlib.md5(files[n]).hexdigest(),
                **({"sha1": sha1(files[n])} if sha1_in_status else {}),
            }
            for n in names
        }

    return {
        "jobs": {
            # a dict, in the mirror's (unsorted) order: the listing sorts naturally
            "articlesdump": {
                "status": articles_status,
                "updated": "2019-01-03 10:00:00",
                "files": entries([file_of_part(p) for p in reversed(PARTS)]),
            },
            "articlesmultistreamdump": {
                "status": "done",
                "files": entries([file_of_part(p) for p in MS_PARTS] + MS_INDEX),
            },
            "articlesdumprecombine": {"status": "done", "files": entries(OTHER[:1])},
            "metacurrentdump": {"status": "done", "files": entries(OTHER[1:])},
        },
        "version": "0.8",
    }


def sha1sums_text(files: dict[str, bytes]) -> str:
    return "".join(f"{sha1(data)}  {name}\n" for name, data in sorted(files.items()))


class DumpServer:
    """A fake mirror on 127.0.0.1: ``/<wiki>/<date>/<name>`` from ``files``, Range requests answered with 206.

    ``drop_after[name] = n``: the next full-length answer of ``name`` stops after n bytes and closes the
    connection (once); ``ignore_range``: names answered 200 (whole file) whatever Range says; ``pause[name] =
    (n, event)``: after n bytes, wait for ``event`` (at most 10 s) before the rest. ``log``: (name, Range
    header, status) of every request."""

    def __init__(self, files: dict[str, bytes], index: dict[str, bytes]):
        self.files, self.index = dict(files), dict(index)
        self.drop_after: dict[str, int] = {}
        self.ignore_range: set[str] = set()
        self.pause: dict[str, tuple[int, threading.Event]] = {}
        self.log: list[tuple[str, str | None, int]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def do_GET(self):
                server.handle(self)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def requests_for(self, name: str) -> list[tuple[str | None, int]]:
        return [(r, code) for n, r, code in self.log if n == name]

    def handle(self, h: BaseHTTPRequestHandler) -> None:
        prefix = f"/{WIKI}/{DATE}/"
        name = h.path[len(prefix) :] if h.path.startswith(prefix) else h.path
        rng = h.headers.get("Range")
        data = self.files.get(name, self.index.get(name))
        if len(self.log) >= MAX_SERVER_REQUESTS:
            code = 500
        elif data is None:
            code = 404
        else:
            code = 200
            start = 0
            m = re.fullmatch(r"bytes=(\d+)-", rng or "")
            if m and name not in self.ignore_range:
                start = int(m.group(1))
                code = 206 if start < len(data) else 416
        self.log.append((name, rng, code))
        if code != 200 and code != 206:
            h.send_response(code)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        h.send_response(code)
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(data) - start))
        if code == 206:
            h.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
        h.end_headers()
        payload = data[start:]
        if start == 0 and name in self.drop_after:
            cut = self.drop_after.pop(name)
            h.wfile.write(payload[:cut])
            h.wfile.flush()
            h.close_connection = True
            h.connection.shutdown(2)  # both directions: the client sees the body end early
            return
        if name in self.pause:
            n, event = self.pause[name]
            h.wfile.write(payload[:n])
            h.wfile.flush()
            event.wait(10)
            payload = payload[n:]
        h.wfile.write(payload)

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(5)


def index_bytes(files: dict[str, bytes], **kw) -> dict[str, bytes]:
    return {
        "dumpstatus.json": json.dumps(dumpstatus(files, **kw)).encode(),
        f"{WIKI}-{DATE}-sha1sums.txt": sha1sums_text(files).encode(),
    }


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    for var in ("HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture
def server():
    srv = DumpServer(FILES, index_bytes(FILES))
    yield srv
    srv.close()


@pytest.fixture(scope="module")
def base_params(repo) -> dict:
    return config.load_params(repo / "params.yaml")


def make_params(base: dict, mirror: str, dump_dir: Path, parts=None, **download) -> dict:
    p = copy.deepcopy(base)
    p["collect"]["dump"].update(dir=str(dump_dir), parts=list(parts or PARTS[:2]) if parts != "all" else "all")
    p["collect"]["dump"]["download"] = {
        "mirror": mirror,
        "wiki": WIKI,
        "date": DATE,
        "multistream": False,
        "retries": 2,
        "backoff_s": 0.0,
        "timeout_s": 5,
        "chunk_bytes": 4096,
    } | download
    config.validate(p)
    return p


def fetch_index(params: dict) -> dict:
    out = {"status": layout.dump_status(params), "sha1sums": layout.dump_sha1sums(params)}
    download.index(params, {}, out)
    return out


# ------------------------------------------------------------------------------------- names and listings


def test_part_and_file_names_round_trip():
    assert file_of_part(PARTS[0]) == PARTS[0] + ".bz2"
    assert file_of_part(f"{PREFIX}pages-articles") == f"{PREFIX}pages-articles.xml.bz2"
    assert file_of_part(PARTS[0] + ".bz2") == PARTS[0] + ".bz2"  # a file name is its own file
    for name in [file_of_part(p) for p in PARTS + MS_PARTS] + OTHER[:1]:
        assert file_of_part(part_of_file(name)) == name


def test_parts_listed_from_dumpstatus():
    status = dumpstatus(FILES)
    assert list(articles_files(status, wiki=WIKI, date=DATE, multistream=False)) == [file_of_part(p) for p in PARTS]
    # multistream: its parts, never its index files
    assert list(articles_files(status, wiki=WIKI, date=DATE, multistream=True)) == [file_of_part(p) for p in MS_PARTS]
    with pytest.raises(DumpIndexError, match="articlesdump job of the enwiki 20190101 dump is 'in-progress'"):
        articles_files(dumpstatus(FILES, articles_status="in-progress"), wiki=WIKI, date=DATE, multistream=False)
    with pytest.raises(DumpIndexError, match="no 'articlesdump' job"):
        articles_files({"jobs": {"other": {}}}, wiki=WIKI, date=DATE, multistream=False)
    with pytest.raises(DumpIndexError, match="not a Wikimedia dumpstatus.json"):
        articles_files({"version": "0.8"}, wiki=WIKI, date=DATE, multistream=False)
    # a file name that would leave the dump folder is refused, not skipped
    bad = dumpstatus(FILES)
    bad["jobs"]["articlesdump"]["files"]["../../etc/x.xml.bz2"] = {"sha1": "0" * 40}
    with pytest.raises(DumpIndexError, match=r"\.\./\.\./etc/x\.xml\.bz2"):
        articles_files(bad, wiki=WIKI, date=DATE, multistream=False)


def test_sha1sums_parsing_and_cross_check():
    text = f"{'A' * 40}  one.bz2\n\n{'b' * 40} *two.bz2\n"
    assert parse_sha1sums(text) == {"one.bz2": "a" * 40, "two.bz2": "b" * 40}
    with pytest.raises(DumpIndexError, match="line 2 is not"):
        parse_sha1sums(f"{'a' * 40}  one.bz2\nnot a checksum line\n")
    with pytest.raises(DumpIndexError, match="listed twice"):
        parse_sha1sums(f"{'a' * 40}  one.bz2\n{'b' * 40}  one.bz2\n")
    with pytest.raises(DumpIndexError, match="no checksum lines"):
        parse_sha1sums("\n")
    sums = parse_sha1sums(sha1sums_text(FILES))
    table = checksums(dumpstatus(FILES), sums, wiki=WIKI, date=DATE, multistream=False)
    first = file_of_part(PARTS[0])
    assert table[first] == {"sha1": sha1(FILES[first]), "size": len(FILES[first])}
    # a mirror's dumpstatus.json without hashes: the sha1sums file gives them
    assert checksums(dumpstatus(FILES, sha1_in_status=False), sums, wiki=WIKI, date=DATE, multistream=False) == table
    with pytest.raises(DumpIndexError, match=f"{re.escape(first)}: no sha1"):
        checksums(dumpstatus(FILES, sha1_in_status=False), {}, wiki=WIKI, date=DATE, multistream=False)
    with pytest.raises(DumpIndexError, match=f"{re.escape(first)}: dumpstatus.json says sha1"):
        checksums(dumpstatus(FILES), dict(sums, **{first: "c" * 40}), wiki=WIKI, date=DATE, multistream=False)


def test_parts_all_needs_the_mirror_and_the_index(base_params, tmp_path):
    p = copy.deepcopy(base_params)
    p["collect"]["dump"]["parts"] = "all"
    config.validate(p)
    with pytest.raises(config.ParamsError, match="download.mirror is empty"):
        part_constraint(p)
    with pytest.raises(config.ParamsError, match="download.mirror is empty"):
        dumpfile_constraint(p)
    p = make_params(base_params, "http://127.0.0.1:9", tmp_path / "dump", parts="all")
    with pytest.raises(DumpIndexError, match="--index-only"):
        dump_parts(p)
    assert re.fullmatch(part_constraint(p), PARTS[0]) and not re.fullmatch(part_constraint(p), "other-part")
    constraint = dumpfile_constraint(p)
    assert re.fullmatch(constraint, file_of_part(PARTS[2]))
    assert not re.fullmatch(constraint, f"{WIKI}-{DATE}-dumpstatus.json")  # never the index files
    explicit = make_params(base_params, "http://127.0.0.1:9", tmp_path / "dump")
    assert dump_parts(explicit) == PARTS[:2]
    assert re.fullmatch(dumpfile_constraint(explicit), file_of_part(PARTS[1]))
    assert not re.fullmatch(dumpfile_constraint(explicit), file_of_part(PARTS[2]))


# ---------------------------------------------------------------------------------------------- downloads


def test_index_and_full_download(server, base_params, tmp_path, caplog, monkeypatch):
    caplog.set_level(logging.INFO, logger="wikiref.web.download")
    monkeypatch.setattr(download, "PROGRESS_EVERY_S", 0.0)  # a progress line per chunk
    dump = tmp_path / "dump"
    params = make_params(base_params, server.url, dump, parts="all")
    index = fetch_index(params)
    assert Path(index["status"]).read_bytes() == server.index["dumpstatus.json"]  # as served
    assert Path(index["sha1sums"]).name == f"{WIKI}-{DATE}-sha1sums.txt"
    assert dump_parts(params) == PARTS  # parts: all, from the downloaded index, in natural order
    got = download.run(params, index, {})
    for part in PARTS:
        f = dump / file_of_part(part)
        assert f.read_bytes() == FILES[f.name]
        assert got["files"][f.name]["sha1"] == sha1(FILES[f.name]) and got["files"][f.name]["requests"] == 1
        assert server.requests_for(f.name) == [(None, 200)]
    assert not list(dump.glob(".*partial"))
    # progress: bytes so far of the file's size, percent, rate
    assert re.search(
        r"pages-articles1\.xml-p10p30302\.bz2: 0\.0 MiB of 0\.1 MiB \(\d+\.\d%\), \d+\.\d\d MiB/s", caplog.text
    )
    # a second run keeps the verified files (no request)
    n = len(server.log)
    download.run(params, index, {})
    assert len(server.log) == n


def test_resume_after_a_dropped_connection(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    server.drop_after[name] = 25_000
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[:1])
    got = download.run(params, fetch_index(params), {})
    (first, code1), (second, code2) = server.requests_for(name)
    assert (first, code1) == (None, 200)
    assert code2 == 206 and re.fullmatch(r"bytes=(\d+)-", second) and 0 < int(second[6:-1]) <= 25_000
    assert sha1((tmp_path / "dump" / name).read_bytes()) == sha1(FILES[name])
    assert got["files"][name]["requests"] == 2 and got["files"][name]["restarts"] == 0


def test_resume_from_the_partial_file_of_a_killed_run(server, base_params, tmp_path):
    name = file_of_part(PARTS[1])
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / f".{name}.partial").write_bytes(FILES[name][:12_345])
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[1:2])
    got = download.run(params, fetch_index(params), {})
    assert server.requests_for(name) == [("bytes=12345-", 206)]
    assert (tmp_path / "dump" / name).read_bytes() == FILES[name]
    assert got["files"][name]["resumed_from"] == 12_345


def test_server_ignoring_range_restarts_from_zero(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    server.drop_after[name] = 20_000
    server.ignore_range.add(name)
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[:1])
    got = download.run(params, fetch_index(params), {})
    (first, code1), (second, code2) = server.requests_for(name)
    assert first is None and second.startswith("bytes=") and code2 == 200  # asked to resume, got the whole file
    assert (tmp_path / "dump" / name).read_bytes() == FILES[name]
    assert got["files"][name]["range_ignored"] == 1


def test_corrupted_part_is_refused(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    good = FILES[name]
    server.files[name] = good[:1000] + bytes([good[1000] ^ 0xFF]) + good[1001:]  # the index keeps the true sha1
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[:1])
    index = fetch_index(params)
    with pytest.raises(DownloadError) as err:
        download.run(params, index, {})
    msg = str(err.value)
    assert PARTS[0] in msg and sha1(good) in msg and sha1(server.files[name]) in msg and "mismatch" in msg
    assert not (tmp_path / "dump" / name).exists()
    assert not list((tmp_path / "dump").glob(".*partial"))


def test_corrupted_after_a_resume_is_downloaded_once_more_then_refused(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    good = FILES[name]
    server.files[name] = good[:-1] + bytes([good[-1] ^ 1])
    server.drop_after[name] = 30_000
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[:1])
    with pytest.raises(DownloadError, match="sha1 mismatch"):
        download.run(params, fetch_index(params), {})
    # cut + resumed (2 requests), then once more from byte 0 (1 request), then refused
    assert [r for r, _ in server.requests_for(name)][0] is None and len(server.requests_for(name)) == 3
    assert server.requests_for(name)[2] == (None, 200)
    assert not (tmp_path / "dump" / name).exists()


def test_missing_part_is_a_clear_error(server, base_params, tmp_path):
    name = file_of_part(PARTS[1])
    del server.files[name]  # listed in the index, not on the mirror
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[1:2])
    with pytest.raises(DownloadError, match=rf"part {re.escape(PARTS[1])}: HTTP 404 Not Found at .*{re.escape(name)}"):
        download.run(params, fetch_index(params), {})
    assert server.requests_for(name) == [(None, 404)]  # a 404 is not retried
    assert not (tmp_path / "dump" / name).exists() and not list((tmp_path / "dump").glob(".*partial"))


def test_index_errors(server, base_params, tmp_path):
    params = make_params(base_params, server.url, tmp_path / "dump", parts=["enwiki-20190101-pages-articles9.xml-p1p2"])
    with pytest.raises(DumpIndexError, match=r"pages-articles9.xml-p1p2 .* not in the articlesdump job .* 3 part\(s\)"):
        fetch_index(params)
    assert not (tmp_path / "dump").exists() or not list((tmp_path / "dump").iterdir())  # nothing written
    del server.index["dumpstatus.json"]
    params = make_params(base_params, server.url, tmp_path / "dump")
    with pytest.raises(DownloadError, match=r"dumpstatus.json: HTTP 404 .*is the date on this mirror"):
        fetch_index(params)


def test_no_partial_file_at_the_final_path_while_downloading(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    release = threading.Event()
    server.pause[name] = (30_000, release)
    dump = tmp_path / "dump"
    params = make_params(base_params, server.url, dump, parts=PARTS[:1])
    index = fetch_index(params)
    errors: list[BaseException] = []

    def work():
        try:
            download.run(params, index, {})
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            errors.append(exc)

    t = threading.Thread(target=work)
    t.start()
    partial = dump / f".{name}.partial"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not (partial.exists() and partial.stat().st_size >= 28_000):
        time.sleep(0.02)
    try:
        assert partial.exists() and partial.stat().st_size >= 28_000, "the download never reached the pause"
        assert not (dump / name).exists()  # half a file is never under the final name
    finally:
        release.set()
        t.join(15)
    assert not errors, errors
    assert (dump / name).read_bytes() == FILES[name] and not partial.exists()


def test_existing_file_with_another_sha1_is_an_error_not_overwritten(server, base_params, tmp_path):
    name = file_of_part(PARTS[0])
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / name).write_bytes(b"somebody's file")
    params = make_params(base_params, server.url, tmp_path / "dump", parts=PARTS[:1])
    with pytest.raises(DownloadError, match="exists with sha1 .* delete it"):
        download.run(params, fetch_index(params), {})
    assert (tmp_path / "dump" / name).read_bytes() == b"somebody's file"


# ----------------------------------------------------------------------------------------------------- CLI


def _cli(args: list[str], cwd: Path, env: dict) -> subprocess.CompletedProcess:
    cmd = [str(Path(sys.executable).parent / "wikiref"), "collect", "download", *args]
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, env=env, timeout=120)


@pytest.mark.slow
def test_cli_end_to_end(server, base_params, tmp_path, subprocess_env):
    env = dict(subprocess_env, NO_PROXY="127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(var, None)
    params = make_params(base_params, server.url, Path("resources/enwiki"), parts="all")
    pj = json.dumps(params, sort_keys=True)
    res = _cli(["--params-json", pj, "--index-only"], tmp_path, env)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / layout.dump_status(params)).exists() and (tmp_path / layout.dump_sha1sums(params)).exists()
    assert "3 part(s) in the dump" in res.stdout
    res = _cli(["--params-json", pj], tmp_path, env)  # every part (parts: all)
    assert res.returncode == 0, res.stderr
    for part in PARTS:
        assert (tmp_path / "resources/enwiki" / file_of_part(part)).read_bytes() == FILES[file_of_part(part)]
    # one part to a chosen file, as the Snakemake rule calls it; then a corrupted part: exit 1, named, not kept
    out = tmp_path / "one" / "x.bz2"
    res = _cli(["--params-json", pj, "--part", file_of_part(PARTS[2]), "--out", str(out)], tmp_path, env)
    assert res.returncode == 0, res.stderr
    assert out.read_bytes() == FILES[file_of_part(PARTS[2])]
    name = file_of_part(PARTS[1])
    server.files[name] = FILES[name][::-1]
    bad = tmp_path / "bad" / name
    res = _cli(["--params-json", pj, "--part", PARTS[1], "--out", str(bad)], tmp_path, env)
    assert res.returncode == 1
    assert f"wikiref collect download: part {PARTS[1]}" in res.stderr and sha1(FILES[name]) in res.stderr
    assert "Traceback" not in res.stderr and not bad.exists()
    # a part the dump does not have
    res = _cli(["--params-json", pj, "--part", "enwiki-20190101-nope"], tmp_path, env)
    assert res.returncode == 1 and "not in the articlesdump job" in res.stderr


# --------------------------------------------------------------------------------------- registry and DVC


def test_part_job_reads_everything_of_collect_but_the_download(base_params):
    """A retries/timeout change must not rerun the (hours-long) part jobs; every other collect key must reach them."""

    def keys(d, prefix=""):
        out = set()
        for k, v in d.items():
            out |= keys(v, f"{prefix}{k}.") if isinstance(v, dict) and k != "download" else {prefix + k}
        return out

    got = json.loads(config.job_params(base_params, *job_keys("collect", "part")))
    assert keys(got["collect"]) == keys(base_params["collect"]) - {"dump.download"}
    dl = json.loads(config.job_params(base_params, *job_keys("collect", "download")))
    assert dl["collect"]["dump"]["download"] == base_params["collect"]["dump"]["download"]


def test_registry_with_download(repo, tmp_path):
    paper = config.load_params(repo / "params.yaml", [repo / "config/paper.yaml"])
    st = stage(paper, "collect")
    assert "download" in st.jobs and layout.dump_dir(paper) not in st.deps  # verified by sha1, not hashed by DVC
    assert layout.RAW_PART.format(part=paper["collect"]["dump"]["parts"][0]) in st.targets
    paper["collect"]["dump"]["parts"] = "all"
    st = stage(paper, "collect")
    assert st.targets == (layout.COLLECT_METRICS,)  # the parts are known after the index download
    sample = config.load_params(repo / "params.yaml")
    st = stage(sample, "collect")
    assert "download" not in st.jobs and layout.dump_download(sample) is None


def test_part_job_inputs_are_the_downloads(base_params, tmp_path):
    from wikiref.stages.collect.pipeline import part_inputs
    from wikiref.wiki.index import dump_option

    params = make_params(base_params, "http://127.0.0.1:9", tmp_path / "dump", parts=PARTS[:1])
    params["collect"]["fetch"]["backend"] = "live"
    (tmp_path / "dump").mkdir()
    (tmp_path / "dump" / PARTS[0]).write_bytes(b"a stray file under the bare part name")
    want = str(tmp_path / "dump" / file_of_part(PARTS[0]))
    assert part_inputs(params, PARTS[0]) == [want]
    assert dump_option(params, PARTS[0]) == f"--dump {want}"
    off = copy.deepcopy(params)
    off["collect"]["dump"]["download"]["mirror"] = ""
    assert part_inputs(off, PARTS[0]) == [str(tmp_path / "dump" / PARTS[0])] and dump_option(off, PARTS[0]) == ""


# ------------------------------------------------------------------------------------------ Snakemake plan


def _jobs(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:", 1)[1]
    return {
        m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.M) if m.group(1) != "total"
    }


def _plan(snakemake, repo, work: Path, overlay: dict) -> tuple[dict[str, int], str]:
    (work / "overlay.yaml").write_text(yaml.safe_dump(overlay))
    res = snakemake(
        work,
        "collect_all",  # before --configfile, which takes every file after it
        "-n",
        "-p",
        "--configfile",
        str(repo / "config/paper.yaml"),
        str(work / "overlay.yaml"),
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    return _jobs(res.stdout), res.stdout


@pytest.mark.slow
def test_snakemake_plans_the_download(repo, snakemake, tmp_path):
    # no request is made while planning: the mirror's port is never contacted
    mirror = {"collect": {"dump": {"download": {"mirror": "http://127.0.0.1:9"}}}}
    work = tmp_path / "explicit"
    work.mkdir()
    jobs, out = _plan(
        snakemake, repo, work, mirror | {"collect": {"dump": {**mirror["collect"]["dump"], "parts": PARTS[:2]}}}
    )
    assert jobs == {
        "collect_download_index": 1,
        "collect_download": 2,
        "collect_part": 2,
        "collect_merge": 1,
        "collect_all": 1,
    }
    # each part job reads exactly the file its download job writes
    for part in PARTS[:2]:
        assert f"--part {part} --dump resources/enwiki/{file_of_part(part)} --out" in out

    # parts: all before the index exists: the checkpoint, then the merge waits for it
    work = tmp_path / "all"
    work.mkdir()
    overlay = {"collect": {"dump": {**mirror["collect"]["dump"], "parts": "all"}}}
    jobs, _ = _plan(snakemake, repo, work, overlay)
    assert jobs == {"collect_download_index": 1, "collect_merge": 1, "collect_all": 1}

    # parts: all once the index is there: one download and one part job per part it lists
    params = config.deep_merge(config.load_params(repo / "params.yaml", [repo / "config/paper.yaml"]), overlay)
    for path, data in (
        (layout.dump_status(params), "dumpstatus.json"),
        (layout.dump_sha1sums(params), f"{WIKI}-{DATE}-sha1sums.txt"),
    ):
        (work / path).parent.mkdir(parents=True, exist_ok=True)
        (work / path).write_bytes(index_bytes(FILES)[data])
    jobs, out = _plan(snakemake, repo, work, overlay)
    assert jobs == {"collect_download": 3, "collect_part": 3, "collect_merge": 1, "collect_all": 1}
    assert f"--part {file_of_part(PARTS[2])} --out resources/enwiki/{file_of_part(PARTS[2])}" in out


@pytest.mark.slow
def test_snakemake_runs_the_download_rules(repo, server, tmp_path, subprocess_env):
    """The rules for real against the loopback mirror: the checkpoint, then one download job per part (one of
    them cut mid-body and resumed), each writing the file collect_part then reads."""
    env = dict(subprocess_env, NO_PROXY="127.0.0.1,localhost")
    for var in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        env.pop(var, None)
    dl = {"mirror": server.url, "retries": 1, "backoff_s": 0.0, "timeout_s": 5, "chunk_bytes": 4096}
    work = tmp_path / "run"
    work.mkdir()
    (work / "overlay.yaml").write_text(yaml.safe_dump({"collect": {"dump": {"download": dl, "parts": PARTS[:2]}}}))
    server.drop_after[file_of_part(PARTS[1])] = 10_000
    targets = [f"resources/enwiki/{file_of_part(p)}" for p in PARTS[:2]]
    cmd = [str(Path(sys.executable).parent / "snakemake"), "-s", str(repo / "Snakefile"), "--directory", str(work)]
    cmd += [*targets, "--cores", "1", "--configfile", str(repo / "config/paper.yaml"), str(work / "overlay.yaml")]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    for target in targets:
        assert (work / target).read_bytes() == FILES[Path(target).name]
        assert "sha1 ok" in (work / f"logs/collect/download/{Path(target).name}.log").read_text()
    assert (work / f"resources/enwiki/{WIKI}-{DATE}-dumpstatus.json").read_bytes() == server.index["dumpstatus.json"]
    assert [code for _, code in server.requests_for(file_of_part(PARTS[1]))] == [200, 206]
