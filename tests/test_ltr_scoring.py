"""The learning-to-rank scorer on the benchmarks: the finetune stage's ``method: ltr`` on DUC (synthetic years,
the tiny random encoder), the qmsum stage's ``ltr`` job on the STAND-IN, and the QMSum re-split of a training
file's meetings."""

from __future__ import annotations

import copy
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from wikiref import config, layout
from wikiref.extractive.ltr import FEATURES, SIGNAL_FEATURES
from wikiref.stages import finetune as ft
from wikiref.stages.qmsum import stage as qstage
from wikiref.supervised import duc_finetune as fd
from wikiref.supervised import duc_summaries as ds
from wikiref.supervised import ltr_scoring as ls

sys.path.insert(0, str(Path(__file__).parent))
from test_finetune import _params, _start_files, _tiny_checkpoint  # noqa: E402  (the finetune tests' tiny params)

torch.set_num_threads(1)

LTR = {
    "name": "ltr",
    "label": "LTR",
    "init": "encoder",
    "method": "ltr",
    "ltr": {"targets": ["doc_max", "per_word"], "max_iter": 60, "min_samples_leaf": 3},
}


def _ltr_params() -> dict:
    p = _params(settings=[copy.deepcopy(LTR)])
    p["duc"]["select"] = {"max_bigram_overlap": 0.5, "fill": "skip", "mmr": None}
    p["duc"]["summary_words"] = 10  # one or two sentences of a synthetic cluster: the ranking decides
    return p


def test_ltr_settings_are_checked():
    for bad in (
        {**LTR, "ltr": {"targets": []}},
        {**LTR, "ltr": {}},
    ):
        with pytest.raises(fd.FinetuneError, match="method ltr needs"):
            fd.settings({"settings": [bad]})
    with pytest.raises(fd.FinetuneError, match="needs variant"):
        fd.settings({"settings": [{**LTR, "init": "pretrained"}]})
    assert fd.settings({"settings": [LTR]})["ltr"]["method"] == "ltr"  # no pooling needed
    s = ls.ranker_settings({"targets": ["doc_rank", "raw"], "max_iter": 7, "encoder": "x"}, seed=3)
    assert [(r.target, r.max_iter, r.seed) for r in s] == [("doc_rank", 7, 3), ("raw", 7, 3)]
    assert ls.encoder_name({"encoder": None}, {"encoder": "m"}) == "m"
    assert ls.encoder_name({"encoder": "e"}, {"encoder": "m"}) == "e"


def test_duc_clusters_rank_across_documents_with_positions_in_each(duc_years, caplog):
    df = fd.load_year(duc_years[2007])
    embedder = ls.Embedder("tiny-random", seed=0)
    with caplog.at_level(logging.INFO, logger=ls.__name__):
        clusters = ls.duc_clusters(ls.cut_documents(df, 2), embedder)
    assert [c.topic for c in clusters] == sorted(df["topic"].unique())
    n = len(clusters)  # progress: after each tenth of the clusters (each one when fewer than ten) and the last
    assert caplog.records[-1].getMessage().startswith(f"LTR: DUC clusters featurised: {n}/{n} (")
    for c in clusters:
        rows = df.loc[c.rows]
        assert (rows["topic"] == c.topic).all() and list(rows["doc_position"]) == sorted(rows["doc_position"])
        assert c.sizes == [min(len(s), 2) for s in rows["doc_sentences"]]
        assert c.x.shape == (sum(c.sizes), len(FEATURES)) and len(c.y) == sum(c.sizes)
        pos = c.x[:, FEATURES.index("position")]
        assert list(pos[:2]) == [0.0, 1.0]  # relative to the sentence's own document, not the cluster
    scores = ls.row_scores(clusters, len(df), lambda x: x[:, FEATURES.index("tfidf")])
    assert [len(s) for s in scores] == [min(len(s), 2) for s in df["doc_sentences"]]
    # a trained scorer's sentence scores as a signal: three more columns, over the cluster
    signal = [np.arange(len(s), dtype=float) for s in df["doc_sentences"]]
    with_signal = ls.duc_clusters(df, embedder, signal)
    for c in with_signal:
        assert c.x.shape == (sum(c.sizes), len(FEATURES) + len(SIGNAL_FEATURES))
        raw = c.x[:, len(FEATURES)]
        assert list(raw[: c.sizes[0]]) == list(range(c.sizes[0]))  # the first document's sentences, in order
        rank = c.x[:, -1]  # the percentile rank over the cluster (ties share theirs)
        assert np.all(np.diff(rank[np.argsort(raw, kind="stable")]) >= 0) and 0 < rank.max() <= 1


def test_duc_ltr_job_learns_what_the_cosine_misses(duc_years, tmp_path):
    params = _ltr_params()
    paths = {y: duc_years[y] for y in (2005, 2006, 2007)}
    m, preds, summaries = fd.train_and_test(params, "ltr", 2007, paths, tmp_path / "ltr", progress=False)
    assert m["method"] == "ltr" and m["train_years"] == [2005, 2006] and m["standin"]
    assert m["training"]["chosen_target"] in ("doc_max", "per_word")
    assert set(m["training"]["dev_values"]) == {"doc_max", "per_word", "cosine"}
    assert json.loads((tmp_path / "ltr" / "ranker.json").read_text())["chosen_target"] == m["training"]["chosen_target"]
    # each synthetic document restates the reference in one sentence that names the topic (the query): the
    # ranker learns to put it first in every test document
    assert m["test"]["ROUGE-2"]["R"] >= m["cosine"]["test"]["ROUGE-2"]["R"]
    assert m["paired_vs_cosine"]["n"] == m["test_topics"] == 3
    for topic, sents in summaries.items():
        assert any(f"the {topic} river bridge opened" in s for s in sents)
    test = fd.load_year(paths[2007])
    assert [len(s) for s in preds["sentence_scores"]] == [len(s) for s in test["doc_sentences"]]
    for scores, (_, r) in zip(preds["sentence_scores"], test.iterrows()):
        assert f"the {r['topic']} river bridge opened" in r["doc_sentences"][int(np.argmax(scores))]
    again, _, _ = fd.train_and_test(params, "ltr", 2007, paths, tmp_path / "again", progress=False)
    assert again["test"] == m["test"]  # same params + seed -> same outputs


def test_the_ranker_and_its_cosine_each_take_the_mmr_weight_their_dev_summaries_prefer(duc_years, tmp_path):
    params = _ltr_params()
    params["duc"]["select"]["mmr"] = [0.0, 1.0]
    paths = {y: duc_years[y] for y in (2005, 2006, 2007)}
    m, preds, summaries = fd.train_and_test(params, "ltr", 2007, paths, tmp_path / "ltr", progress=False)
    dev_values = m["training"]["dev_values"]  # rank order: what weight 1 gives, by the ranker before its refit
    for chosen, at_one in (
        (m["select"], dev_values[m["training"]["chosen_target"]]),
        (m["cosine"]["select"], dev_values["cosine"]),
    ):
        assert set(chosen["held_out"]) == {"0", "1"} and chosen["held_out"]["1"] == at_one
        assert chosen["mmr"] == max((1.0, 0.0), key=lambda w: (chosen["held_out"][f"{w:g}"], w))
    rule = {**params["duc"], "select": {**params["duc"]["select"], "mmr": m["select"]["mmr"]}}
    got, got_summaries = ds.evaluate_year(fd.load_year(paths[2007]), preds["sentence_scores"], rule)
    assert got["ROUGE-2"] == m["test"]["ROUGE-2"] and got_summaries == summaries
    assert "dev_scores" not in json.loads((tmp_path / "ltr" / "ranker.json").read_text())


def test_a_scorer_signal_reaches_the_ranker(duc_years):
    """fit_and_score_clusters with a signal that knows the answer (each sentence's own target): the ranker puts
    every test document's best sentence first, which the tiny random encoder's features alone do not."""
    years = {y: fd.load_year(duc_years[y]) for y in (2005, 2006, 2007)}
    train, dev = fd.held_out_split(pd.concat([years[2005], years[2006]], ignore_index=True), 0.3, 13)
    embedder = ls.Embedder("tiny-random", seed=0)
    metric = ds.dev_metric_fn(dev, _ltr_params()["duc"])
    candidates = ls.ranker_settings({"targets": ["doc_max"], "max_iter": 60, "min_samples_leaf": 3}, 13)

    def oracle(df):
        return [np.asarray(t, dtype=float) for t in df["sentence_targets"]]

    scores, cos, record = ls.fit_and_score_clusters(
        train, dev, years[2007], embedder, candidates, metric, signal=oracle
    )
    assert record["chosen_target"] == "doc_max" and len(scores) == len(cos) == len(years[2007])
    for s, t in zip(scores, years[2007]["sentence_targets"]):
        assert len(s) == len(t) and int(np.argmax(s)) == int(np.argmax(t))


def test_ltr_with_the_da_scorer_as_a_signal(duc_years, tmp_path):
    """method ltr, init pretrained: the checkpoint (variant best) scores every sentence, one more signal; the job
    records where it started and is a row of its own in Table VI, compared with LTR alone."""
    from wikiref.files import write_json

    models, metrics = tmp_path / "models", tmp_path / "metrics"
    for variant, pooling, head, seed, r2 in (
        ("clf_qbert", "query", "classification", 1, 3.0),
        ("reg_bert", "cls", "regression", 2, 4.0),
    ):
        _tiny_checkpoint(models / variant, pooling, head, seed=seed)
        write_json(metrics / f"pretrain_{variant}.json", {"dev": {"rouge2": r2}})
    ltr_da = {**copy.deepcopy(LTR), "name": "ltr_da", "label": "LTR + DA", "init": "pretrained", "variant": "best"}
    params = _ltr_params()
    params["finetune"]["settings"].append(ltr_da)
    paths = {y: duc_years[y] for y in (2005, 2006, 2007)}
    start = fd.start_from_files(_start_files(models, metrics))  # best: reg_bert (the higher dev ROUGE-2)
    jobs = {"ltr": {}, "ltr_da": {}}
    for name in jobs:
        m, preds, _ = fd.train_and_test(params, name, 2007, paths, tmp_path / name, start=start, progress=False)
        jobs[name][2007] = m
    m = jobs["ltr_da"][2007]
    assert m["method"] == "ltr" and m["start"]["variant"] == "reg_bert" and "signal" in m["start"]
    assert [len(s) for s in preds["sentence_scores"]] == [len(s) for s in fd.load_year(paths[2007])["doc_sentences"]]
    assert "cosine" in m and m["paired_vs_cosine"]["n"] == 3
    specs = [LTR, ltr_da]
    df = ft.table6({"systems": {}}, jobs, specs, [2007])
    assert list(df["System"]) == ["LTR", "COSINE (tiny-random, untrained)", "LTR + DA"]  # one cosine row
    assert df.loc[2, "Group"] == "learning to rank + DA scorer (reg_bert)"
    whats = {c["what"] for c in ft.summary_metrics(jobs, specs, [2007], {})["comparisons"]}
    assert "the DA scorer as a ranking signal" in whats


def test_table6_shows_the_ltr_row_its_cosine_and_paired_notes(duc_years, tmp_path):
    params = _ltr_params()
    paths = {y: duc_years[y] for y in (2005, 2006, 2007)}
    jobs = {"ltr": {}}
    for y in (2005, 2006, 2007):
        jobs["ltr"][y], _, _ = fd.train_and_test(params, "ltr", y, paths, tmp_path / str(y), progress=False)
    base = {"systems": {"query_sim": {str(y): jobs["ltr"][y]["cosine"]["test"] for y in (2005, 2006, 2007)}}}
    df = ft.table6(base, jobs, [LTR], [2005, 2006, 2007])
    assert list(df["System"]) == ["QUERY-SIM", "LTR", "COSINE (tiny-random, untrained)"]
    assert df.loc[1, "Group"].startswith("learning to rank")
    summary = ft.summary_metrics(jobs, [LTR], [2005, 2006, 2007], base)
    paired = summary["paired"]["ltr"]["2007"]
    # the stand-in QUERY-SIM here is the cosine, so both comparisons are the same numbers
    assert paired["vs QUERY-SIM"]["difference"] == pytest.approx(paired["vs cosine"]["difference"])
    notes = ft.table6_notes(params, summary)
    assert re.search(r"ltr 2007 vs cosine, paired bootstrap of R-2: [+-]\d+\.\d\d \(p [01]\.\d{3}\)", notes)


# --------------------------------------------------------------------------- QMSum


@pytest.fixture(scope="module")
def qmsum_prepared(tmp_path_factory, repo):
    root = tmp_path_factory.mktemp("qmsum-ltr")
    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])
    qstage.standin(params, {}, {"file": root / "standin.jsonl"})
    outs = {s: root / f"{s}.parquet" for s in layout.SPLITS}
    qstage.prepare(
        params, {"standin": root / "standin.jsonl"}, {**outs, "stats": root / "s.json", "metrics": root / "m.json"}
    )
    return root, params


def test_qmsum_ltr_job_table_metrics_and_labels(qmsum_prepared):
    root, params = qmsum_prepared
    inputs = {s: root / f"{s}.parquet" for s in ("train", "dev", "test")}
    outputs = {"table": root / "ltr", "metrics": root / "ltr.json"}
    m = qstage.ltr(params, inputs, outputs)
    assert m["standin"] and m["encoder"] == "tiny-random"
    assert set(m["settings"]) == set(params["qmsum"]["ltr"]["settings"])
    for res in m["settings"].values():
        assert res["training"]["chosen_target"] in params["qmsum"]["ltr"]["targets"]
        assert set(res["paired"]) == {"vs QUERY-SIM", "vs COSINE"}
        assert len(res["systems"]) == 3 and all("f1_by_example" not in r["rouge2"] for r in res["systems"].values())
    table = pd.read_csv(root / "ltr.csv")
    assert (table["Data"] == "STAND-IN").all() and len(table) == 3 * len(m["settings"])
    assert json.loads((root / "ltr.json").read_text()) == json.loads(json.dumps(m))
    # the QUERY-SIM row is the baselines job's QUERY-SIM on the same queries
    base = qstage.baselines(params, {"test": inputs["test"]}, {"table": root / "b", "metrics": root / "b.json"})
    for setting in set(params["qmsum"]["settings"]) & set(m["settings"]):
        ours = m["settings"][setting]["systems"]["QUERY-SIM"]["rouge2"]["f1"]
        assert ours == base["systems"]["query_sim"][setting]["rouge2"]["f1"]


def test_the_ranker_refuses_a_split_without_queries_before_embedding(qmsum_prepared, tmp_path):
    """The qmsum stage's ranker and the comparison's share the check: an empty split is a clear error, raised
    before any turn is embedded."""
    from wikiref.supervised.qmsum_finetune import QmsumStageError

    root, params = qmsum_prepared
    splits = {s: qstage.load_split(root / f"{s}.parquet") for s in ("train", "dev", "test")}
    cache = ls.TurnEmbeddings(ls.Embedder("tiny-random", seed=0))
    for empty in ("train", "dev", "test"):
        cut = {**splits, empty: splits[empty].head(0)}
        with pytest.raises(QmsumStageError, match=f"'{empty}': 0"):
            ls.fit_and_extract_queries(
                cut, "gold_span", cache, ls.ranker_settings(params["qmsum"]["ltr"], 0), 50, span_targets=False
            )
    assert not cache.vectors
    splits["dev"].head(0).to_parquet(tmp_path / "dev.parquet")
    inputs = {"train": root / "train.parquet", "dev": tmp_path / "dev.parquet", "test": root / "test.parquet"}
    with pytest.raises(QmsumStageError, match="'dev': 0"):
        qstage.ltr(params, inputs, {"table": tmp_path / "ltr", "metrics": tmp_path / "ltr.json"})
    assert not (tmp_path / "ltr.json").exists()


def test_transcript_span_targets_zero_outside_the_span(qmsum_prepared, caplog):
    root, _ = qmsum_prepared
    df = qstage.load_split(root / "train.parquet")
    df = df[df["query_type"] == "specific"].head(2)
    cache = ls.TurnEmbeddings(ls.Embedder("tiny-random", seed=0))
    with caplog.at_level(logging.INFO, logger=ls.__name__):  # long work shows progress
        masked = ls.qmsum_documents(df, "transcript", cache, span_targets=True)
    assert [r.getMessage().split(" (")[0] for r in caplog.records] == [
        "LTR: QMSum transcript documents featurised: 1/2",
        "LTR: QMSum transcript documents featurised: 2/2",
    ]
    plain = ls.qmsum_documents(df, "transcript", cache, span_targets=False)
    for d, p, (_, r) in zip(masked, plain, df.iterrows()):
        inside = np.isin(np.arange(len(d["y"])), np.asarray(r["span_turns"], dtype=int))
        assert (d["y"][~inside] == 0).all() and np.array_equal(d["y"][inside], p["y"][inside])
        assert np.array_equal(d["x"], p["x"])
    n = len(cache.vectors)
    ls.qmsum_documents(df, "gold_span", cache, span_targets=True)
    assert len(cache.vectors) == n  # every turn was embedded once already


def test_prepare_resplits_only_the_pool_files_meetings(qmsum_prepared, tmp_path):
    """The sample's layout: a training file whose meetings give train and dev, a validation file that stays the
    test split whole."""
    root, params = qmsum_prepared
    lines = (root / "standin.jsonl").read_text().splitlines()
    (tmp_path / "train.jsonl").write_text("\n".join(lines[:4]) + "\n")
    (tmp_path / "val.jsonl").write_text("\n".join(lines[4:]) + "\n")
    p = copy.deepcopy(params)
    files = {"train": str(tmp_path / "train.jsonl"), "dev": None, "test": str(tmp_path / "val.jsonl")}
    p["qmsum"].update(
        standin=False, files=files, resplit={"enabled": True, "pool": ["train"], "dev": 0.25, "test": 0.0}
    )
    outs = {s: tmp_path / f"{s}.parquet" for s in layout.SPLITS}
    m = qstage.prepare(p, {}, {**outs, "stats": tmp_path / "s.json", "metrics": tmp_path / "m.json"})
    meetings = {s: set(qstage.load_split(outs[s])["meeting_id"]) for s in layout.SPLITS}
    assert m["splits"]["test"]["meetings"] == len(lines) - 4 and m["splits"]["dev"]["meetings"] == 1
    assert m["splits"]["train"]["meetings"] == 3
    assert not meetings["test"] & (meetings["train"] | meetings["dev"])


def test_embedder_on_an_accelerator_gives_the_cpu_vectors():
    """The ranker's embeddings are made where the encoder is (``model.device``): on an emulated accelerator, a
    tensor created on the CPU meeting the encoder's would raise; the vectors equal the CPU's."""
    from emulated_device import emulated_accelerator

    texts = ["the harbour bridge opened", "council approved the budget", "a"]
    cpu = ls.Embedder("tiny-random", seed=0)
    expected, query = cpu.units(texts), cpu.query(["harbour", "bridge"])
    with emulated_accelerator() as device:
        dev = ls.Embedder("tiny-random", device=device, seed=0)
        assert next(dev.encoder.parameters()).device == device
        got, got_query = dev.units(texts), dev.query(["harbour", "bridge"])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_query, query, rtol=1e-5, atol=1e-6)
