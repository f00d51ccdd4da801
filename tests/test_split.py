"""wikiref.stages.split: seeded split without document overlap; the split job writes Tables I-II."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiref import config, layout
from wikiref.cli import main as cli_main
from wikiref.registry import job_keys
from wikiref.schemas import CURATE_STATISTICS, SchemaError
from wikiref.stages import split


def test_resolve_size():
    assert split.resolve_size(12000, 280724) == 12000
    assert split.resolve_size(0.15, 163) == 24
    assert split.resolve_size(1, 10) == 1
    with pytest.raises(split.SplitError):
        split.resolve_size(0, 10)


def test_document_groups_are_transitive_and_ignore_empty_keys():
    keys = ["u1", "u1", "u2", "u3", "", ""]
    hashes = ["h1", "h2", "h2", "h3", "h4", "h5"]
    g = split.document_groups(keys, hashes)
    assert g[0] == g[1] == g[2]  # 0-1 share a URL, 1-2 share a body
    assert len({g[0], g[3], g[4], g[5]}) == 4  # empty URL keys never link


def _random_docs(rng, n, n_urls, n_bodies):
    ids = [f"id{i:05d}" for i in range(n)]
    keys = [f"u{rng.randrange(n_urls)}" if rng.random() > 0.05 else "" for _ in range(n)]
    hashes = [f"h{rng.randrange(n_bodies)}" for _ in range(n)]
    return ids, keys, hashes


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 300), st.floats(0.05, 0.3))
def test_no_document_in_two_splits(seed, n, frac):
    rng = random.Random(seed)
    ids, keys, hashes = _random_docs(rng, n, n_urls=max(2, n // 2), n_bodies=max(2, n // 2))
    assignment = split.assign_splits(ids, keys, hashes, dev=frac, test=frac, seed=seed)
    assert split.overlap_report(assignment, keys, hashes) == {
        "doc_key_in_several_splits": 0,
        "doc_hash_in_several_splits": 0,
    }
    sizes = split.split_sizes(assignment)
    assert sum(sizes.values()) == n
    assert sizes["dev"] <= split.resolve_size(frac, n) and sizes["test"] <= split.resolve_size(frac, n)


def test_sizes_exact_with_small_groups_and_deterministic():
    rng = random.Random(1)
    ids, keys, hashes = _random_docs(rng, 2000, n_urls=1500, n_bodies=1800)
    a = split.assign_splits(ids, keys, hashes, dev=120, test=150, seed=13)
    sizes = split.split_sizes(a)
    assert (sizes["dev"], sizes["test"], sizes["train"]) == (120, 150, 1730)
    # same seed, examples in another order -> the same split per example
    order = list(range(len(ids)))
    random.Random(2).shuffle(order)
    b = split.assign_splits(
        [ids[i] for i in order], [keys[i] for i in order], [hashes[i] for i in order], dev=120, test=150, seed=13
    )
    assert [b[order.index(i)] for i in range(len(ids))] == a
    c = split.assign_splits(ids, keys, hashes, dev=120, test=150, seed=14)
    assert c != a


def test_too_large_splits_rejected():
    with pytest.raises(split.SplitError, match="exceed"):
        split.assign_splits(["a", "b"], ["", ""], ["x", "y"], dev=1, test=2, seed=0)


def test_overlap_report_detects_overlap():
    assert split.overlap_report(["train", "dev"], ["u", "u"], ["a", "b"])["doc_key_in_several_splits"] == 1


def _curated_table(n=60):
    rng = random.Random(5)
    rows = []
    for i in range(n):
        rows.append(
            {
                "id": f"e{i:03d}",
                "article": f"Article {i % 17}",
                "query": [f"Article {i % 17}", "History"],
                "statement": "s",
                "doc_sentences": ["a.", "b."],
                "doc_title": f"Page {i // 3}",
                "url": f"http://site/{i // 3}",
                "doc_standin": True,
                "part": "enwiki-sample",
                "summary_sentences": ["s"],
                "doc_key": f"site/{i // 3}",
                "doc_hash": f"{i}",
                "doc_tokens": rng.randint(200, 600),
                "doc_sents": rng.randint(9, 33),
                "summary_tokens": rng.randint(14, 75),
                "summary_sents": rng.randint(1, 3),
                "query_depth": 2,
                "query_tokens": rng.randint(3, 13),
            }
        )
    return pa.Table.from_pylist(rows)


PARAMS = {
    "profile": {"name": "sample", "standin": True, "description": "x"},
    "seed": 13,
    "split": {"dev": 0.2, "test": 0.2},
}


def test_cli_writes_splits_and_tables(tmp_path):
    curated = tmp_path / "examples.parquet"
    table = _curated_table()
    pq.write_table(table, curated)
    pj = config.job_params(PARAMS, *job_keys("split", "run"))
    rc = cli_main(
        [
            "split",
            "--params-json",
            pj,
            "--curated",
            str(curated),
            "--out-dir",
            str(tmp_path / "split"),
            "--table1",
            str(tmp_path / "tables" / "t1"),
            "--table2",
            str(tmp_path / "tables" / "t2"),
            "--metrics",
            str(tmp_path / "split.json"),
            "--sources-dir",
            str(tmp_path / "sources"),
        ]
    )
    assert rc == 0
    # the same splits on the common example schema: one document (the cited page) per example
    from wikiref import examples

    for s in split.SPLITS:
        common = examples.read(tmp_path / "sources" / f"{s}.parquet").to_pylist()
        assert sorted(r["source_id"] for r in common) == sorted(
            pq.read_table(tmp_path / "split" / f"{s}.parquet").column("id").to_pylist()
        )
        assert all(r["source"] == "wikiref" and r["split"] == s and r["standin"] for r in common)
        assert all(len(r["documents"]) == 1 and r["documents"][0]["origin"] == "original" for r in common)
    parts = {s: pq.read_table(tmp_path / "split" / f"{s}.parquet") for s in split.SPLITS}
    ids = {s: set(t.column("id").to_pylist()) for s, t in parts.items()}
    assert set().union(*ids.values()) == set(table.column("id").to_pylist())
    assert sum(len(v) for v in ids.values()) == table.num_rows
    keys = {s: set(t.column("doc_key").to_pylist()) for s, t in parts.items()}
    assert not (keys["train"] & keys["dev"]) and not (keys["train"] & keys["test"]) and not (keys["dev"] & keys["test"])
    assert parts["dev"].num_rows == parts["test"].num_rows == 12
    assert parts["train"].schema == table.schema

    t1 = (tmp_path / "tables" / "t1.csv").read_text().splitlines()
    assert t1[0] == "Statistic,Train,Dev,Test,Data"  # the CSV has no caption: every row says STAND-IN
    assert all(line.endswith(",STAND-IN") for line in t1[1:])
    assert [line.split(",")[0] for line in t1[1:]] == [
        "Total Examples",
        "Wiki Articles",
        "Document Tokens",
        "Document Sents",
        "Summary Tokens",
        "Summary Sents",
        "Query Depth",
        "Query Tokens",
    ]
    assert t1[1] == "Total Examples,36,12,12,STAND-IN"
    t2 = (tmp_path / "tables" / "t2.csv").read_text().splitlines()
    assert t2[0] == "Statistic,5,20,40,50,60,80,95,Data"
    assert len(t2) == 1 + len(CURATE_STATISTICS)
    md = (tmp_path / "tables" / "t1.md").read_text()
    assert "STAND-IN" in md and "| Total Examples | 36 | 12 | 12 |" in md
    assert (tmp_path / "tables" / "t2.tex").exists()
    metrics = json.loads((tmp_path / "split.json").read_text())
    assert metrics["sizes"] == {"train": 36, "dev": 12, "test": 12}
    assert metrics["doc_key_in_several_splits"] == metrics["doc_hash_in_several_splits"] == 0


def test_run_writes_the_layout_outputs(tmp_path, monkeypatch):
    """The entry point with the layout's paths (relative to the working directory), as the rule runs it."""
    monkeypatch.chdir(tmp_path)
    curated = tmp_path / layout.CURATED
    curated.parent.mkdir(parents=True)
    pq.write_table(_curated_table(), curated)
    outputs = {s: layout.SPLIT_FILE.format(split=s) for s in layout.SPLITS}
    outputs.update(table1=layout.TABLE1, table2=layout.TABLE2, metrics=layout.SPLIT_METRICS)
    metrics = split.run(PARAMS, {"curated": layout.CURATED}, outputs)
    assert metrics == json.loads((tmp_path / layout.SPLIT_METRICS).read_text())
    assert metrics["examples"] == 60 and sum(metrics["sizes"].values()) == 60
    for name in layout.SPLITS:
        assert pq.read_table(tmp_path / layout.SPLIT_FILE.format(split=name)).num_rows == metrics["sizes"][name]
    for stem in (layout.TABLE1, layout.TABLE2):
        assert all((tmp_path / f).exists() for f in layout.table_files(stem))


def test_bad_input_is_a_clear_error(tmp_path, capsys):
    curated = tmp_path / "examples.parquet"
    pq.write_table(_curated_table(n=4), curated)
    args = [
        "--curated",
        str(curated),
        "--out-dir",
        str(tmp_path / "split"),
        "--table1",
        str(tmp_path / "t1"),
        "--table2",
        str(tmp_path / "t2"),
        "--metrics",
        str(tmp_path / "m.json"),
    ]
    too_big = dict(PARAMS, split={"dev": 3, "test": 3})
    assert cli_main(["split", "--params-json", json.dumps(too_big), *args]) == 1
    assert "exceed the 4 curated examples" in capsys.readouterr().err
    pq.write_table(_curated_table(n=4).drop_columns(["doc_hash"]), curated)
    with pytest.raises(SchemaError, match="doc_hash"):
        split.run(PARAMS, {"curated": curated}, {})
    assert cli_main(["split", "--params-json", json.dumps(PARAMS), *args]) == 1
    assert "missing columns ['doc_hash']" in capsys.readouterr().err
    assert not (tmp_path / "m.json").exists()
