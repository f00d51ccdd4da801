"""External inputs (params section resources, wikiref.stages.resources): downloads from a loopback server,
checksums, unpacking, unsafe archives, manual entries, params checks and the paper profile's dry run."""

from __future__ import annotations

import copy
import gzip
import hashlib
import io
import json
import logging
import re
import tarfile
import threading
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from wikiref import config
from wikiref.stages import resources as R

UA = {"collect": {"fetch": {"user_agent": "wikiref-test"}}}


@pytest.fixture
def server():
    """A loopback HTTP server: ``files`` (URL path -> bytes), 404 for anything else; ``base`` its URL."""
    files: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802
            body = files.get(self.path)
            if body is None:
                self.send_response(404)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    httpd.files = files
    httpd.base = f"http://127.0.0.1:{httpd.server_address[1]}"
    try:
        yield httpd
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


def sha1(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def get(key: str, entry: dict, out: Path) -> dict:
    return R.get({"resources": {key: entry}, **UA}, key, out)


def tar_gz(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for name, data in members.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(zipfile.ZipInfo(name), data)
    return buf.getvalue()


# ------------------------------------------------------------------------------------------ downloads


@pytest.mark.parametrize("pin", ["sha1", "sha1sums_url"])
def test_download_verified(server, tmp_path, pin):
    data = b"line one\nline two\n" * 1000
    server.files["/d/train.jsonl"] = data
    server.files["/d/sha1sums.txt"] = f"{sha1(b'other')}  other.jsonl\n{sha1(data)}  train.jsonl\n".encode()
    entry = {"url": f"{server.base}/d/train.jsonl"}
    entry |= {"sha1": sha1(data)} if pin == "sha1" else {"sha1sums_url": f"{server.base}/d/sha1sums.txt"}
    out = tmp_path / "qmsum" / "train.jsonl"
    m = get("qmsum.files.train", entry, out)["qmsum.files.train"]
    assert out.read_bytes() == data
    assert m["sha1"] == sha1(data) and m["pinned"] is True and m["bytes"] == len(data)
    assert json.loads(Path(f"{out}.source.json").read_text())["url"] == entry["url"]
    assert sorted(p.name for p in out.parent.iterdir()) == ["train.jsonl", "train.jsonl.source.json"]


@pytest.mark.parametrize("pin", ["sha1", "sha1sums_url"])
def test_sha1_mismatch_keeps_nothing(server, tmp_path, pin):
    server.files["/d/train.jsonl"] = b"tampered"
    server.files["/d/sha1sums.txt"] = f"{sha1(b'genuine')}  train.jsonl\n".encode()
    entry = {"url": f"{server.base}/d/train.jsonl"}
    entry |= {"sha1": sha1(b"genuine")} if pin == "sha1" else {"sha1sums_url": f"{server.base}/d/sha1sums.txt"}
    out = tmp_path / "q" / "train.jsonl"
    with pytest.raises(R.ResourceError, match="sha1 mismatch"):
        get("qmsum.files.train", entry, out)
    assert list(out.parent.iterdir()) == []


def test_checksum_file_without_the_file_is_an_error(server, tmp_path):
    server.files["/d/x.bin"] = b"x"
    server.files["/d/sha1sums.txt"] = f"{sha1(b'x')}  y.bin\n".encode()
    entry = {"url": f"{server.base}/d/x.bin", "sha1sums_url": f"{server.base}/d/sha1sums.txt"}
    with pytest.raises(R.ResourceError, match="lists no x.bin"):
        get("qmsum.files.train", entry, tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists()


def test_unpinned_download_records_its_sha1_and_warns(server, tmp_path, caplog):
    data = b'{"query": 1}\n'
    server.files["/val.jsonl"] = data
    out = tmp_path / "val.jsonl"
    with caplog.at_level(logging.WARNING, logger="wikiref.stages.resources"):
        get("qmsum.files.dev", {"url": f"{server.base}/val.jsonl", "sha1": None}, out)
    assert out.read_bytes() == data
    manifest = json.loads(Path(f"{out}.source.json").read_text())
    assert manifest["sha1"] == sha1(data) and manifest["pinned"] is False and manifest["bytes"] == len(data)
    assert re.match(r"\d{4}-\d\d-\d\dT", manifest["date"])
    assert any("UNPINNED" in r.getMessage() and sha1(data) in r.getMessage() for r in caplog.records)


def test_http_error_is_clear(server, tmp_path):
    with pytest.raises(
        R.ResourceError, match="qmsum.files.dev: v.jsonl: HTTP 404 Not Found at .*/missing.jsonl"
    ) as err:
        get("qmsum.files.dev", {"url": f"{server.base}/missing.jsonl"}, tmp_path / "v.jsonl")
    assert "dump" not in str(err.value) and "part" not in str(err.value)  # the dump downloader's wording is not used
    assert not (tmp_path / "v.jsonl").exists()


def test_a_complete_archive_left_by_a_killed_job_is_unpacked_without_downloading(server, tmp_path):
    archive = tar_gz({"a.txt": b"A"})
    (tmp_path / ".d.a.tgz").write_bytes(archive)  # downloaded, then killed before unpacking
    get("duc.root", {"url": f"{server.base}/a.tgz", "sha1": sha1(archive), "unpack": "tgz"}, tmp_path / "d")
    assert (tmp_path / "d" / "a.txt").read_bytes() == b"A"  # the server has no /a.tgz: it was not asked
    # a leftover with another sha1 is downloaded again
    (tmp_path / ".e.a.tgz").write_bytes(b"stale")
    server.files["/a.tgz"] = archive
    get("duc.root", {"url": f"{server.base}/a.tgz", "sha1": sha1(archive), "unpack": "tgz"}, tmp_path / "e")
    assert (tmp_path / "e" / "a.txt").read_bytes() == b"A" and not (tmp_path / ".e.a.tgz").exists()


# ------------------------------------------------------------------------------------------ unpacking


def test_gz_is_gunzipped(server, tmp_path):
    data = b"plain text\n" * 50
    server.files["/f.json.gz"] = gzip.compress(data)
    out = tmp_path / "f.json"
    get("qmsum.files.train", {"url": f"{server.base}/f.json.gz", "unpack": "gz"}, out)
    assert out.read_bytes() == data
    assert sorted(p.name for p in tmp_path.iterdir()) == ["f.json", "f.json.source.json"]  # download removed


def test_tar_gz_member_folder(server, tmp_path):
    members = {"cnn/stories/a.story": b"A", "cnn/stories/b.story": b"B", "cnn/other.txt": b"no", "readme": b"r"}
    archive = tar_gz(members)
    server.files["/cnn_stories.tgz"] = archive
    out = tmp_path / "cnndm" / "stories"
    entry = {"url": f"{server.base}/cnn_stories.tgz", "sha1": sha1(archive), "unpack": "tgz", "member": "cnn/stories"}
    get("qmdscnn.stories_dir", {**entry, "directory": True}, out)
    assert sorted(p.name for p in out.iterdir()) == ["a.story", "b.story"]
    assert (out / "a.story").read_bytes() == b"A"
    assert sorted(p.name for p in out.parent.iterdir()) == ["stories", "stories.source.json"]  # no temp left


def test_tar_gz_whole_archive_is_a_folder(server, tmp_path):
    server.files["/all.tar.gz"] = tar_gz({"x/1.txt": b"1", "2.txt": b"2"})
    out = tmp_path / "all"
    get("duc.root", {"url": f"{server.base}/all.tar.gz", "unpack": "tar.gz"}, out)
    assert (out / "x" / "1.txt").read_bytes() == b"1" and (out / "2.txt").read_bytes() == b"2"


def test_zip_member_file(server, tmp_path):
    server.files["/q.zip"] = zip_bytes({"QMSum/data/train.jsonl": b"T", "QMSum/data/val.jsonl": b"V"})
    out = tmp_path / "train.jsonl"
    get("qmsum.files.train", {"url": f"{server.base}/q.zip", "unpack": "zip", "member": "QMSum/data/train.jsonl"}, out)
    assert out.read_bytes() == b"T"


def test_member_not_in_archive(server, tmp_path):
    server.files["/q.zip"] = zip_bytes({"a.txt": b"a"})
    with pytest.raises(R.ResourceError, match="no member 'b.txt'"):
        get("qmsum.files.train", {"url": f"{server.base}/q.zip", "unpack": "zip", "member": "b.txt"}, tmp_path / "b")
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("kind", ["tar.gz", "zip"])
@pytest.mark.parametrize("evil", ["../x", "/abs/x", "ok/../../x"])
def test_malicious_members_refused(server, tmp_path, kind, evil):
    work = tmp_path / "work"
    work.mkdir()
    members = {"fine.txt": b"fine", evil: b"evil"}
    server.files["/evil"] = tar_gz(members) if kind == "tar.gz" else zip_bytes(members)
    out = work / "sub" / "data"
    with pytest.raises(R.ResourceError, match="absolute path or leaves the folder"):
        get("duc.root", {"url": f"{server.base}/evil", "unpack": kind}, out)
    assert not out.exists()
    assert not (tmp_path / "x").exists() and not (work / "x").exists() and not Path("/abs/x").exists()
    assert not any(p.name in ("fine.txt", "x") for p in tmp_path.rglob("*"))  # nothing extracted at all


def test_tar_links_refused(server, tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, "/etc/passwd"
        tf.addfile(link)
    server.files["/l.tgz"] = buf.getvalue()
    with pytest.raises(R.ResourceError, match="link or special file"):
        get("duc.root", {"url": f"{server.base}/l.tgz", "unpack": "tgz"}, tmp_path / "d")
    assert not (tmp_path / "d").exists()


def test_files_entry_makes_a_folder(server, tmp_path):
    server.files["/train_v2.1.json.gz"] = b"train"
    server.files["/dev_v2.1.json.gz"] = b"dev"
    entry = {"files": {n: {"url": f"{server.base}/{n}"} for n in ("train_v2.1.json.gz", "dev_v2.1.json.gz")}}
    out = tmp_path / "msmarco"
    get("qmdsir.dir", entry, out)
    assert (out / "train_v2.1.json.gz").read_bytes() == b"train" and (out / "dev_v2.1.json.gz").read_bytes() == b"dev"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["msmarco"]  # the staging folder was renamed


# ------------------------------------------------------------------------------------------ manual + CLI


def test_manual_exits_1_with_its_instructions(tmp_path, capsys):
    from wikiref.cli import main

    params = {"resources": {"duc.root": {"manual": "apply to NIST\nput it in resources/duc/<year>"}}, **UA}
    code = main(
        ["resources", "get", "--params-json", json.dumps(params), "--key", "duc.root", "--out", str(tmp_path / "d")]
    )
    err = capsys.readouterr().err
    assert code == 1
    assert "duc.root" in err and "apply to NIST" in err and "put it in resources/duc/<year>" in err
    assert not (tmp_path / "d").exists()


# ------------------------------------------------------------------------------------------ params


@pytest.fixture(scope="module")
def paper(repo):
    return config.load_params(repo / "params.yaml", [repo / "config/paper.yaml"])


def test_paper_entries_name_the_consumers_paths(paper):
    got = {k: (r.path, r.directory) for k, r in R.resources(paper).items()}
    assert got == {
        "qmsum.files.train": (paper["qmsum"]["files"]["train"], False),
        "qmsum.files.dev": (paper["qmsum"]["files"]["dev"], False),
        "qmsum.files.test": (paper["qmsum"]["files"]["test"], False),
        "qmdsir.dir": (paper["qmdsir"]["dir"], True),
        "wcep.portal.dump_paths.0": (paper["wcep"]["portal"]["dump_paths"][0], False),
        "psg2sum.dump.parts.0": (
            f"{paper['psg2sum']['dump']['dir']}/{paper['psg2sum']['dump']['parts'][0]}.xml.bz2",
            False,
        ),
        "wcep.ccnews.paths.0": (paper["wcep"]["ccnews"]["paths"][0], True),
        "qmdscnn.stories_dir": (paper["qmdscnn"]["stories_dir"], True),
        "duc.root": (paper["duc"]["root"], True),
    }
    # the MS MARCO files downloaded are the ones qmdsir reads
    assert set(paper["resources"]["qmdsir.dir"]["files"]) == {
        f for files in paper["qmdsir"]["files"].values() for f in files
    }


@pytest.mark.parametrize("name", ["params.yaml", "config/tiny.yaml"])
def test_offline_profiles_have_no_resources(repo, name):
    params = config.load_params(repo / "params.yaml", [] if name == "params.yaml" else [repo / name])
    assert params["resources"] == {} and R.resources(params) == {}


@pytest.mark.parametrize(
    ("key", "entry", "message"),
    [
        ("qmsum.files.trian", {"url": "https://x/y"}, "no 'trian' in qmsum.files"),
        ("wcep.ccnews.paths.5", {"manual": "m"}, "no '5' in wcep.ccnews.paths"),
        ("seed", {"manual": "m"}, "is not a path"),
        ("qmdsir.files", {"manual": "m"}, "is not a path"),
        ("qmsum.files.train", {"url": "https://x/y", "unpack": "tgz", "directory": False}, "whole archive makes"),
        ("qmsum.files.train", {"url": "https://x/y", "member": "a"}, "member 'a' needs unpack"),
        ("qmsum.files.train", {"url": "https://x/y", "unpack": "zip", "member": "../a"}, "leaves the folder"),
        ("duc.root", {"url": "https://x/y", "directory": True}, "makes one file"),
    ],
)
def test_bad_entries_are_clear_errors(paper, key, entry, message):
    params = copy.deepcopy(paper)
    params["resources"] = {key: entry}
    with pytest.raises((config.ParamsError, R.ResourceError), match=re.escape(message)):
        R.resources(params)


def test_schema_checks_the_section(paper):
    params = copy.deepcopy(paper)
    params["resources"] = {"qmsum.files.train": {"url": "https://x/y", "sha1": "not-a-sha1"}}
    with pytest.raises(config.ParamsError, match="resources"):
        config.validate(params)
    params["resources"] = {"qmsum.files.train": {"url": "https://x/y", "manual": "both"}}
    with pytest.raises(config.ParamsError, match="resources"):
        config.validate(params)


def test_job_params_hold_only_its_entry(paper):
    got = json.loads(R.job_params_json(paper, paper["qmsum"]["files"]["dev"]))
    assert got == {
        "resources": {"qmsum.files.dev": paper["resources"]["qmsum.files.dev"]},
        "collect": {"fetch": {"user_agent": paper["collect"]["fetch"]["user_agent"]}},
    }


# ------------------------------------------------------------------------------------------ the workflow


def _jobs(stdout: str) -> dict[str, int]:
    table = stdout.split("Job stats:", 1)[1].split("\n\n", 1)[0]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", table, flags=re.M)}


@pytest.mark.slow
def test_paper_profile_plans_from_an_empty_directory(repo, snakemake, tmp_path, paper):
    """Issue #18: `snakemake -n --configfile config/paper.yaml` in an empty directory plans the whole workflow."""
    res = snakemake(tmp_path, "-n", "-p", "--configfile", str(repo / "config/paper.yaml"), timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    jobs = _jobs(res.stdout)
    entries = R.resources(paper)
    assert jobs["resources_file"] == sum(not r.directory for r in entries.values()) == 5
    assert jobs["resources_dir"] == sum(r.directory for r in entries.values()) == 4
    for rule in ("collect_download_index", "report", "duc_prepare", "qmsum_prepare", "psg2sum_part", "wcep_events"):
        assert jobs.get(rule) == 1, rule
    assert jobs["qmdscnn_articles"] == paper["qmdscnn"]["shards"] and jobs["qmdsir_part"] == paper["qmdsir"]["shards"]
    for r in entries.values():
        assert f"--key {r.key} --out {r.path} " in res.stdout, r.key
    assert not list(tmp_path.iterdir()) or all(p.name == ".snakemake" for p in tmp_path.iterdir())


@pytest.mark.slow
def test_a_bad_entry_stops_snakemake_at_load_time(repo, snakemake, tmp_path):
    import yaml

    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(yaml.safe_dump({"resources": {"qmsum.files.trian": {"manual": "x"}}}))
    res = snakemake(tmp_path, "-n", "--configfile", str(repo / "config/paper.yaml"), str(overlay), timeout=300)
    assert res.returncode != 0
    assert "no 'trian' in qmsum.files" in res.stdout + res.stderr


@pytest.mark.slow
def test_snakemake_runs_the_resource_jobs(repo, snakemake, server, tmp_path, paper):
    """The rules for real: a url entry downloads to the consumer's path; a manual entry fails with its
    instructions in the job's log, and never runs once the data is in place."""
    import yaml

    data = b'{"topic_list": []}\n'
    server.files["/train.jsonl"] = data
    overlay = tmp_path / "overlay.yaml"
    overlay.write_text(
        yaml.safe_dump({"resources": {"qmsum.files.train": {"url": f"{server.base}/train.jsonl", "sha1": sha1(data)}}})
    )
    work = tmp_path / "work"
    work.mkdir()
    train, duc = paper["qmsum"]["files"]["train"], paper["duc"]["root"]
    args = ("--cores", "1", "--configfile", str(repo / "config/paper.yaml"), str(overlay))
    res = snakemake(work, train, *args, timeout=300)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    assert (work / train).read_bytes() == data and json.loads(Path(f"{work / train}.source.json").read_text())["pinned"]

    res = snakemake(work, duc, *args, timeout=300)
    assert res.returncode != 0 and not (work / duc).exists()
    log = next((work / "logs").rglob("duc.log")).read_text()
    assert "duc.root" in log and "https://duc.nist.gov/data.html" in log

    (work / duc / "2005").mkdir(parents=True)  # the user put the data there
    res = snakemake(work, duc, *args, "-n", timeout=300)
    assert res.returncode == 0 and "Nothing to be done" in res.stdout + res.stderr
