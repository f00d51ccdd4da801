"""bench/collect.py (fast vs reference extraction, rows compared) and bench/collect_estimate.py (paper-scale
arithmetic) on a 12-article cut of the sample dump; nothing is timed or compared with a speed."""

from __future__ import annotations

import bz2
import json
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def small_dump(tmp_path_factory) -> Path:
    """The sample's dump up to its 12th article (redirects in between kept), as a valid .xml.bz2 part."""
    from wikiref.stages.sample import locate_gensim_dump

    with bz2.open(locate_gensim_dump()) as fh:
        xml = fh.read()
    cut = articles = 0
    while articles < 12:
        start, cut = cut, xml.index(b"</page>", cut) + len(b"</page>")
        articles += b"<redirect" not in xml[start:cut]
    path = tmp_path_factory.mktemp("dump") / "small.xml.bz2"
    path.write_bytes(bz2.compress(xml[:cut] + b"\n</mediawiki>\n"))
    return path


def _run(module, argv, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [module.__file__, *argv])
    code = module.main()
    out = capsys.readouterr()
    return code, [json.loads(x) for x in out.out.splitlines() if x.startswith("{")], out.err


def test_collect_bench_compares_the_two_paths(load_bench, small_dump, capsys, monkeypatch):
    bench = load_bench("collect")
    code, lines, _ = _run(bench, ["--dump", str(small_dump), "--repeat", "1"], capsys, monkeypatch)
    assert code == 0
    by = {x["bench"]: x for x in lines}
    assert set(by) >= {"bz2_decompress", "dump_read", "collect_parse_reference", "collect_parse", "summary"}
    assert by["collect_parse"]["articles"] == by["collect_parse_reference"]["articles"] == 12
    assert by["collect_parse"]["rows"] == by["collect_parse_reference"]["rows"] > 0
    s = by["summary"]
    assert s["differing_rows"] == 0 and s["differing_counters"] == 0
    # the headline is the median of the paired ratios (bz2 timed right before each extraction); the ratio of
    # the fastest runs is printed beside it (printed CPU seconds are rounded to ms: it agrees up to that)
    assert (
        s["parse_vs_bz2"]
        == s["parse_vs_bz2_paired"][0]
        == pytest.approx(by["collect_parse"]["vs_bz2_paired"][0], abs=0.05)
    )
    assert s["parse_vs_bz2_of_minimums"] == pytest.approx(
        by["collect_parse"]["cpu_s"] / by["bz2_decompress"]["cpu_s"], abs=0.3
    )
    assert s["target_met"] == (s["parse_vs_bz2"] <= s["target"])


def test_collect_bench_fails_when_the_fast_path_differs(load_bench, small_dump, capsys, monkeypatch):
    from wikiref.wiki import statements

    real = statements.parse_article

    def lossy(title, text, cfg, stats=None, method="tokens", statements_only=False):
        article = real(title, text, cfg, stats, method=method, statements_only=statements_only)
        if method == "tokens" and article.statements:
            article.statements[-1].text += " (changed)"
        return article

    monkeypatch.setattr(statements, "parse_article", lossy)
    bench = load_bench("collect")
    code, lines, err = _run(bench, ["--dump", str(small_dump), "--repeat", "1"], capsys, monkeypatch)
    assert code == 1
    assert lines[-1]["differing_rows"] > 0
    assert "DIFFERENT: 'Alabama': 1 row(s)" in err


def test_estimate_arithmetic_and_real_part_sizes(load_bench, small_dump, tmp_path, capsys, monkeypatch):
    bench = load_bench("collect_estimate")
    argv = ["--dump", str(small_dump), "--repeat", "1", "--pool-workers", "1", "--no-fetch-bench"]
    code, lines, _ = _run(bench, [*argv, "--cores", "16", "--jobs", "4"], capsys, monkeypatch)
    assert code == 0
    measured, e = lines
    assert measured["bench"] == "measured" and e["bench"] == "estimate"
    assert e["compressed_gb_assumed"] is True and e["parts"] == 27 and e["cores_per_job"] == 4
    cpu_per_mb = measured["collect_parse_cpu_s"] / measured["xml_mb"]
    xml_mb = 16.0 * 1e3 * measured["xml_mb"] / measured["compressed_mb"]
    assert e["parse_cpu_hours"] == pytest.approx(xml_mb * cpu_per_mb / 3600, abs=0.06)
    assert e["fetch_wall_hours"] == max(e["fetch_wall_hours_by_threads"], e["fetch_wall_hours_by_busiest_host"])
    # 27 parts over 4 jobs: 7 rounds of one part on 4 cores
    part_h = e["parse_cpu_hours"] / 27 / 4
    assert e["parse_wall_hours"] == pytest.approx(7 * part_h, rel=0.05, abs=0.01)

    status = {
        "jobs": {
            "articlesdump": {
                "status": "done",
                "files": {
                    f"enwiki-20190101-pages-articles{i}.xml-p{i}p{i + 9}.bz2": {"size": 2_000_000_000, "sha1": "0" * 40}
                    for i in (1, 2, 3)
                },
            }
        }
    }
    path = tmp_path / "dumpstatus.json"
    path.write_text(json.dumps(status))
    code, lines, _ = _run(bench, [*argv, "--dumpstatus", str(path)], capsys, monkeypatch)
    e = lines[-1]
    assert code == 0 and e["compressed_gb"] == 6.0 and e["parts"] == 3 and e["compressed_gb_assumed"] is False
