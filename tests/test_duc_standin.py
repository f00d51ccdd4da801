"""The STAND-IN DUC benchmark: built from raw examples in the NIST layout, read back by the DUC
reader, labelled STAND-IN everywhere, deterministic; then the prepare and baselines jobs on it."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pandas as pd
import pytest

from wikiref import config
from wikiref.cli import main
from wikiref.registry import job_keys
from wikiref.stages.duc import reader as duc
from wikiref.stages.duc import stage
from wikiref.stages.duc import standin as ds

WORDS = (
    "river city council bridge election festival museum railway harbour market school stadium "
    "mountain forest park library church castle airport hospital factory university theatre "
    "population economy climate history culture government tourism agriculture industry"
).split()


def _sentence(rng: random.Random, n: int) -> str:
    s = " ".join(rng.choice(WORDS) for _ in range(n))
    return s[0].upper() + s[1:] + "."


def raw_examples(n_articles: int = 9, seed: int = 0) -> pd.DataFrame:
    """Collect-shaped rows: articles citing 1..6 distinct pages, several statements per page."""
    rng = random.Random(seed)
    rows = []
    for a in range(n_articles):
        title = f"Article {a:02d}"
        n_docs = 1 + a % 6
        for d in range(n_docs):
            url = f"http://example.org/{a}/{d}"
            doc_text = "\n".join(" ".join(_sentence(rng, rng.randint(6, 14)) for _ in range(3)) for _ in range(4))
            for k in range(rng.randint(1, 3)):
                rows.append(
                    {
                        "id": f"{a:02d}{d:02d}{k:02d}",
                        "article": title,
                        "query": [title, f"Section {d % 3}"] + ([f"Sub {k}"] if k == 2 else []),
                        "statement": _sentence(rng, rng.randint(8, 30)),
                        "url": url,
                        "citation_type": "cite web",
                        "doc_title": f"Page {a}-{d}",
                        "doc_text": doc_text,
                    }
                )
    return pd.DataFrame(rows)


@pytest.fixture()
def raw_parquet(tmp_path) -> Path:
    p = tmp_path / "raw.parquet"
    raw_examples().to_parquet(p)
    return p


def wikiref_split(raw: pd.DataFrame, articles=(), urls=()) -> pd.DataFrame:
    """Split-shaped rows (article, doc_key, doc_hash as curation computes them) for ``articles`` plus one
    row per url in ``urls`` cited from an article outside the raw data."""
    from wikiref.dedup import body_hash, url_key

    rows = raw[raw["article"].isin(articles)].to_dict("records")
    for url in urls:
        src = raw[raw["url"] == url].iloc[0].to_dict()
        rows.append({**src, "article": "Another article"})
    return pd.DataFrame(
        {
            "article": [r["article"] for r in rows],
            "doc_key": [url_key(r["url"]) for r in rows],
            "doc_hash": [body_hash(r["doc_text"]) for r in rows],
        }
    )


@pytest.fixture()
def split_parquet(tmp_path) -> Path:
    """An empty WikiRef split (nothing to hold out)."""
    p = tmp_path / "split.parquet"
    wikiref_split(raw_examples()).to_parquet(p)
    return p


def _full_params(repo, tmp_path, **duc_cfg) -> dict:
    params = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    params["sample"]["duc"].update(duc_cfg)
    params["duc"]["root"] = str(tmp_path / "duc-standin")
    return params


def _params(repo, tmp_path, job="standin", **duc_cfg) -> str:
    """What the duc_<job> rule passes."""
    return config.job_params(_full_params(repo, tmp_path, **duc_cfg), *job_keys("duc", job))


def test_cluster_and_reference_rules():
    rows = raw_examples().to_dict("records")
    cl = ds.clusters_from_examples(rows, docs_per_cluster=3)
    assert [c.available_docs for c in cl] == sorted((c.available_docs for c in cl), reverse=True)
    assert all(2 <= len(c.documents) <= 3 for c in cl)  # articles citing one page are not clusters
    assert all(s["url"] in {d["url"] for d in c.documents} for c in cl for s in c.statements)
    refs = ds.group_references(["a b c", "d e", "f g h i", "j " * 300, "k"], 2, 5)
    # round-robin; "f g h i" fits in neither reference any more and the 300-word one never fits
    assert refs == [["a b c", "k"], ["d e"]]
    assert ds.narrative("X", ["History", "Economy"]) == "Describe History of X. Describe Economy of X."


def test_standin_in_nist_layout_read_back(repo, tmp_path, raw_parquet, split_parquet):
    pj = _params(repo, tmp_path, clusters_per_year=2, docs_per_cluster=4, models_per_cluster=2)
    root = tmp_path / "duc-standin"
    cli = ["duc", "standin", "--params-json", pj, "--raw", str(raw_parquet), "--wikiref", str(split_parquet)]
    assert main([*cli, "--out", str(root)]) == 0
    assert "NOT DUC" in (root / "NOTICE.txt").read_text()
    manifest = json.loads((root / "MANIFEST.json").read_text())
    assert manifest["standin"] is True and set(manifest["years"]) == {"2005", "2006", "2007"}
    articles = set()
    for year in (2005, 2006, 2007):
        assert (root / str(year) / f"duc{year}_topics.sgml").read_text().startswith("<!-- STAND-IN")
        topics = duc.read_year(root, year, None)  # the reader, unchanged, on the stand-in
        assert len(topics) == 2
        for t in topics:
            articles.add(t.title)
            assert t.num.startswith(f"D{year % 100:02d}") and t.title.startswith("Article ")
            assert 2 <= len(t.documents) <= 4 and 1 <= len(t.references) <= 2
            assert all(len(r.text.split()) <= 250 for r in t.references)
            assert all(d.date.startswith(str(year)) for d in t.documents)
            assert t.narrative.startswith("Describe ")
            doc = next(p for p in (root / str(year) / f"duc{year}_docs" / t.num).iterdir())
            assert "<DOCTYPE> STAND-IN </DOCTYPE>" in doc.read_text()
    assert len(articles) == 6  # no article in two pseudo-years
    # deterministic: same params -> same files
    root2 = tmp_path / "again"
    assert main([*cli, "--out", str(root2)]) == 0
    assert json.loads((root2 / "MANIFEST.json").read_text())["files"] == manifest["files"]
    # rebuilding in place replaces the folder (no stale files)
    (root / "2005" / "stale.txt").write_text("x")
    assert main(cli) == 0  # default: duc.root
    assert not (root / "2005" / "stale.txt").exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".duc-standin")]  # no temporary folder left


def test_wikiref_articles_and_documents_are_held_out(repo, tmp_path, raw_parquet):
    """No topic is a WikiRef article and no stand-in document is one a WikiRef example cites (by URL key
    or body text), so +DA pre-training never sees a test topic; the skips are counted in the MANIFEST."""
    from wikiref.dedup import body_hash, url_key

    raw = raw_examples()
    # the two most-cited articles (6 and 5 documents) would be topics; hold them out, and one page of a
    # third article that WikiRef cites from elsewhere; and a page whose URL differs but body is the same
    top = ["Article 05", "Article 04"]
    shared_url = "http://example.org/3/1"
    split = wikiref_split(raw, top, [shared_url])
    same_body = raw[raw["url"] == "http://example.org/2/0"].iloc[0]
    split.loc[len(split)] = ["Elsewhere", url_key("http://mirror.example.com/copy"), body_hash(same_body["doc_text"])]
    sp = tmp_path / "split.parquet"
    split.to_parquet(sp)
    pj = _params(repo, tmp_path, clusters_per_year=1, docs_per_cluster=6, models_per_cluster=2)
    root = tmp_path / "held-out"
    args = ["duc", "standin", "--params-json", pj, "--raw", str(raw_parquet), "--wikiref", str(sp), "--out", str(root)]
    assert main(args) == 0
    manifest = json.loads((root / "MANIFEST.json").read_text())
    topics = [t for y in manifest["years"].values() for t in y["topics"]]
    assert len(topics) == 3
    assert not {t["article"] for t in topics} & set(split["article"])
    stand_in_keys = {k for t in topics for k in t["doc_keys"]}
    assert not stand_in_keys & set(split["doc_key"])
    assert url_key(shared_url) not in stand_in_keys and url_key("http://example.org/2/0") not in stand_in_keys
    n_docs = sum(len(t.documents) for year in (2005, 2006, 2007) for t in duc.read_year(root, year, None))
    assert n_docs == len(stand_in_keys) == sum(len(t["documents"]) for t in topics)
    assert manifest["held_out"] == {
        "wikiref_examples": len(split),
        "wikiref_articles": 4,
        "articles_skipped": 2,
        "documents_skipped": 2,
    }
    # without holding out, the most-cited articles are topics (what the hold-out prevents)
    empty = tmp_path / "empty.parquet"
    wikiref_split(raw).to_parquet(empty)
    args[args.index(str(sp))] = str(empty)
    args[-1] = str(tmp_path / "not-held-out")
    assert main(args) == 0
    leaky = json.loads((tmp_path / "not-held-out" / "MANIFEST.json").read_text())
    assert set(top) <= {t["article"] for y in leaky["years"].values() for t in y["topics"]}


def test_bad_raw_input_is_a_clear_error(repo, tmp_path, capsys, split_parquet):
    from wikiref.schemas import SchemaError

    p = tmp_path / "raw.parquet"
    raw_examples(n_articles=2).to_parquet(p)  # articles with 1 and 2 documents -> 1 cluster
    params = _full_params(repo, tmp_path)
    with pytest.raises(stage.DucError, match="need at least one per pseudo-year"):
        stage.standin(params, {"raw": [p]}, {"root": tmp_path / "out"})
    pj = _params(repo, tmp_path)
    cli = ["duc", "standin", "--params-json", pj, "--raw", str(p), "--wikiref", str(split_parquet), "--out"]
    cli.append(str(tmp_path / "out"))
    assert main(cli) == 1
    assert "need at least one per pseudo-year" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
    raw_examples().drop(columns=["doc_text"]).to_parquet(p)
    with pytest.raises(SchemaError, match="doc_text"):
        stage.standin(params, {"raw": [p]}, {"root": tmp_path / "out"})
    assert main(cli) == 1
    assert "expected the collect output" in capsys.readouterr().err


def test_prepare_without_the_tree_shows_the_nist_layout(repo, tmp_path, capsys):
    pj = _params(repo, tmp_path, job="prepare")
    assert main(["duc", "prepare", "--params-json", pj, "--out-dir", str(tmp_path / "duc")]) == 2
    err = capsys.readouterr().err
    assert "does not exist" in err and "Expected the NIST layout" in err
    assert "`wikiref duc standin`" in err  # duc.standin: how to build it
    assert not (tmp_path / "duc").exists()
    with pytest.raises(stage.DucError, match="not in duc.years"):
        stage.prepare(_full_params(repo, tmp_path), {}, {"dir": tmp_path / "duc"}, years=[1999])


def test_prepare_and_baselines_on_the_standin(repo, tmp_path, raw_parquet, split_parquet):
    """standin -> prepare (spaCy sentences, targets) -> baselines (official ROUGE), each with its rule's params."""
    sizes = dict(clusters_per_year=2, docs_per_cluster=3, models_per_cluster=2)
    root = tmp_path / "duc-standin"
    assert (
        main(
            [
                "duc",
                "standin",
                "--params-json",
                _params(repo, tmp_path, **sizes),
                "--raw",
                str(raw_parquet),
                "--wikiref",
                str(split_parquet),
                "--out",
                str(root),
            ]
        )
        == 0
    )
    out = tmp_path / "data" / "duc"
    assert (
        main(["duc", "prepare", "--params-json", _params(repo, tmp_path, "prepare", **sizes), "--out-dir", str(out)])
        == 0
    )
    df = pd.read_parquet(out / "2006.parquet")
    assert df.id.is_monotonic_increasing and set(df.year) == {2006}
    assert all(len(s) == len(t) > 0 for s, t in zip(df.doc_sentences, df.sentence_targets))
    assert all(list(q)[0].startswith("Article ") and len(q) >= 2 for q in df["query"])
    stats = json.loads((out / "2006.stats.json").read_text())
    assert stats["standin"] is True and stats["topics"] == 2 and stats["root"] == str(root)
    metrics = tmp_path / "m.json"
    table = tmp_path / "t6"
    assert (
        main(
            [
                "duc",
                "baselines",
                "--params-json",
                _params(repo, tmp_path, "baselines", **sizes),
                "--inputs",
                *[str(out / f"{y}.parquet") for y in (2005, 2006, 2007)],
                "--metrics",
                str(metrics),
                "--table",
                str(table),
            ]
        )
        == 0
    )
    m = json.loads(metrics.read_text())
    assert m["standin"] is True and m["years"]["2005"]["topics"] == 2
    for system in ("lead", "query_sim", "oracle", "lead_each", "query_sim_plain"):
        for y in ("2005", "2006", "2007"):
            s = m["systems"][system][y]
            assert set(s) >= {"ROUGE-1", "ROUGE-2", "ROUGE-SU4"} and s["ROUGE-1"]["topics"] == 2
            assert s["summary_words_mean"] <= 250
    md = Path(str(table) + ".md").read_text()
    assert "STAND-IN" in md and "| ORACLE |" in md and "| LEAD-EACH |" in md
    assert "STAND-IN" in Path(str(table) + ".tex").read_text()


def test_a_standin_tree_cannot_be_read_as_real_duc(repo, tmp_path, raw_parquet, split_parquet):
    """The STAND-IN label is derived from the tree (NOTICE / MANIFEST), not only from duc.standin."""
    pj = _params(repo, tmp_path, clusters_per_year=1, docs_per_cluster=3, models_per_cluster=1)
    root = tmp_path / "duc-standin"
    args = ["duc", "standin", "--params-json", pj, "--raw", str(raw_parquet), "--wikiref", str(split_parquet)]
    assert main([*args, "--out", str(root)]) == 0
    assert ds.is_standin_tree(root)
    params = _full_params(repo, tmp_path)
    params["duc"]["standin"] = False
    with pytest.raises(stage.DucError, match="is a STAND-IN DUC tree"):
        stage.prepare(params, {"root": root}, {"dir": tmp_path / "duc"})
    (root / "NOTICE.txt").unlink()  # the MANIFEST alone still says so
    with pytest.raises(stage.DucError, match="is a STAND-IN DUC tree"):
        stage.prepare(params, {"root": root}, {"dir": tmp_path / "duc"})
    assert not (tmp_path / "duc").exists()


def test_standin_flag_is_validated_against_the_profile(tmp_path):
    import pandas as pd

    from wikiref.tables import StandinMismatch, standin_flag, write_table

    assert standin_flag({"standin": True}, False, "x") is True  # the profile may say more than the data
    assert standin_flag({"standin": False}, False, "x") is False
    with pytest.raises(StandinMismatch, match="profile.standin is false"):
        standin_flag({"standin": False}, True, "x")
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(StandinMismatch):
        write_table(df, tmp_path / "t", title="T", profile={"name": "p", "standin": False}, standin=True)
    write_table(df, tmp_path / "t", title="T", profile={"name": "p", "standin": True})
    csv = (tmp_path / "t.csv").read_text().splitlines()
    assert csv == ["a,Data", "1,STAND-IN", "2,STAND-IN"]
    write_table(df, tmp_path / "r", title="T", profile={"name": "p", "standin": False})
    assert (tmp_path / "r.csv").read_text().splitlines() == ["a,Data", "1,real", "2,real"]  # every table says
