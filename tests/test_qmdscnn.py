"""QmdsCnn (Pasunuru et al. 2021, §3.1): .story parsing (real fixtures), splits by URL hash, seeded
chunking, BM25 retrieval that never returns the example's own article, counted bad input, the STAND-IN
corpus, and the common example schema for every source (WikiRef included)."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from wikiref import config, examples
from wikiref.registry import job_keys
from wikiref.schemas import EXAMPLE
from wikiref.stages.qmdscnn import corpus, stage
from wikiref.stages.qmdscnn.retrieval import ChunkIndex, tokenize
from wikiref.stages.qmdscnn.standin import standin_url, story_text


def params_for(job: str, **qmdscnn) -> dict:
    p = config.select(config.load_params(), *job_keys("qmdscnn", job))
    if "qmdscnn" in p:
        p["qmdscnn"].update(qmdscnn)
        p["qmdscnn"]["titles"] = dict(p["qmdscnn"]["titles"], backend="none")
    return p


def cnn_dir(shared_data) -> Path:
    path = shared_data / "cnn-stories"
    if not path.is_dir():
        pytest.skip(f"{path} missing")
    return path


# ------------------------------------------------------------------------------------------ stories
def independent_counts(text: str) -> tuple[int, int]:
    """Paragraphs and highlights counted another way: blank-line blocks before the first marker, markers."""
    head = text.split("@highlight", 1)[0]
    return len([b for b in re.split(r"\n\s*\n", head) if b.strip()]), text.count("@highlight")


def test_real_stories_parse_with_independent_counts(shared_data):
    files = sorted(cnn_dir(shared_data).glob("*.story"))
    assert len(files) == 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        story, reason = corpus.parse_story(text)
        assert reason == "" and story is not None, path.name
        n_par, n_high = independent_counts(text)
        assert (len(story.paragraphs), len(story.highlights)) == (n_par, n_high), path.name
        assert not text.endswith("\n")  # the corpus' files do not end with a newline
        assert all(h and not h.startswith("@") for h in story.highlights)


def test_real_split_lists_name_the_story_files(shared_data):
    root = cnn_dir(shared_data)
    stats = Counter()
    url_split = corpus.read_split_lists(root, {"train": ["all_train.txt"], "dev": ["all_val.txt"]}, stats)
    assert Counter(url_split.values()) == {"train": 10, "dev": 10}
    for url in url_split:
        assert (root / f"{hashlib.sha1(url.encode()).hexdigest()}.story").is_file()
        assert corpus.story_id(url) == hashlib.sha1(url.encode()).hexdigest()


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("First paragraph.\n\nSecond.", "no_highlights"),
        ("@highlight\n\nOnly a highlight", "empty_article"),
        ("A paragraph.\n\n@highlight\n\n", "empty_highlights"),
        ("A paragraph.\n\n@highlight\n\nOne.\n\nA stray paragraph.", "text_after_highlights"),
    ],
)
def test_malformed_stories_have_a_reason(text, reason):
    assert corpus.parse_story(text) == (None, reason)


def test_story_format_round_trip():
    text = story_text(["P one.", "P two."], ["H one.", "H two."])
    story, _ = corpus.parse_story(text)
    assert story.paragraphs == ["P one.", "P two."] and story.highlights == ["H one.", "H two."]
    assert text.count("@highlight") == 2 and not text.endswith("\n")


def test_titles_from_url_and_page():
    cnn = "http://web.archive.org/web/20070716092219id_/http://us.cnn.com:80/2007/US/07/13/btsc.obrien.criminallyinsane/index.html"
    assert corpus.original_url(cnn).startswith("http://us.cnn.com:80/2007/")
    assert corpus.title_from_url(cnn) == "btsc obrien criminallyinsane"
    dm = "http://www.dailymail.co.uk/news/article-2310436/Boston-Marathon-bombing-suspect.html"
    assert corpus.title_from_url(dm) == "Boston Marathon bombing suspect"
    strip = config.load_params()["qmdscnn"]["titles"]["strip"]
    assert corpus.clean_title("CNN.com - Bush to invoke Vietnam - Aug 21, 2007", strip) == "Bush to invoke Vietnam"
    assert corpus.page_title(b"<html><head><title> A  page </title></head><body>x</body></html>") == "A page"
    assert corpus.page_title(b"") == ""


# ------------------------------------------------------------------------------------------ chunking
def test_chunking_is_seeded_per_story():
    sizes = stage.chunk_sizes(23, 1, 4, 13, "abc")
    assert sizes == stage.chunk_sizes(23, 1, 4, 13, "abc")
    assert sum(sizes) == 23 and all(1 <= s <= 4 for s in sizes)
    others = {tuple(stage.chunk_sizes(23, 1, 4, seed, "abc")) for seed in range(10)}
    assert len(others) > 1  # the seed matters
    assert stage.chunk_sizes(0, 1, 4, 13, "abc") == []


# ----------------------------------------------------------------------------------------- retrieval
def test_retrieval_excludes_own_article_and_breaks_ties_by_position():
    # (filler chunks keep every query term below half of the chunks: Robertson's idf is floored at 0 above)
    filler = [f"museum park number{i}" for i in range(6)]
    texts = ["harbour bridge harbour", "harbour bridge", "bridge festival", "harbour bridge", *filler]
    index = ChunkIndex(tokenize(texts), [0, 0, 1, 2] + list(range(3, 3 + len(filler))))
    own_best = index.scores(tokenize(["harbour bridge"])[0])
    assert own_best.argmax() == 0  # the query's own article holds the best chunk
    hits = index.top(tokenize(["harbour bridge"])[0], 4, exclude_group=0)
    assert [h.chunk for h in hits] == [3, 2]  # never 0 or 1; the zero-score museum chunk never returned
    assert all(index.groups[h.chunk] != 0 for h in hits)
    # equal scores: the lower chunk index first
    tie = ChunkIndex(tokenize(["harbour town"] * 3 + filler), list(range(3 + len(filler))))
    assert [h.chunk for h in tie.top(tokenize(["harbour"])[0], 2, exclude_group=3)] == [0, 1]
    assert tie.top([], 2, exclude_group=3) == []
    allowed = tie.groups != 0
    assert [h.chunk for h in tie.top(tokenize(["harbour"])[0], 2, exclude_group=3, allowed=allowed)] == [1, 2]


# --------------------------------------------------------------------------------------- the jobs
def make_corpus(root: Path, stories: dict[str, tuple[str, bytes]]) -> None:
    """stories: url -> (split list file, .story bytes)."""
    root.mkdir(parents=True, exist_ok=True)
    lists: dict[str, list[str]] = {}
    for url, (list_name, data) in stories.items():
        (root / f"{corpus.story_id(url)}.story").write_bytes(data)
        lists.setdefault(list_name, []).append(url)
    for name, urls in lists.items():
        (root / name).write_text("".join(u + "\n" for u in urls), encoding="utf-8")


def url(name: str) -> str:
    return f"http://web.archive.org/web/20070101000000id_/http://www.cnn.com:80/2007/US/01/01/{name}/index.html"


GOOD = [
    ("harbour.bridge.opens", "The new harbour bridge opened today.\n\nThousands crossed the harbour bridge."),
    ("museum.park.festival", "A festival filled the museum park.\n\nThe museum stayed open late."),
    ("harbour.ferry.strike", "Ferry workers at the harbour went on strike.\n\nThe bridge was crowded."),
    ("railway.station.fire", "A fire closed the railway station.\n\nTrains were diverted."),
]


def corpus_with_bad_input(root: Path) -> dict[str, str]:
    stories = {url(n): ("all_train.txt", f"{body}\n\n@highlight\n\nSummary of {n}.".encode()) for n, body in GOOD}
    stories[url("no.highlights")] = ("all_val.txt", b"Just a paragraph.")
    stories[url("latin1.story")] = ("all_val.txt", "Caf\xe9 story.\n\n@highlight\n\nH.".encode("latin-1"))
    stories[url("empty.article")] = ("all_val.txt", b"@highlight\n\nH.")
    make_corpus(root, stories)
    (root / "all_val.txt").write_text(
        (root / "all_val.txt").read_text() + url("missing.file") + "\n" + url("harbour.bridge.opens") + "\n"
    )
    (root / "all_train.txt").write_text((root / "all_train.txt").read_text() + url("museum.park.festival") + "\n")
    (root / "orphan.story").write_text("Unlisted.\n\n@highlight\n\nH.")
    return stories


def test_articles_job_counts_every_drop_and_is_deterministic(tmp_path):
    root = tmp_path / "stories"
    corpus_with_bad_input(root)
    p = params_for("articles", split_lists={"train": ["all_train.txt"], "dev": ["all_val.txt"], "test": ["none.txt"]})
    outs = [{"articles": tmp_path / f"a{i}.parquet", "stats": tmp_path / f"a{i}.json"} for i in range(2)]
    s = stage.articles(p, {"stories": root}, outs[0], shard=0)
    stage.articles(p, {"stories": root}, outs[1], shard=0)
    assert outs[0]["articles"].read_bytes() == outs[1]["articles"].read_bytes()
    c = s["counts"]
    # harbour.bridge.opens is in train and val: dropped from both; museum.park.festival listed twice in train: kept
    assert c["dropped:url_in_several_splits"] == 1 and c["duplicate_url_line"] == 1
    for reason in ("no_highlights", "not_utf8", "empty_article", "missing_story", "not_in_split_lists"):
        assert c[f"dropped:{reason}"] == 1, reason
    assert s["locations"]["not_utf8"] == [f"{corpus.story_id(url('latin1.story'))}.story (byte 3)"]
    assert c["missing_split_list"] == 1
    rows = pq.read_table(outs[0]["articles"]).to_pylist()
    assert {r["split"] for r in rows} == {"train"} and len(rows) == c["kept"] == 3
    for r in rows:
        assert sum(r["chunk_paragraphs"]) == 2 and r["query_origin"] == "url_path" and not r["standin"]
    # shards partition the stories
    p2 = params_for("articles", shards=3)
    p2["qmdscnn"]["split_lists"] = p["qmdscnn"]["split_lists"]
    kept = []
    for shard in range(3):
        o = {"articles": tmp_path / f"s{shard}.parquet", "stats": tmp_path / f"s{shard}.json"}
        stage.articles(p2, {"stories": root}, o, shard=shard)
        kept += [r["story_id"] for r in pq.read_table(o["articles"]).to_pylist()]
    assert sorted(kept) == sorted(r["story_id"] for r in rows)


def test_missing_corpus_is_a_clear_error(tmp_path):
    p = params_for("articles")
    with pytest.raises(corpus.CorpusError, match="expected the CNN/DailyMail layout"):
        stage.articles(
            p, {"stories": tmp_path / "nowhere"}, {"articles": tmp_path / "a", "stats": tmp_path / "s"}, shard=0
        )
    (tmp_path / "empty").mkdir()
    with pytest.raises(corpus.CorpusError, match="none of the URL lists"):
        stage.articles(
            p, {"stories": tmp_path / "empty"}, {"articles": tmp_path / "a", "stats": tmp_path / "s"}, shard=0
        )


def test_build_retrieves_from_other_articles_only(tmp_path):
    root = tmp_path / "stories"
    # unrelated filler stories keep the query words in well under half of the chunks (Robertson idf > 0)
    filler = [(f"weather.report.{i}", f"Rain fell on day {i}.\n\nClouds moved east on day {i}.") for i in range(8)]
    make_corpus(root, {url(n): ("all_train.txt", f"{b}\n\n@highlight\n\nH {n}.".encode()) for n, b in GOOD + filler})
    p = params_for("articles")
    o = {"articles": tmp_path / "a.parquet", "stats": tmp_path / "a.json"}
    stage.articles(p, {"stories": root}, o, shard=0)
    bp = config.select(config.load_params(), *job_keys("qmdscnn", "build"))
    splits = {s: tmp_path / f"{s}.parquet" for s in ("train", "dev", "test")}
    m = stage.build(
        bp,
        {"articles": [o["articles"]], "stats": [o["stats"]]},
        {"splits": splits, "table": tmp_path / "table", "metrics": tmp_path / "m.json"},
    )
    assert m["sizes"] == {"train": 12, "dev": 0, "test": 0} and m["standin"] is False
    table = examples.read(splits["train"])
    assert table.schema.equals(EXAMPLE)
    for r in table.to_pylist():
        own = r["source_id"]
        originals = [d for d in r["documents"] if d["origin"] == "original"]
        retrieved = [d for d in r["documents"] if d["origin"] == "retrieved"]
        assert originals and all(d["id"].startswith(own) for d in originals)
        assert all(not d["id"].startswith(own) and d["score"] > 0 for d in retrieved)
        assert [d["score"] for d in retrieved] == sorted((d["score"] for d in retrieved), reverse=True)
    bridge = next(r for r in table.to_pylist() if r["query"] == ["harbour bridge opens"])
    assert any("harbour" in " ".join(d["sentences"]).lower() for d in bridge["documents"] if d["origin"] == "retrieved")
    assert (tmp_path / "table.md").read_text().count("| train | 12 |") == 1
    assert json.loads((tmp_path / "m.json").read_text())["counts"]["kept"] == 12


# ----------------------------------------------------------------------------------------- stand-in
def test_standin_corpus_is_deterministic_and_labelled(tmp_path):
    from wikiref.stages.sample import locate_gensim_dump

    p = config.select(config.load_params(), *job_keys("qmdscnn", "standin"))
    p["qmdscnn"]["standin_articles"] = 12
    dump = tmp_path / "dump.xml.bz2"
    shutil.copyfile(locate_gensim_dump(), dump)
    m1 = stage.standin(p, {"dump": dump}, {"dir": tmp_path / "a"})
    stage.standin(p, {"dump": dump}, {"dir": tmp_path / "b"})
    files = sorted(f.name for f in (tmp_path / "a").iterdir())
    assert files == sorted(f.name for f in (tmp_path / "b").iterdir())
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    assert m1["stories"] == 12 and corpus.is_standin_dir(tmp_path / "a")
    assert (tmp_path / "a" / "NOTICE.txt").read_text().startswith("STAND-IN")
    # every story parses, is listed once, and its file name is sha1 of its URL
    listed = [
        u for f in ("all_train.txt", "all_val.txt", "all_test.txt") for u in (tmp_path / "a" / f).read_text().split()
    ]
    assert len(listed) == len(set(listed)) == 12
    for u in listed:
        story, reason = corpus.parse_story((tmp_path / "a" / f"{corpus.story_id(u)}.story").read_text())
        assert story is not None, reason
    # the articles job reads it as STAND-IN; archived titles where the archive has the page, else the URL
    ap = params_for("articles")
    ap["qmdscnn"]["titles"]["backend"] = "warc"
    o = {"articles": tmp_path / "x.parquet", "stats": tmp_path / "x.json"}
    s = stage.articles(
        ap, {"stories": tmp_path / "a", "warc_paths": [str(tmp_path / "a" / "archive.warc.gz")]}, o, shard=0
    )
    rows = pq.read_table(o["articles"]).to_pylist()
    assert rows and all(r["standin"] for r in rows)
    assert s["counts"]["title:archived_title"] == m1["archived_pages"]
    assert s["counts"].get("title:url_path", 0) == 12 - m1["archived_pages"]
    archived = [r for r in rows if r["query_origin"] == "archived_title"]
    assert archived and all("STAND-IN" not in r["title"] and "2019" not in r["title"] for r in archived)
    assert all(u.startswith(standin_url("x", 0).split("/2019/")[0]) for u in listed)


def test_resolve_picks_the_corpus(tmp_path):
    c = config.load_params()
    c["qmdscnn"]["stories_dir"] = str(tmp_path / "absent")
    auto = corpus.resolve(c)
    assert auto.standin and auto.build_standin and auto.warc_paths[-1].endswith("archive.warc.gz")
    c["qmdscnn"]["stories_dir"] = str(tmp_path)
    real = corpus.resolve(c)
    assert not real.standin and real.build_standin and real.stories_dir == str(tmp_path)
    c["qmdscnn"]["standin"] = False
    assert not corpus.resolve(c).build_standin


# ------------------------------------------------------------------------------- the common schema
def wikiref_row(i: int) -> dict:
    return {
        "id": f"raw{i}",
        "query": ["Article", "History"],
        "doc_key": f"http://example.org/{i}",
        "doc_sentences": ["One.", "Two."],
        "doc_title": "Page",
        "url": f"http://example.org/{i}",
        "summary_sentences": ["The statement."],
        "doc_standin": True,
        "part": "enwiki-sample",
        "article": "Article",
        "citation_type": "cite web",
        "page_id": 3,
        "statement_index": 1,
        "access_date": "",
        "fetch_source": "warc",
    }


def test_schema_round_trip_for_every_source(tmp_path):
    from wikiref.stages.split import to_examples

    rows = to_examples([wikiref_row(i) for i in range(3)], "train")
    doc = examples.document("d1", ["s."], title="t", url="u", origin="retrieved", score=1.5)
    rows.append(
        examples.example(
            "qmdscnn",
            "abc",
            split="dev",
            query=["q"],
            documents=[doc],
            summary=["h."],
            query_origin="url_path",
            standin=False,
            meta={"x": 1},
        )
    )
    rows.append(
        examples.example(
            "qmdsir",
            "7",
            split="test",
            query=["what is x"],
            documents=[examples.document("7-p0", ["a."])],
            summary=["a.", "b."],
            query_origin="search_query",
            standin=True,
        )
    )
    outputs = {s: tmp_path / f"{s}.parquet" for s in ("train", "dev", "test")}
    sizes = examples.write_splits(rows, outputs)
    assert sizes == {"train": 3, "dev": 1, "test": 1}
    back = [r for s in ("train", "dev", "test") for r in examples.read(outputs[s]).to_pylist()]
    assert sorted(back, key=lambda r: r["id"]) == sorted(rows, key=lambda r: r["id"])
    assert {r["source"] for r in back} == {"wikiref", "qmdscnn", "qmdsir"}
    assert json.loads(next(r for r in back if r["source"] == "qmdscnn")["meta"]) == {"x": 1}
    assert json.loads(next(r for r in back if r["source"] == "wikiref")["meta"])["citation_type"] == "cite web"


def test_examples_reject_broken_rows():
    good = examples.example(
        "x",
        "1",
        split="train",
        query=["q"],
        documents=[examples.document("d", ["s"])],
        summary=["s"],
        query_origin="o",
        standin=False,
    )
    examples.check(good)
    for broken in (dict(good, split="val"), dict(good, query=[""]), dict(good, documents=[]), dict(good, summary=[])):
        with pytest.raises(examples.ExampleError):
            examples.check(broken)
    with pytest.raises(examples.ExampleError, match="duplicate example id"):
        examples.to_table([good, good])
    with pytest.raises(examples.ExampleError, match="origin"):
        examples.check(dict(good, documents=[examples.document("d", ["s"], origin="other")]))
