"""`wikiref collect part|merge` end to end: outputs, accounting, determinism, and kill-at-any-moment resume."""

from __future__ import annotations

import bz2
import json
import os
import random
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from wikiref.schemas import RAW
from wikiref.stages.collect.pipeline import CollectError, merge, merge_stats, run_part
from wikiref.stages.sample import build_standins, locate_gensim_dump
from wikiref.standin import write_standin_warc
from wikiref.wiki.dump import iter_pages
from wikiref.wiki.statements import StatementConfig, parse_article

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
PART = "enwiki-small"
N_PAGES = 6


def _page_xml(page) -> str:
    esc = page.text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    title = page.title.replace("&", "&amp;").replace("<", "&lt;")
    return (
        f"<page><title>{title}</title><ns>0</ns><id>{page.page_id}</id><revision><id>{page.revision_id}</id>"
        f"<timestamp>{page.timestamp}</timestamp><model>wikitext</model><format>text/x-wiki</format>"
        f'<text xml:space="preserve">{esc}</text></revision></page>\n'
    )


@pytest.fixture(scope="module")
def small_sample(tmp_path_factory):
    """A small dump of REAL articles (the smallest ones of the gensim fragment that cite several web
    pages, in dump order) + a stand-in WARC for their URLs, so each collect run takes seconds."""
    root = tmp_path_factory.mktemp("sample")
    pages = [
        p for p in iter_pages(locate_gensim_dump()) if len(p.text) < 40_000 and p.text.lower().count("{{cite web") >= 5
    ]
    pages = sorted(sorted(pages, key=lambda p: len(p.text))[: N_PAGES + 2], key=lambda p: p.page_id)
    xml = (
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10"><siteinfo><sitename>W'
        '</sitename><namespaces><namespace key="0" case="first-letter" /></namespaces></siteinfo>\n'
        + "".join(_page_xml(p) for p in pages)
        + "</mediawiki>\n"
    )
    (root / "dump").mkdir()
    (root / "dump" / f"{PART}.xml.bz2").write_bytes(bz2.compress(xml.encode("utf-8")))
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    cfg = StatementConfig.from_params(params["collect"])
    arts = [(p.page_id, parse_article(p.title, p.text, cfg)) for p in pages[:N_PAGES]]
    write_standin_warc(build_standins(arts, 400), root / "standin.warc.gz", "test")
    return root


def collect_params(sample_root: Path, tmp: Path) -> dict:
    c = yaml.safe_load((REPO / "params.yaml").read_text())["collect"]
    c["dump"].update(dir=str(sample_root / "dump"), parts=[PART], max_pages=N_PAGES)
    c["fetch"].update(warc_paths=[str(sample_root / "standin.warc.gz")], cache_dir=str(tmp / "cache"))
    c["resume"].update(pages_per_chunk=2, urls_per_batch=10)
    return c


def outputs(out_dir: Path, part: str = PART) -> dict:
    return {"raw": out_dir / f"{part}.parquet", "stats": out_dir / f"{part}.stats.json"}


def run(c, out_dir: Path):
    return run_part({"collect": c}, {}, outputs(out_dir), part=PART)


def part_args(c, *more: str) -> list[str]:
    """`wikiref collect part` arguments for PART under the collect section ``c``, then ``more``."""
    return ["collect", "part", "--params-json", json.dumps({"collect": c}), "--part", PART, *more]


def merge_args(c, stats: Path, out: Path) -> list[str]:
    """`wikiref collect merge` arguments: one part's stats file merged into ``out``."""
    return ["collect", "merge", "--params-json", json.dumps({"collect": c}), "--stats", str(stats), "--out", str(out)]


@pytest.fixture(scope="module")
def reference(small_sample, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ref")
    c = collect_params(small_sample, tmp)
    stats = run(c, tmp / "out")
    return c, stats, (tmp / "out" / f"{PART}.parquet").read_bytes(), (tmp / "out" / f"{PART}.stats.json").read_bytes()


def test_output_schema_rows_and_accounting(reference):
    c, stats, raw, _ = reference
    import io

    table = pq.read_table(io.BytesIO(raw))
    assert table.schema.equals(RAW)
    rows = table.to_pylist()
    assert stats["dump"]["articles"] == N_PAGES
    assert stats["dump"]["pages_skipped"]["max_pages"] > 0
    assert len(rows) == stats["examples"]["written"] > 20
    ids = [r["id"] for r in rows]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    for r in rows:
        assert r["query"][0] == r["article"] and r["statement"] and r["doc_text"]
        assert r["citation_type"] in ("cite web", "cite news", "cite press release")
        assert r["doc_standin"] is True and r["fetch_source"] == "warc" and r["part"] == PART
    s = stats["statements"]
    assert s["total"] == s["kept"] + sum(s["dropped"].values())
    assert stats["examples"]["candidates"] == stats["examples"]["written"] + sum(stats["examples"]["dropped"].values())
    assert stats["urls"]["unique"] < s["kept"]  # URLs cited several times are fetched once


def test_same_params_same_bytes(reference, small_sample, tmp_path):
    c, _, raw, st = reference
    run(collect_params(small_sample, tmp_path), tmp_path / "out")
    assert (tmp_path / "out" / f"{PART}.parquet").read_bytes() == raw
    assert (tmp_path / "out" / f"{PART}.stats.json").read_bytes() == st
    assert not (tmp_path / "out" / f".{PART}.work").exists()


def test_parse_workers_give_the_same_bytes(reference, small_sample, tmp_path):
    _, _, raw, st = reference
    c = collect_params(small_sample, tmp_path)
    c["dump"]["parse_workers"] = 2
    run(c, tmp_path / "out")
    assert (tmp_path / "out" / f"{PART}.parquet").read_bytes() == raw
    assert (tmp_path / "out" / f"{PART}.stats.json").read_bytes() == st


def test_stale_work_folder_is_discarded(reference, small_sample, tmp_path):
    _, _, raw, _ = reference
    out = tmp_path / "out"
    other = collect_params(small_sample, tmp_path)
    other["statements"]["min_statement_chars"] = 400
    run_part(
        {"collect": other},
        {},
        {"raw": out / "x.parquet", "stats": out / "x.stats.json"},
        part=PART,
        work_dir=out / f".{PART}.work",
        keep_work=True,
    )
    assert (out / f".{PART}.work").exists()
    run(collect_params(small_sample, tmp_path), out)  # different params: the old checkpoints must not leak in
    assert (out / f"{PART}.parquet").read_bytes() == raw


def _cli(c, out: Path, env_extra=None, **popen):
    env = dict(os.environ)
    env.pop("WIKIREF_COLLECT_KILL_AFTER", None)
    env.update(env_extra or {})
    files = outputs(out)
    cmd = [sys.executable, "-m", "wikiref", *part_args(c, "--out", str(files["raw"]), "--stats", str(files["stats"]))]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **popen)


def test_kill_at_chosen_moments_then_resume_is_byte_identical(reference, small_sample, tmp_path):
    """SIGKILL inside every phase, one run after the other, then a clean run: same bytes.

    Checkpoint events of a run from scratch: per chunk 2 articles + its json + its parquet
    (3 chunks: 12 events), then one per URL and one per batch of 10, then the output, then the stats.
    A resumed run skips finished chunks/batches (they make no events), so the kill points below land:
    run 1 after article 2 (nothing written), run 2 between chunk 0's json and parquet, run 3 after
    chunk 0 with chunk 1 half parsed, run 4 in the middle of fetch batch 0, run 5 between the output
    Parquet and the stats file.
    """
    c, stats, raw, st = reference
    urls = stats["urls"]["unique"]
    batches = -(-urls // 10)
    assert stats["dump"]["articles"] == 6 and urls > 10
    out = tmp_path / "out"
    c = collect_params(small_sample, tmp_path)
    for n in (2, 3, 6, 12, urls + batches + 1):
        proc = _cli(c, out, {"WIKIREF_COLLECT_KILL_AFTER": str(n)})
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == -signal.SIGKILL, (n, err.decode()[-2000:])
    assert (out / f"{PART}.parquet").exists() and not (out / f"{PART}.stats.json").exists()
    assert (out / f".{PART}.work").is_dir()
    proc = _cli(c, out)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert (out / f"{PART}.parquet").read_bytes() == raw
    assert (out / f"{PART}.stats.json").read_bytes() == st
    assert not (out / f".{PART}.work").exists()


def test_external_sigkill_at_a_random_time_then_resume(reference, small_sample, tmp_path):
    c, _, raw, st = reference
    out = tmp_path / "out"
    rng = random.Random(1234)
    c = collect_params(small_sample, tmp_path)
    for _ in range(1):
        proc = _cli(c, out)
        time.sleep(rng.uniform(1.0, 3.0))
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=300)
    proc = _cli(c, out)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert (out / f"{PART}.parquet").read_bytes() == raw
    assert (out / f"{PART}.stats.json").read_bytes() == st


def test_collect_merge_cli(reference, tmp_path):
    from wikiref.cli import main

    c, stats, _, st = reference
    (tmp_path / "a.stats.json").write_bytes(st)
    out = tmp_path / "collect.json"
    assert main(merge_args(c, tmp_path / "a.stats.json", out)) == 0
    merged = json.loads(out.read_text())
    assert merged["total"]["examples"]["written"] == stats["examples"]["written"]
    assert merged["parts"] == [PART] and merged["per_part"][PART]["articles"] == N_PAGES
    two = merge_stats([stats, dict(stats, part="other")])
    assert two["total"]["statements"]["total"] == 2 * stats["statements"]["total"]
    assert two["total"]["statements"]["dropped"] == {k: 2 * v for k, v in stats["statements"]["dropped"].items()}


def test_merge_checks_the_parts_and_the_books(reference, tmp_path, capsys):
    from wikiref.cli import main

    c, stats, _, st = reference
    (tmp_path / "a.stats.json").write_bytes(st)
    other = dict(stats, part="other")
    (tmp_path / "b.stats.json").write_text(json.dumps(other))

    def merge_both(collect: dict, metrics: str) -> dict:
        """merge() of parts a and b into ``metrics`` under the collect section ``collect``."""
        both = [tmp_path / "a.stats.json", tmp_path / "b.stats.json"]
        return merge({"collect": collect}, {"stats": both}, {"metrics": tmp_path / metrics})

    # stats of a part that collect.dump.parts does not list: a clear error, no output
    with pytest.raises(CollectError, match="collect.dump.parts"):
        merge_both(c, "m.json")
    rc = main(merge_args(c, tmp_path / "b.stats.json", tmp_path / "m.json"))
    assert rc == 1 and "wikiref collect merge:" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()
    # both parts listed: summed
    two = json.loads(json.dumps(c))
    two["dump"]["parts"] = [PART, "other"]
    merged = merge_both(two, "m.json")
    assert json.loads((tmp_path / "m.json").read_text()) == merged
    assert merged["total"]["examples"]["written"] == 2 * stats["examples"]["written"]
    # books that do not balance are not merged
    broken = dict(other, examples=dict(other["examples"], written=other["examples"]["written"] + 1))
    (tmp_path / "b.stats.json").write_text(json.dumps(broken))
    with pytest.raises(RuntimeError, match="do not balance"):
        merge_both(two, "m2.json")


def test_cli_part_writes_the_layout_paths_by_default(reference, small_sample, tmp_path, monkeypatch):
    from wikiref import layout
    from wikiref.cli import main

    c, _, raw, st = reference
    monkeypatch.chdir(tmp_path)
    assert main(part_args(c, "--dump", str(small_sample / "dump" / f"{PART}.xml.bz2"))) == 0
    assert Path(layout.RAW_PART.format(part=PART)).read_bytes() == raw
    assert Path(layout.RAW_PART_STATS.format(part=PART)).read_bytes() == st


def test_missing_dump_part_is_a_clear_error(reference, tmp_path, capsys):
    from wikiref.cli import main

    c = json.loads(json.dumps(reference[0]))
    c["dump"]["dir"] = str(tmp_path)
    rc = main(part_args(c, "--out", str(tmp_path / "o.parquet"), "--stats", str(tmp_path / "o.json")))
    assert rc == 1 and not (tmp_path / "o.parquet").exists()
    assert f"dump part {PART!r} not found" in capsys.readouterr().err


# --- the live backend end to end, on a loopback server ---------------------------------------

PAGES = {
    "/good": b"<html><head><title>Good page</title></head><body><article>"
    + b"".join(
        b"<p>In %d the harbour was rebuilt after the storm destroyed the old piers and the warehouses "
        b"along the river front, and trade returned within a few years.</p>" % (1921 + i)
        for i in range(4)
    )
    + b"</article></body></html>",
    "/short": b"<html><body><article><p>Too short.</p></article></body></html>",
}


class _H(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        self.server.hits[self.path] = self.server.hits.get(self.path, 0) + 1
        body = PAGES.get(self.path)
        if self.path == "/robots.txt":
            body, status = b"User-agent: *\nDisallow: /secret\n", 200
        else:
            status = 200 if body else 404
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body or b"")))
        self.end_headers()
        self.wfile.write(body or b"")


def test_live_backend_end_to_end(loopback_server, one_page_dump, tmp_path):
    srv = loopback_server(_H, hits={})
    base = f"http://127.0.0.1:{srv.server_port}"
    wikitext = (
        f"The harbour was rebuilt.<ref>{{{{cite web|url={base}/good|title=G}}}}</ref> "
        f"Cited again here.<ref>{{{{cite news|url={base}/good|title=G}}}}</ref>\n\n"
        f"Short source.<ref>{{{{cite web|url={base}/short}}}}</ref>\n\n"
        f"Gone source.<ref>{{{{cite web|url={base}/gone}}}}</ref>\n\n"
        f"Secret source.<ref>{{{{cite web|url={base}/secret}}}}</ref>\n"
    )
    c = one_page_dump(wikitext, backend="live")
    for _ in range(2):
        stats = run_part({"collect": c}, {}, outputs(tmp_path / "out", "p1"), part="p1")
    rows = pq.read_table(tmp_path / "out" / "p1.parquet").to_pylist()
    assert [(r["statement"], r["citation_type"]) for r in rows] in (
        [("The harbour was rebuilt.", "cite web"), ("Cited again here.", "cite news")],
        [("Cited again here.", "cite news"), ("The harbour was rebuilt.", "cite web")],
    )
    assert rows[0]["doc_title"] == "Good page" and rows[0]["fetch_source"] == "live" and not rows[0]["doc_standin"]
    assert stats["examples"]["dropped"] == {"extract:too_short": 1, "fetch:http_404": 1, "fetch:robots_disallowed": 1}
    assert srv.hits["/good"] == 1 and srv.hits["/gone"] == 1  # once across two runs: the cache
    assert "/secret" not in srv.hits
