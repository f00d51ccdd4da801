"""`wikiref sample`: the real dump fragment and the deterministic, labelled stand-in WARC."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from wikiref.files import sha256_file
from wikiref.stages.sample import build_standins, locate_gensim_dump
from wikiref.standin import STANDIN_NOTE, Standin, standin_html
from wikiref.wiki.statements import StatementConfig, kept_statements, parse_article

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def params():
    return yaml.safe_load((REPO / "params.yaml").read_text())


_ARTICLES: list = []


@pytest.fixture(scope="module")
def built(tmp_path_factory, params):
    """The sample built by the job's entry point, with the parameters the sample rule passes."""
    from wikiref import config
    from wikiref.registry import job_keys
    from wikiref.stages import sample

    out = tmp_path_factory.mktemp("sample") / "s"
    job_params = json.loads(config.job_params(params, *job_keys("sample", "run")))
    manifest = sample.run(job_params, {}, {"dir": out}, articles_out=_ARTICLES)
    assert manifest == json.loads((out / "MANIFEST.json").read_text())
    return out


def read_records(path):
    from warcio.archiveiterator import ArchiveIterator

    with open(path, "rb") as fh:
        for rec in ArchiveIterator(fh):
            yield rec.rec_type, rec.rec_headers, rec.content_stream().read()


def test_dump_is_the_gensim_fragment(built):
    src = locate_gensim_dump()
    assert sha256_file(built / "dump" / "enwiki-sample.xml.bz2") == sha256_file(src)


def test_manifest(built):
    m = json.loads((built / "MANIFEST.json").read_text())
    assert m["standin"] is True and m["note"] == STANDIN_NOTE and "STAND-IN" in m["note"]
    assert m["gensim_version"]
    assert m["dump"]["articles"] == 106 and m["dump"]["pages_read"] == 206
    assert m["dump"]["kept_by_type"] == {"cite news": 262, "cite press release": 8, "cite web": 1838}
    assert m["warc"]["records"] == m["warc"]["cited_urls"] - sum(m["warc"]["skipped"].values())
    assert 300 <= m["warc"]["mean_tokens"] <= 700
    for rel, info in m["files"].items():
        assert sha256_file(built / rel) == info["sha256"] and (built / rel).stat().st_size == info["bytes"]
    assert set(m["files"]) == {"dump/enwiki-sample.xml.bz2", "warc/standin.warc.gz"}


def test_every_record_is_labelled_and_is_html_with_a_notice(built):
    n = 0
    for rtype, headers, body in read_records(built / "warc" / "standin.warc.gz"):
        assert headers.get_header("WARC-Wikiref-Standin") == "true"
        assert headers.get_header("WARC-Date") == "2019-01-01T00:00:00Z"
        if rtype == "warcinfo":
            assert b"STAND-IN" in body
            continue
        assert rtype == "response"
        assert "STAND-IN" in headers.get_header("WARC-Wikiref-Description")
        html = body.decode("utf-8")
        assert "<title>" in html and "STAND-IN PAGE" in html and 'class="wikiref-standin-notice"' in html
        n += 1
    assert n == json.loads((built / "MANIFEST.json").read_text())["warc"]["records"]


@pytest.fixture(scope="module")
def articles(built):
    """The articles parsed while building the sample (parsing the dump again would double the time)."""
    assert len(_ARTICLES) == 106
    return _ARTICLES


def test_standins_never_contain_a_paragraph_that_cites_their_url(built, articles):
    import html as htmlmod
    import re

    citing: dict[str, set[str]] = {}
    for _, art in articles:
        for sec in art.sections:
            for para, urls in zip(sec.paragraphs, sec.paragraph_urls):
                for u in urls:
                    if para:
                        citing.setdefault(u, set()).add(para)
    checked = 0
    for rtype, headers, body in read_records(built / "warc" / "standin.warc.gz"):
        if rtype != "response":
            continue
        url = headers.get_header("WARC-Target-URI")
        paras = [htmlmod.unescape(p) for p in re.findall(r"<p>(.*?)</p>", body.decode("utf-8"), flags=re.S)]
        assert paras, url
        for cited in citing.get(url, ()):
            assert cited not in paras, url
            checked += 1
    assert checked > 1500


def test_same_inputs_identical_bytes(built, articles, params, tmp_path):
    """The archive is a pure function of the parsed dump and the params (fixed dates, content ids)."""
    import importlib.metadata

    from wikiref.stages.sample import GENSIM_DUMP
    from wikiref.standin import write_standin_warc

    pages = build_standins(articles, int(params["sample"]["standin_target_tokens"]))
    note = f"gensim {importlib.metadata.version('gensim')} {'/'.join(GENSIM_DUMP)}"
    write_standin_warc(pages, tmp_path / "standin.warc.gz", note)
    assert (tmp_path / "standin.warc.gz").read_bytes() == (built / "warc" / "standin.warc.gz").read_bytes()


def test_build_standins_recipe():
    """Section's other paragraphs first, then neighbouring sections, stopping near the target size."""
    text = (
        "Lead paragraph words here.\n\n"
        "== A ==\nFirst A paragraph one two three four.\n\n"
        "Cited A paragraph.<ref>{{cite web|url=http://x.org/1|title=Source One}}</ref>\n\n"
        "Third A paragraph five six seven.\n"
        "== B ==\nB paragraph eight nine ten eleven.\n\n"
        "Also cites it.<ref>{{cite web|url=http://x.org/1}}</ref>\n"
        "== C ==\nC paragraph twelve thirteen.\n"
    )
    art = parse_article("Art", text, StatementConfig())
    assert [s.citation.url for s in kept_statements(art)] == ["http://x.org/1", "http://x.org/1"]
    pages = build_standins([(1, art)], target_tokens=10)
    assert len(pages) == 1 and pages[0].title == "Source One"
    assert pages[0].paragraphs == ["First A paragraph one two three four.", "Third A paragraph five six seven."]
    big = build_standins([(1, art)], target_tokens=1000)[0]
    assert "Cited A paragraph." not in big.paragraphs and "Also cites it." not in big.paragraphs
    assert big.paragraphs == [
        "Lead paragraph words here.",
        "First A paragraph one two three four.",
        "Third A paragraph five six seven.",
        "B paragraph eight nine ten eleven.",
        "C paragraph twelve thirteen.",
    ]
    html = standin_html(
        Standin(
            url="http://x.org/<1>",
            title="T & U",
            article="Art",
            page_id=1,
            sections=["Art > A"],
            paragraphs=["a < b"],
            tokens=3,
            citing_statements=1,
        )
    ).decode()
    assert "<title>T &amp; U</title>" in html and "<p>a &lt; b</p>" in html


def test_cli_reports_a_missing_gensim_dump(monkeypatch, tmp_path, capsys):
    from wikiref.cli import main
    from wikiref.stages import sample

    def missing():
        raise sample.SampleError("gensim is not installed")

    monkeypatch.setattr(sample, "locate_gensim_dump", missing)
    assert main(["sample", "--params", str(REPO / "params.yaml"), "--out", str(tmp_path / "s")]) == 1
    assert "wikiref sample: gensim is not installed" in capsys.readouterr().err
    assert not (tmp_path / "s" / "MANIFEST.json").exists()
