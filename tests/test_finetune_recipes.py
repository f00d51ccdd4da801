"""finetune.loss / finetune.target in DUC fine-tuning (wikiref.supervised.duc_finetune): the ranking and classification
losses train, the cluster is each document's ranking group, standardise keeps its statistics."""

from __future__ import annotations

import re

import pytest
from test_finetune import _params, _settings

from wikiref.model.targets import TARGET_FILE, load_transform
from wikiref.stages import finetune as stage
from wikiref.supervised import duc_finetune as ft


@pytest.mark.parametrize(
    ("loss", "transform", "head"),
    [("listwise", "standardise", "regression"), ("pairwise", "raw", "regression"), ("bce", "raw", "classification")],
)
def test_finetune_with_a_recipe(tmp_path, duc_years, loss, transform, head):
    target = {"transform": transform, "scale": 1.0, "top": 2}
    p = _params(settings=_settings("qbert"), keep_models=True, loss=loss, target=target, epochs=1)
    out = tmp_path / "qbert"
    m, preds, summaries = _train_on_2006(p, "qbert", duc_years, out, tmp_path)
    assert m["training"]["best_epoch"] == 1 and 0 <= m["test"]["ROUGE-2"]["R"] <= 1
    assert set(summaries) == {"alpha2006", "beta2006", "gamma2006"}
    model, _ = _load(out)
    assert model.config.head == head and model.config.loss_name == loss
    saved = load_transform(out)
    if transform == "standardise":  # fitted on the training clusters only, kept with the checkpoint
        assert saved is not None and saved.name == "standardise" and saved.std > 0
    else:
        assert saved is None and not (out / TARGET_FILE).exists()


def _train_on_2006(p, setting, duc_years, out, tmp_path):
    """ft.train_and_test of ``setting`` (from the encoder: no start files) with DUC 2006 held out, into ``out``."""
    return ft.train_and_test(p, setting, 2006, duc_years, out, progress=False)


def _load(path):
    from wikiref.model import load_scorer

    return load_scorer(path)


def test_targets_follow_the_params(duc_years):
    """apply_targets: raw x scale multiplies the raw ROUGE values (the old target_scale); bce labels the top sentences of
    a cluster; the cluster is the ranking group."""
    from wikiref.model.targets import apply_targets

    df = ft.load_year(duc_years[2006])
    ex, used, _ = ft.to_examples(df)
    raw, _, _ = ft.to_examples(df)
    groups = [str(t) for t in used["topic"]]
    apply_targets({"loss": "mse", "target": {"transform": "raw", "scale": 100.0, "top": 3}}, ex, [], groups, [])
    assert [e.targets for e in ex] == [[100.0 * t for t in e.targets] for e in raw]
    assert [e.group for e in ex] == groups
    lab, _, _ = ft.to_examples(df)
    apply_targets({"loss": "bce", "target": {"transform": "raw", "scale": 1.0, "top": 2}}, lab, [], groups, [])
    for g in set(groups):
        labels = [x for e, gg in zip(lab, groups) if gg == g for x in e.targets]
        assert set(labels) <= {0.0, 1.0} and 1 <= sum(labels) <= 2


def test_a_bi_setting_with_its_own_recipe(tmp_path, duc_years):
    """finetune.settings[].pairing: bi and .recipe (the setting's own loss / target / lr / epochs): the section's
    values stay for the others; the saved scorer is a bi scorer trained with the setting's loss."""
    recipe = {"loss": "pairwise", "target": {"transform": "raw", "scale": 1.0, "top": 3}, "epochs": 1, "lr": 1e-3}
    bi = {"name": "qbert_bi", "label": "Q-BERT (bi)", "init": "encoder", "pooling": "mean", "pairing": "bi",
          "method": "full", "recipe": recipe}  # fmt: skip
    p = _params(settings=[*_settings("qbert"), bi], keep_models=True, epochs=2)
    out = tmp_path / "bi"
    m, preds, summaries = _train_on_2006(p, "qbert_bi", duc_years, out, tmp_path)
    assert m["start"]["pairing"] == "bi" and m["training"]["best_epoch"] == 1  # recipe epochs: 1 (section: 2)
    assert set(summaries) == {"alpha2006", "beta2006", "gamma2006"} and 0 <= m["test"]["ROUGE-2"]["R"] <= 1
    model, _ = _load(out)
    assert model.config.pairing == "bi" and model.config.loss_name == "pairwise"
    assert len(preds) and all(len(s) for s in preds["sentence_scores"])
    bad = dict(bi, init="pretrained", variant="best")  # the WikiRef variants of _params are cross scorers
    with pytest.raises(ft.FinetuneError, match="no pretrain variant with a pretrained encoder, the query, pairing bi"):
        ft.start_model(_params(settings=[bad]), bad)
    with pytest.raises(ft.FinetuneError, match="variant reg_bert is a cross-pairing scorer"):
        ft.start_model(_params(settings=[bad]), dict(bad, variant="reg_bert"))
    with pytest.raises(ft.FinetuneError, match="cannot use method iterative"):
        ft.start_model(_params(settings=[bad]), dict(bi, method="iterative"))
    with pytest.raises(ft.FinetuneError, match="recipe keys"):
        ft.setting_params(p, dict(bi, recipe={"warmup": 1}))


def test_a_setting_with_its_own_encoder_starts_from_it():
    """finetune.settings[].encoder: an init-encoder setting builds its scorer on that encoder, not model.encoder (the
    paper parameter set's bi row uses the sentence encoder the study measured); Table VI's notes name it; the +DA
    comparison pairs the encoder alone with a WikiRef checkpoint of the same encoder only; a checkpoint start refuses it."""
    from wikiref.model.encoders import MINILM

    bi = {"name": "qbert_bi", "label": "Q-BERT (bi)", "init": "encoder", "encoder": MINILM, "pooling": "mean",
          "pairing": "bi", "method": "full"}  # fmt: skip
    p = _params(settings=[bi])
    assert p["model"]["encoder"] != MINILM
    model, _, info = ft.start_model(p, bi)
    assert model.config.encoder == MINILM and info["encoder"] == MINILM and info["pairing"] == "bi"
    plain = dict(bi, name="plain")
    del plain["encoder"]
    assert ft.start_model(p, plain)[2]["encoder"] == p["model"]["encoder"]
    notes = stage.table6_notes(p, {"comparisons": [], "settings": {"qbert_bi": {}}, "years": []})
    assert f"qbert_bi: encoder {MINILM} (not {p['model']['encoder']})" in notes
    assert "ranked across the cluster" in notes  # duc.select.mmr null: rank order; else the notes name MMR
    mmr = {**p, "duc": {**p["duc"], "select": {**p["duc"]["select"], "mmr": 0.7}}}
    assert "maximal marginal relevance (lambda 0.7)" in stage.table6_notes(
        mmr, {"comparisons": [], "settings": {}, "years": []}
    )
    for bad in (dict(bi, init="pretrained", variant="best"), dict(bi, method="ltr", ltr={"targets": ["raw"]})):
        with pytest.raises(ft.FinetuneError, match="encoder .instead of model.encoder. needs init: encoder"):
            ft.settings({"settings": [bad]})
    cross = dict(plain, name="qbert", pairing="cross", pooling="query")
    da = {"name": "qbert_da", "label": "Q-BERT + DA", "init": "pretrained", "variant": "reg_qbert", "method": "full"}
    r2 = {"qbert": [1.0], "qbert_da": [2.0]}

    def jobs(alone: str, checkpoint: str) -> dict:  # the encoders the two jobs' starts record
        starts = {"qbert": ("encoder", alone), "qbert_da": ("pretrained", checkpoint)}
        return {n: {2006: {"start": {"pooling": "query", "init": i, "encoder": e}}} for n, (i, e) in starts.items()}

    assert stage._comparisons(jobs(MINILM, "tiny-random"), [cross, da], [2006], r2) == []
    assert [c["what"] for c in stage._comparisons(jobs(MINILM, MINILM), [cross, da], [2006], r2)] == [
        "data augmentation (+DA)"
    ]


def test_the_papers_recipe_on_a_bi_scorer(tmp_path, duc_years):
    """pretrain.variants[].pairing: bi with its own recipe (loss, lr, epochs, batch): a bi scorer pre-trained on
    oracle-format data, then fine-tuned on DUC from that checkpoint (+DA) beside the same bi setting from the
    encoder alone; Table VI's +DA comparison pairs the two."""
    from test_finetune import TINY_ENCODER

    from wikiref.model import load_scorer
    from wikiref.stages import pretrain as pt
    from wikiref.supervised import pretraining as go
    from wikiref.supervised.duc_finetune import Start

    recipe = {"loss": "pairwise", "target": {"transform": "raw", "scale": 1.0, "top": 3}, "epochs": 1, "lr": 1e-3}
    bi = {"name": "qbert_bi", "label": "Q-BERT (bi)", "init": "encoder", "pooling": "mean", "pairing": "bi",
          "method": "full", "recipe": recipe}  # fmt: skip
    bi_da = dict(bi, name="qbert_bi_da", label="Q-BERT (bi) + DA", init="pretrained", variant="reg_bi")
    del bi_da["pooling"]
    p = _params(settings=[bi, bi_da])
    variant = {"name": "reg_bi", "label": "Q-BERT (bi)", "head": "regression", "pooling": "mean", "query": True,
               "init": "pretrained", "pairing": "bi", "recipe": {"loss": "pairwise", "lr": 5e-4, "epochs": 1}}  # fmt: skip
    p["pretrain"]["variants"].append(variant)
    data = tmp_path / "oracle"
    frames = {s: pt.synthetic_oracle_frame(n, i, s) for i, (s, n) in enumerate((("train", 10), ("dev", 4)))}
    pt.write_oracle_splits({**frames, "test": frames["dev"]}, data)
    splits = {s: data / f"{s}.parquet" for s in ("train", "dev", "test")}
    result = go.train_variant(p, "reg_bi", splits, tmp_path / "reg_bi", progress=False)
    assert len(result.history) == 1  # the variant's epochs (the section's: 2)
    model, _ = load_scorer(tmp_path / "reg_bi")
    assert model.config.pairing == "bi" and model.config.loss_name == "pairwise"
    metrics = go.evaluate_variant(p, "reg_bi", tmp_path / "reg_bi", splits)
    assert metrics["pairing"] == "bi" and metrics["encoder"] == TINY_ENCODER["encoder"]

    start = Start(checkpoints={"reg_bi": tmp_path / "reg_bi"})
    da, _, _ = ft.train_and_test(p, "qbert_bi_da", 2006, duc_years, tmp_path / "da", start=start, progress=False)
    assert da["start"]["variant"] == "reg_bi" and da["start"]["pairing"] == "bi"
    alone, _, _ = _train_on_2006(p, "qbert_bi", duc_years, tmp_path / "alone", tmp_path)
    assert da["start"]["encoder"] == alone["start"]["encoder"] == TINY_ENCODER["encoder"]
    summary = stage.summary_metrics({"qbert_bi": {2006: alone}, "qbert_bi_da": {2006: da}}, [bi, bi_da], [2006], {})
    assert [(c["what"], c["setting"], c["reference"]) for c in summary["comparisons"]] == [
        ("data augmentation (+DA)", "qbert_bi_da", "qbert_bi")
    ]
    for bad, msg in (
        (dict(variant, query=False), "pairing bi scores sentences against the query"),
        (dict(variant, recipe={"warmup": 1}), "recipe keys"),
        (dict(variant, recipe={"loss": "bce"}), "does not fit the regression head"),
    ):
        with pytest.raises(go.PretrainError, match=msg):
            go.variants({"variants": [bad]})


def test_an_interpolated_setting_tests_and_keeps_the_point_dev_chose(tmp_path, duc_years, monkeypatch):
    """settings[].interpolate: after training, the weights move to the start-to-fine-tuned point with the best dev
    ROUGE-2 recall (1 always a candidate); the test predictions and the kept checkpoint are that point's. The dev
    metric is made to prefer alpha 0 (the start), so the kept weights must be the start's."""
    import numpy as np
    import torch

    recipe = {"loss": "pairwise", "target": {"transform": "raw", "scale": 1.0, "top": 3}, "epochs": 1, "lr": 1e-3}
    bi = {"name": "bi_wise", "label": "Q-BERT (bi) + WiSE", "init": "encoder", "pooling": "mean", "pairing": "bi",
          "method": "full", "recipe": recipe, "interpolate": [0.0, 0.5]}  # fmt: skip
    p = _params(settings=[bi], keep_models=True)
    real = ft.dev_metric_fn
    calls = []

    def preferring_the_start(dev, duc):
        fn = real(dev, duc)

        def metric(scores):  # call 1: the epoch's choice; then alpha 0, 0.5, 1 in that order
            calls.append(fn(scores))
            return {1: 1.0, 2: 3.0, 3: 2.0, 4: 1.0}[len(calls)]

        return metric

    monkeypatch.setattr(ft, "dev_metric_fn", preferring_the_start)
    out = tmp_path / "wise"
    m, preds, _ = _train_on_2006(p, "bi_wise", duc_years, out, tmp_path)
    assert len(calls) == 4 and m["interpolation"] == {
        "alpha": 0.0,
        "metric": 3.0,
        "by_alpha": {"0.0": 3.0, "0.5": 2.0, "1.0": 1.0},
    }
    kept, tok = _load(out)
    start, _, _ = ft.start_model(ft.setting_params(p, bi), bi)
    want = start.state_dict()
    assert all(torch.allclose(v.cpu(), want[k].cpu()) for k, v in kept.state_dict().items())
    again = ft.score_rows(kept, tok, ft.load_year(duc_years[2006]), p["model"])
    for got, expected in zip(again, preds["sentence_scores"]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    # the job compares the test year with its start's scores: here the start itself, so no difference
    assert m["paired_vs_start"]["difference"] == 0.0 and m["paired_vs_start"]["n"] == 3
    summary = stage.summary_metrics({"bi_wise": {2006: m}}, [bi], [2006], {})
    assert summary["settings"]["bi_wise"]["years"]["2006"]["alpha"] == 0.0
    notes = stage.table6_notes(p, summary)
    assert "bi_wise: weights interpolated between its start and its fine-tuned weights" in notes and "(2006 0;" in notes
    assert re.search(r"bi_wise 2006 vs its start, paired bootstrap of R-2: \+0\.00 \(p [01]\.\d{3}\)", notes)
    with pytest.raises(ft.FinetuneError, match="interpolate needs a fine-tuning method"):
        ft.settings({"settings": [dict(bi, init="pretrained", variant="best", method="none")]})


def test_a_rule_with_several_mmr_weights_takes_the_one_each_row_s_dev_clusters_prefer(tmp_path, duc_years, monkeypatch):
    """duc.select.mmr as a list: after the epoch and the interpolation (chosen in rank order), the job's dev
    clusters choose the weight; the test year's summaries, and its start's for the paired test, use it. The dev
    value is made to prefer weight 0, so the job must test with 0."""
    from wikiref.supervised import duc_summaries as ds

    recipe = {"loss": "pairwise", "target": {"transform": "raw", "scale": 1.0, "top": 3}, "epochs": 1, "lr": 1e-3}
    bi = {"name": "bi_mmr", "label": "Q-BERT (bi)", "init": "encoder", "pooling": "mean", "pairing": "bi",
          "method": "full", "recipe": recipe, "interpolate": [0.5]}  # fmt: skip
    p = _params(settings=[bi])
    p["duc"]["select"]["mmr"] = [0.0, 1.0]
    real = ds.dev_metric_fn

    def preferring_novelty(dev, duc):
        fn = real(dev, duc)
        return lambda scores: fn(scores) + (100.0 if duc["select"]["mmr"] == 0.0 else 0.0)

    monkeypatch.setattr(ds, "dev_metric_fn", preferring_novelty)
    m, preds, summaries = _train_on_2006(p, "bi_mmr", duc_years, tmp_path / "bi", tmp_path)
    assert m["select"]["mmr"] == 0.0 and set(m["select"]["held_out"]) == {"0", "1"}
    assert m["select"]["held_out"]["0"] >= 100.0 > m["select"]["held_out"]["1"]
    test = ft.load_year(duc_years[2006])
    with_weight = {**p["duc"], "select": {**p["duc"]["select"], "mmr": 0.0}}
    got, got_summaries = ds.evaluate_year(test, preds["sentence_scores"], with_weight)
    assert got["ROUGE-2"] == m["test"]["ROUGE-2"] and got_summaries == summaries
    ranked = ds.cluster_summaries(test, preds["sentence_scores"], max_words=250, max_bigram_overlap=0.5, fill="skip")
    assert ranked[0] != summaries  # the weight changed the summaries: the test year took it
    summary = stage.summary_metrics({"bi_mmr": {2006: m}}, [bi], [2006], {})
    assert summary["settings"]["bi_mmr"]["years"]["2006"]["mmr"] == 0.0
    notes = stage.table6_notes(p, summary)
    assert "lambda chosen among 0, 1 (1: rank order)" in notes and "MMR lambda per year: bi_mmr 2006 0." in notes
    with pytest.raises(ValueError, match="several weights"):  # a rule not fixed never scores a test year
        ds.evaluate_year(test, preds["sentence_scores"], p["duc"])
