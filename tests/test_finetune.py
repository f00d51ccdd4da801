"""Held-out-year fine-tuning on DUC (Table VI): data split, summaries, starting points, methods, table,
and the whole finetune target through Snakemake on a hand-made NIST-layout copy."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch
import yaml

from wikiref import config
from wikiref.files import write_json, write_parquet
from wikiref.model import subnetworks as subnet
from wikiref.registry import job_keys
from wikiref.schemas import SchemaError
from wikiref.stages import finetune as ft

sys.path.insert(0, str(Path(__file__).parent))
from test_duc_reader import make_nist_tree  # noqa: E402  (the DUC helper's NIST fixture)

from wikiref.supervised import duc_finetune as fd
from wikiref.supervised import duc_summaries as ds

torch.set_num_threads(1)

DUC_FLAGS = "-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250"


# The tiny encoder's geometry: the model section and the checkpoints made here share it.
TINY_ENCODER = dict(encoder="tiny-random", max_length=64, stride=32, max_query_tokens=32, num_levels=4)


def _table(keys: tuple[str, ...], *rows: tuple) -> list[dict]:
    """One dict a row, keys in column order; a None cell leaves its key out."""
    return [{k: v for k, v in zip(keys, row) if v is not None} for row in rows]


# The settings these tests draw from, by name (copied where used).
SETTINGS = {
    s["name"]: s
    for s in _table(
        ("name", "label", "init", "variant", "pooling", "method"),
        ("bert", "BERT", "encoder", None, "cls", "full"),
        ("qbert", "Q-BERT", "encoder", None, "query", "full"),
        ("qbert_st", "Q-BERT + ST", "encoder", None, "query", "subnet"),
        ("da_pre", "DA PRE-TRAINED", "pretrained", "best", None, "none"),
        ("qbert_da", "Q-BERT + DA", "pretrained", "best", "query", "full"),
        ("qbert_da_st", "Q-BERT + DA + ST", "pretrained", "best", "query", "subnet"),
        ("qbert_da_iter", "Q-BERT + DA + ITER", "pretrained", "clf_qbert", None, "iterative"),
    )
}


def _settings(*names: str) -> list[dict]:
    return [dict(SETTINGS[n]) for n in names]


def _optimisation() -> dict:
    """The training keys the finetune and pretrain sections share (same values in both)."""
    return dict(
        epochs=2,
        batch_size=4,
        grad_accum_steps=1,
        lr=1e-3,
        head_lr_scale=1.0,
        betas=[0.9, 0.999],
        eps=1e-8,
        weight_decay=0.01,
        warmup_ratio=0.0,
        max_grad_norm=1.0,
        bucket_batches=4,
        log_every_steps=10,
    )


def _params(**finetune_over) -> dict:
    model = dict(TINY_ENCODER, device="cpu", amp=False, attention_dropout=0.0, eval_batch_size=8)
    finetune = dict(
        settings=_settings("bert", "qbert_st", "da_pre", "qbert_da", "qbert_da_iter"),
        **_optimisation(),
        loss="mse",
        target={"transform": "raw", "scale": 100.0, "top": 3},
        dev_fraction=0.3,
        max_train_clusters=None,
        max_doc_sentences=None,
        keep_models=False,
        subnet={"fraction": 0.1, "vectors": "topk"},
        iterative={"begin": 0.0, "end": 0.5, "frequency": 1, "initial_sparsity": 0.0},
    )
    finetune.update(finetune_over)
    pretrain = dict(
        **_optimisation(),
        max_train_examples=12,
        max_eval_examples=6,
        min_sentences=1,
        lead_sentences=2,
        block_trigrams=True,
        nproc_per_node=1,
        variants=_table(
            ("name", "label", "head", "pooling", "query", "init"),
            ("reg_bert", "BERT", "regression", "cls", True, "pretrained"),
            ("clf_qbert", "Q-BERT", "classification", "query", True, "pretrained"),
            ("clf_transformer", "TRANSFORMER", "classification", "query", True, "random"),
        ),
    )
    duc_p = dict(
        standin=True,
        years=[2005, 2006, 2007],
        summary_words=250,
        rouge_flags=DUC_FLAGS,
        select={"max_bigram_overlap": 0.5, "fill": "skip", "mmr": None},
    )
    return {"seed": 5, "model": model, "finetune": finetune, "pretrain": pretrain, "duc": duc_p}


@pytest.fixture(scope="module")
def years(duc_years) -> dict[int, Path]:
    return duc_years


def _tiny_checkpoint(path: Path, pooling="query", head="classification", seed=0) -> None:
    from wikiref.model import ScorerConfig, build_scorer, save_scorer

    torch.manual_seed(seed)
    model, tok = build_scorer(ScorerConfig(**TINY_ENCODER, pooling=pooling, head=head, attention_dropout=0.0))
    save_scorer(model, tok, path)


@pytest.fixture(scope="module")
def pretrained(tmp_path_factory) -> tuple[Path, Path]:
    """models/pretrain/<variant>/ + results/metrics/pretrain_<variant>.json for two variants."""
    root = tmp_path_factory.mktemp("pre")
    models, metrics = root / "models", root / "metrics"
    _tiny_checkpoint(models / "clf_qbert", "query", "classification", seed=1)
    _tiny_checkpoint(models / "reg_bert", "cls", "regression", seed=2)
    write_json(metrics / "pretrain_clf_qbert.json", {"dev": {"rouge2": 3.0}})
    write_json(metrics / "pretrain_reg_bert.json", {"dev": {"rouge2": 4.0}})
    return models, metrics


def _start_files(models: Path, metrics: Path, variants=("reg_bert", "clf_qbert")) -> list[str]:
    """The files a job of a pretrained setting is given (as its rule declares them): each variant's checkpoint
    files in ``models``/<variant>/ and its pretrain_<variant>.json in ``metrics``."""
    return [str(f) for v in variants for f in (*(models / v / n for n in CHECKPOINT), metrics / f"pretrain_{v}.json")]


# --------------------------------------------------------------------------- settings and data


def test_settings_are_checked():
    p = _params()
    assert list(ft.settings(p["finetune"])) == ["bert", "qbert_st", "da_pre", "qbert_da", "qbert_da_iter"]
    for bad, msg in (
        ({"name": "x", "label": "X", "init": "encoder", "pooling": "cls", "method": "none"}, "needs init"),
        ({"name": "x", "label": "X", "init": "encoder", "method": "full"}, "needs a pooling"),
        ({"name": "x", "label": "X", "init": "pretrained", "method": "full"}, "needs variant"),
    ):
        with pytest.raises(ValueError, match=msg):
            ft.settings({"settings": [bad]})
    with pytest.raises(ValueError, match="duplicate"):
        ft.settings({"settings": p["finetune"]["settings"][:1] * 2})


def test_best_variant_candidates_and_choice(pretrained):
    models, metrics = pretrained
    given = fd.start_from_files(_start_files(models, metrics)).variant_metrics
    p = _params()
    s = ft.settings(p["finetune"])
    # best: pretrained encoders with the query in the input (never the random-init TRANSFORMER) ...
    assert ft.candidate_variants(s["da_pre"], p["pretrain"]) == ["reg_bert", "clf_qbert"]
    # ... optionally only those with the setting's pooling
    assert ft.candidate_variants(s["qbert_da"], p["pretrain"]) == ["clf_qbert"]
    assert ft.candidate_variants(s["bert"], p["pretrain"]) == []
    assert fd.resolve_variant(s["da_pre"], p["pretrain"], given)[0] == "reg_bert"  # dev R-2 4.0 > 3.0
    assert fd.resolve_variant(s["qbert_da"], p["pretrain"], given)[0] == "clf_qbert"
    with pytest.raises(ft.FinetuneError, match="not in pretrain.variants"):
        ft.candidate_variants({**s["qbert_da"], "variant": "nope"}, p["pretrain"])
    with pytest.raises(ft.FinetuneError, match="pretrain_reg_bert.json missing"):
        fd.resolve_variant(s["da_pre"], p["pretrain"], {"clf_qbert": metrics / "pretrain_clf_qbert.json"})
    nowhere = fd.start_from_files(_start_files(models, metrics.parent / "nowhere")).variant_metrics
    with pytest.raises(ft.FinetuneError, match="nowhere/pretrain_reg_bert.json missing"):
        fd.resolve_variant(s["da_pre"], p["pretrain"], nowhere)


def test_held_out_split_and_caps(years):
    pool = pd.concat([fd.load_year(years[y]) for y in (2005, 2006)], ignore_index=True)
    train, dev = fd.held_out_split(pool, 0.3, seed=1)
    tk, dk = set(zip(train.year, train.topic)), set(zip(dev.year, dev.topic))
    assert len(dk) == 2 and len(tk) == 4 and not tk & dk  # whole clusters, round(0.3 * 6) = 2
    assert len(train) + len(dev) == len(pool)
    again = fd.held_out_split(pool, 0.3, seed=1)[1]
    assert again.equals(dev)  # seeded
    assert len(set(zip(*[fd.held_out_split(pool, 0.01, seed=1)[1][c] for c in ("year", "topic")]))) == 1  # >= 1
    capped = fd.cap_clusters(pool, 2, seed=3)
    assert capped.groupby("year").topic.nunique().tolist() == [2, 2]
    assert fd.cap_clusters(pool, None, seed=3).equals(pool)
    with pytest.raises(ValueError, match="at least 2"):
        fd.held_out_split(pool[pool.topic == pool.topic.iloc[0]], 0.5, seed=1)


def test_examples_targets_and_sentence_cap(years):
    df = fd.load_year(years[2005])
    df.loc[0, "doc_sentences"] = []
    df.loc[0, "sentence_targets"] = []
    ex, used, counts = fd.to_examples(df, max_doc_sentences=3)
    assert counts["empty_documents"] == 1 and counts["used"] == len(df) - 1 == len(ex) == len(used)
    assert all(len(e.sentences) <= 3 for e in ex)
    r = used.iloc[0]
    assert ex[0].targets == pytest.approx(list(r.sentence_targets[:3]))
    assert ex[0].query == list(r.query)


def test_cluster_summaries_rank_across_documents():
    df = pd.DataFrame(
        {
            "topic": ["T", "T"],
            "doc_position": [1, 0],
            "doc_sentences": [
                ["b one two three .", "b four five six ."],
                ["a one two three .", "a seven eight nine ."],
            ],
        }
    )
    # Row 0 is the second document of the cluster; "a one two three ." repeats 2 of its 3 bigrams (skipped);
    # an unscored (NaN) sentence ranks last.
    out, unscored = ds.cluster_summaries(
        df, [[0.9, np.nan], [0.1, 0.95]], max_words=15, max_bigram_overlap=0.5, fill="skip"
    )
    assert unscored == 1
    assert out["T"] == ["a seven eight nine .", "b one two three .", "b four five six ."]
    out, _ = ds.cluster_summaries(df, [[0.9, 0.2], [0.1, 0.95]], max_words=10, max_bigram_overlap=0.5, fill="skip")
    assert out["T"] == ["a seven eight nine .", "b one two three ."]  # the word budget (250 in DUC), here 10
    with pytest.raises(ValueError):
        ds.cluster_summaries(df, [[0.9], [0.1, 0.95]], max_words=8, max_bigram_overlap=0.5, fill="skip")


# --------------------------------------------------------------------------- jobs (in process, tiny encoder)


@pytest.mark.slow
def test_encoder_job_and_subnet_job(tmp_path, years):
    p = _params()
    m, preds, summaries = ft.train_and_test(p, "bert", 2006, years, tmp_path / "bert", progress=False)
    assert m["train_years"] == [2005, 2007] and m["year"] == 2006 and m["method"] == "full"
    assert len(m["dev_clusters"]) == 2 and not set(m["dev_clusters"]) & set(m["train_clusters"])
    assert all(c.split("/")[0] in ("2005", "2007") for c in m["dev_clusters"] + m["train_clusters"])
    assert m["training"]["best_epoch"] in (1, 2) and len(m["training"]["history"]) == 2
    for meas in ft.MEASURES:
        assert 0 <= m["test"][meas]["R"] <= 1 and m["test"][meas]["topics"] == 3
    assert set(summaries) == {"alpha2006", "beta2006", "gamma2006"}
    assert all(len(" ".join(s).split()) <= 250 for s in summaries.values())
    test_df = fd.load_year(years[2006])
    assert list(preds["id"]) == list(test_df["id"])
    assert [len(s) for s in preds["sentence_scores"]] == [len(s) for s in test_df["doc_sentences"]]
    # keep_models: false leaves the small records only
    assert sorted(f.name for f in (tmp_path / "bert").iterdir()) == ["training.json"]
    # Same params and seed -> same predictions.
    m2, preds2, _ = ft.train_and_test(p, "bert", 2006, years, tmp_path / "bert2", progress=False)
    assert preds2["sentence_scores"].tolist() == preds["sentence_scores"].tolist()
    assert m2["test"]["ROUGE-2"]["R"] == m["test"]["ROUGE-2"]["R"]

    ms, _, _ = ft.train_and_test(
        _params(keep_models=True),
        "qbert_st",
        2005,
        years,
        tmp_path / "st",
        progress=False,
    )
    st = ms["subnet"]
    assert st["masked_trainable"] == sum(subnet.keep_count(n, 0.1) for n in _maskable_sizes())
    assert (tmp_path / "st" / "model.safetensors").exists() and (tmp_path / "st" / "subnet.json").exists()


def _maskable_sizes():
    from wikiref.model import ScorerConfig, build_scorer

    model, _ = build_scorer(ScorerConfig(**TINY_ENCODER, pooling="query", head="regression"))
    return [p.numel() for p in subnet.maskable_parameters(model).values()]


def test_subnet_job_trains_only_the_subnetwork_of_the_checkpoint(tmp_path, years, pretrained):
    """+DA + ST from a classification checkpoint: head switched to regression, frozen entries unchanged."""
    from safetensors.torch import load_file

    models, metrics = pretrained
    p = _params(keep_models=True)
    p["finetune"]["settings"] += _settings("qbert_da_st")
    start = fd.start_from_files(_start_files(models, metrics))
    m, _, _ = ft.train_and_test(p, "qbert_da_st", 2007, years, tmp_path / "st", start=start, progress=False)
    assert m["start"]["variant"] == "clf_qbert" and m["start"]["head_switched_to_regression"]
    before = load_file(str(models / "clf_qbert" / "model.safetensors"))
    after = load_file(str(tmp_path / "st" / "model.safetensors"))
    cfg = json.loads((tmp_path / "st" / "config.json").read_text())
    assert cfg["head"] == "regression"
    from wikiref.model import load_scorer

    start_model, _ = load_scorer(models / "clf_qbert")
    masks = subnet.magnitude_masks(start_model, 0.1)
    for name, mask in masks.items():
        assert torch.equal(after[name][~mask], before[name][~mask]), name
    assert not torch.equal(after["head.weight"], before["head.weight"])


@pytest.mark.slow
def test_pretrained_without_finetuning_and_iterative(tmp_path, years, pretrained):
    models, metrics = pretrained
    p = _params()
    start = fd.start_from_files(_start_files(models, metrics))
    m, _, _ = ft.train_and_test(p, "da_pre", 2005, years, tmp_path / "none", start=start, progress=False)
    assert m["method"] == "none" and m["train_years"] == [] and "training" not in m
    assert m["start"]["variant"] == "reg_bert" and "head_switched_to_regression" not in m["start"]
    assert not (tmp_path / "none").exists() or not any((tmp_path / "none").iterdir())

    # Iterative: prune during a WikiRef run (synthetic oracle-format data), then fine-tune the survivors.
    from wikiref.stages import pretrain as pt

    oracle = tmp_path / "oracle"
    pt.write_oracle_splits(
        {
            "train": pt.synthetic_oracle_frame(12, seed=1, prefix="tr"),
            "dev": pt.synthetic_oracle_frame(6, seed=2, prefix="dv"),
        },
        oracle,
    )
    inputs = {
        "train": oracle / "train.parquet",
        "dev": oracle / "dev.parquet",
        "start": _start_files(models, metrics, ("clf_qbert",)),
    }
    info = fd.prune(p, inputs, {"dir": tmp_path / "pruned"}, setting="qbert_da_iter", progress=False)
    assert info["schedule"]["final_sparsity"] == pytest.approx(0.9)
    # The WikiRef pruning run continues the checkpoint's own (classification) objective.
    assert info["start"]["checkpoint_head"] == "classification" and "head_switched_to_regression" not in info["start"]
    assert info["pruning_steps"][-1]["sparsity"] == pytest.approx(0.9)
    assert info["pruning_steps"][-1]["step"] < info["schedule"]["total_steps"]
    masks = subnet.load_masks(tmp_path / "pruned" / subnet.MASKS_FILE)
    assert subnet.check_fractions(masks, 0.1) == []
    m, _, _ = ft.train_and_test(
        _params(keep_models=True),
        "qbert_da_iter",
        2006,
        years,
        tmp_path / "iter",
        start=fd.start_from_files(tmp_path / "pruned" / f for f in (*CHECKPOINT, subnet.MASKS_FILE, "pruning.json")),
        progress=False,
    )
    assert m["start"]["variant"] == "clf_qbert" and m["subnet"]["masked_trainable_fraction"] < 0.11
    assert m["start"]["checkpoint"] == str(tmp_path / "pruned")
    assert m["start"]["head_switched_to_regression"]  # DUC fine-tuning regresses ROUGE-2 recall
    from safetensors.torch import load_file

    after = load_file(str(tmp_path / "iter" / "model.safetensors"))
    assert all(int(torch.count_nonzero(after[n][~mk])) == 0 for n, mk in masks.items())  # pruned stay zero


def test_run_job_writes_its_files(tmp_path, years, pretrained):
    """The job entry point: metrics, predictions and summaries written where ``outputs`` says."""
    import pyarrow.parquet as pq

    models, metrics = pretrained
    out = tmp_path / "da_pre" / "2006"
    outputs = {
        "model_dir": out,
        "predictions": out / "predictions.parquet",
        "summaries": out / "summaries.json",
        "metrics": tmp_path / "metrics" / "duc_da_pre_2006.json",
    }
    inputs = {"years": dict(years), "start": _start_files(models, metrics)}
    m = ft.run_job(_params(), inputs, outputs, setting="da_pre", year=2006, progress=False)
    assert json.loads(outputs["metrics"].read_text()) == json.loads(json.dumps(m))
    assert m["start"]["checkpoint"] == str(models / "reg_bert")
    preds = pq.read_table(outputs["predictions"]).to_pandas()
    assert list(preds.columns) == ["id", "topic", "doc_position", "sentence_scores"]
    assert list(preds["id"]) == list(fd.load_year(years[2006])["id"])
    summaries = json.loads(outputs["summaries"].read_text())
    assert set(summaries) == {"alpha2006", "beta2006", "gamma2006"} and m["test_topics"] == 3


def test_run_job_rejects_bad_input(tmp_path, years, pretrained):
    models, metrics = pretrained
    outputs = {k: tmp_path / k for k in ("model_dir", "predictions", "summaries", "metrics")}
    inputs = {"years": dict(years), "start": _start_files(models, metrics)}
    with pytest.raises(ft.FinetuneError, match="unknown setting 'nope'"):
        ft.run_job(_params(), inputs, outputs, setting="nope", year=2006)
    with pytest.raises(ft.FinetuneError, match="year 2004 is not in duc.years"):
        ft.run_job(_params(), inputs, outputs, setting="bert", year=2004)
    with pytest.raises(ft.FinetuneError, match="missing .*nowhere.parquet.*duc prepare"):
        ft.run_job(
            _params(),
            {**inputs, "years": {**years, 2005: tmp_path / "nowhere.parquet"}},
            outputs,
            setting="bert",
            year=2006,
        )
    with pytest.raises(ft.FinetuneError, match="no model in"):
        empty = {**inputs, "start": _start_files(tmp_path / "empty", metrics)}
        ft.run_job(_params(), empty, outputs, setting="da_pre", year=2006)
    bad = tmp_path / "bad.parquet"
    write_parquet(bad, pa.table({"id": ["x"], "year": [2005]}))
    with pytest.raises(SchemaError, match="missing columns"):
        fd.load_year(bad)
    assert not any(outputs[k].exists() for k in ("predictions", "summaries", "metrics"))


CHECKPOINT = ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json")


def test_rule_inputs_of_a_setting():
    """What a setting's jobs start from (their Snakemake inputs), as paths from wikiref.layout."""
    p = _params()
    # every file of the checkpoint (a job reads them all), then the metrics `best` compares
    checkpoint = [f"models/pretrain/clf_qbert/{f}" for f in CHECKPOINT] + ["results/metrics/pretrain_clf_qbert.json"]
    assert ft.pretrained_inputs(p, "qbert_da") == checkpoint  # best among the query-pooling variants: one
    assert len(ft.pretrained_inputs(p, "da_pre")) == 10  # best: reg_bert and clf_qbert are candidates
    assert ft.pretrained_inputs(p, "bert") == [] == ft.start_inputs(p, "bert")
    pruned = [
        "models/finetune/qbert_da_iter/pruned/" + f for f in (*CHECKPOINT, "subnet_masks.safetensors", "pruning.json")
    ]
    assert ft.start_inputs(p, "qbert_da_iter") == pruned == ft.pruned_files("qbert_da_iter")
    assert ft.pruned_files("{setting}")[0] == "models/finetune/{setting}/pruned/model.safetensors"
    assert ft.setting_only(p, "bert") == {"finetune.settings": [p["finetune"]["settings"][0]]}
    with pytest.raises(ft.FinetuneError, match="unknown setting"):
        ft.start_inputs(p, "nope")


def test_start_from_the_given_files(tmp_path):
    """What a job starts from, read off its start files: checkpoints by folder, metrics by variant, the pruned
    model (the folder with the masks); a pretrained start needs its variant's checkpoint among them."""
    files = ft.pretrained_inputs(_params(), "da_pre") + ft.pruned_files("qbert_da_iter")
    start = fd.start_from_files(files)
    assert start.checkpoints == {v: Path(f"models/pretrain/{v}") for v in ("reg_bert", "clf_qbert")}
    assert start.variant_metrics == {v: Path(f"results/metrics/pretrain_{v}.json") for v in ("reg_bert", "clf_qbert")}
    assert start.pruned == Path("models/finetune/qbert_da_iter/pruned")
    assert fd.start_from_files([]) == fd.Start()
    named = dict(SETTINGS["qbert_da_iter"], method="full")
    with pytest.raises(ft.FinetuneError, match="no checkpoint of variant clf_qbert among the start files"):
        fd.start_model(_params(settings=[named]), named, start=fd.start_from_files(files[:5]))  # reg_bert only
    with pytest.raises(ft.FinetuneError, match="method iterative needs the pruned model"):
        fd.start_model(_params(), SETTINGS["qbert_da_iter"], start=fd.Start(checkpoints=start.checkpoints))


def test_setting_params_are_the_setting_alone(repo):
    """What a rule passes a (setting, year) job: the registry's keys of its job, finetune.settings cut to that
    setting, everything else as configured (the pretrain section only for a pretrained start)."""
    params = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    for s in params["finetune"]["settings"]:
        job = ft.run_job_name(s)
        assert job == ("run_pretrained" if s["init"] == "pretrained" else "run")
        got = json.loads(
            config.job_params(params, *job_keys("finetune", job), replace=ft.setting_only(params, s["name"]))
        )
        sections = ("seed", "model", "finetune", "duc") + (("pretrain",) if s["init"] == "pretrained" else ())
        want = {k: params[k] for k in sections}
        want["finetune"] = dict(params["finetune"], settings=[s])
        assert got == want
        config.validate_sections(got)


# --------------------------------------------------------------------------- table


def _job(setting, year, r2, init="encoder", variant=None, pooling="query", head="regression"):
    start = {"init": init, "pooling": pooling, "checkpoint_head": head}
    if variant:
        start["variant"] = variant
    return {
        "setting": setting,
        "year": year,
        "seconds": 1.0,
        "start": start,
        "training": {"best_epoch": 1},
        "test": {m: {"R": r2 / 100 + (0.2 if m == "ROUGE-1" else 0.0)} for m in ft.MEASURES},
    }


def test_table6_and_comparisons():
    p = _params()
    p["finetune"]["settings"] = _settings("qbert", "da_pre", "qbert_da", "qbert_da_st")
    chosen = list(ft.settings(p["finetune"]).values())
    years_ = [2005, 2006]
    r2 = {"qbert": [5, 6], "da_pre": [4, 4], "qbert_da": [7, 5], "qbert_da_st": [8, 7]}
    jobs = {
        s: {
            y: _job(
                s,
                y,
                r2[s][i],
                init="encoder" if s == "qbert" else "pretrained",
                variant=None if s == "qbert" else "reg_qbert",
            )
            for i, y in enumerate(years_)
        }
        for s in r2
    }
    base = {
        "systems": {
            k: {str(y): {m: {"R": 0.01 * (i + 1)} for m in ft.MEASURES} for y in years_}
            for i, k in enumerate(("lead", "query_sim", "oracle", "query_sim_plain", "lead_each"))
        }
    }
    df = ft.table6(base, jobs, chosen, years_)
    assert list(df["System"]) == [
        "LEAD",
        "QUERY-SIM",
        "LEAD-EACH",
        "QUERY-SIM (no redundancy rule)",
        "Q-BERT",
        "DA PRE-TRAINED",
        "Q-BERT + DA",
        "Q-BERT + DA + ST",
        "ORACLE",
    ]
    assert list(df.columns) == ["System", "Group"] + [f"{y} {m}" for y in years_ for m in ("R-1", "R-2", "R-SU4")]
    assert df.set_index("System").loc["Q-BERT + DA", "2005 R-2"] == 7.0
    assert df.set_index("System").loc["Q-BERT + DA", "Group"] == "regression pre-training (reg_qbert)"
    groups = df.set_index("System")["Group"]
    assert groups["LEAD"] == groups["QUERY-SIM"] == "baseline"
    assert groups["LEAD-EACH"] == groups["QUERY-SIM (no redundancy rule)"] == "baseline variant (cf. [12])"
    assert df.set_index("System").loc["LEAD-EACH", "2006 R-2"] == 5.0  # its own metrics, not LEAD's
    s = ft.summary_metrics(jobs, chosen, years_, base)
    assert s["settings"]["qbert_da"]["mean_ROUGE-2"] == 6.0
    cmp = {(c["setting"], c["reference"]): c for c in s["comparisons"]}
    assert set(cmp) == {("qbert_da", "qbert"), ("qbert_da_st", "qbert_da"), ("qbert_da", "da_pre")}
    assert cmp[("qbert_da", "qbert")]["mean_delta_ROUGE-2"] == 0.5 and cmp[("qbert_da", "qbert")]["years_better"] == 1
    assert cmp[("qbert_da_st", "qbert_da")]["helps"] and cmp[("qbert_da", "da_pre")]["mean_delta_ROUGE-2"] == 2.0


def _table_world(tmp_path, standin=True):
    p = _params()
    p["finetune"]["settings"] = _settings("qbert", "qbert_da")
    p["duc"].update(years=[2005, 2006], standin=standin)
    p["profile"] = {"name": "tiny", "standin": standin}
    metrics = tmp_path / "metrics"
    for i, (s, init) in enumerate((("qbert", "encoder"), ("qbert_da", "pretrained"))):
        for y in (2005, 2006):
            write_json(
                ft.job_metrics_file(metrics, s, y),
                _job(s, y, 5 + i + (y - 2005), init=init, variant=None if init == "encoder" else "reg_qbert"),
            )
    write_json(
        metrics / "duc_baselines.json",
        {"systems": {"lead": {str(y): {m: {"R": 0.05} for m in ft.MEASURES} for y in (2005, 2006)}}},
    )
    inputs = {
        "job_metrics": {
            s: {y: ft.job_metrics_file(metrics, s, y) for y in (2005, 2006)} for s in ("qbert", "qbert_da")
        },
        "baselines": metrics / "duc_baselines.json",
    }
    return p, inputs


def test_table_job_writes_table6_and_summary(tmp_path):
    p, inputs = _table_world(tmp_path)
    outputs = {"table": tmp_path / "tables" / "table6_duc", "summary": tmp_path / "finetune.json"}
    summary = ft.table(p, inputs, outputs)
    assert json.loads(outputs["summary"].read_text()) == summary
    assert summary["profile"] == "tiny" and summary["standin"] is True and summary["encoder"] == "tiny-random"
    df = pd.read_csv(tmp_path / "tables" / "table6_duc.csv")
    assert list(df["System"]) == ["LEAD", "Q-BERT", "Q-BERT + DA"]
    md = (tmp_path / "tables" / "table6_duc.md").read_text()
    assert "STAND-IN pseudo-years 2005, 2006" in md
    assert "data augmentation (+DA): qbert_da vs qbert mean R-2 +1.00" in md
    assert (tmp_path / "tables" / "table6_duc.tex").exists()
    (tmp_path / "metrics" / "duc_qbert_2006.json").unlink()
    with pytest.raises(ft.FinetuneError, match="duc_qbert_2006.json of setting qbert, year 2006"):
        ft.table(p, inputs, outputs)


def test_cli_table_and_its_errors(tmp_path):
    from wikiref.cli import main

    p, inputs = _table_world(tmp_path)
    pj = config.job_params(p, "profile", "model", "finetune", "duc")
    args = [
        "finetune",
        "table",
        "--params-json",
        pj,
        "--metrics-dir",
        str(tmp_path / "metrics"),
        "--baselines",
        str(inputs["baselines"]),
        "--table",
        str(tmp_path / "t6"),
        "--summary",
        str(tmp_path / "s.json"),
    ]
    assert main(args) == 0
    assert json.loads((tmp_path / "s.json").read_text())["settings"]["qbert_da"]["mean_ROUGE-2"] == 6.5
    inputs["baselines"].unlink()
    with pytest.raises(SystemExit, match="wikiref finetune table: missing .*duc_baselines.json"):
        main(args)
    with pytest.raises(SystemExit, match="unknown setting 'nope'"):
        main(
            [
                "finetune",
                "run",
                "--setting",
                "nope",
                "--year",
                "2005",
                "--params-json",
                config.job_params(p, "seed", "model", "finetune", "duc"),
            ]
        )


# --------------------------------------------------------------------------- the whole target on a NIST copy


@pytest.mark.slow
def test_finetune_target_runs_unchanged_on_a_nist_copy(repo, tmp_path, snakemake):
    """The paper profile's finetune_all on a hand-made NIST-layout DUC copy (duc.root, duc.standin false),
    with the tiny encoder and a small setting list; the +DA checkpoint is placed where the pretrain stage
    writes it (models/pretrain/<variant>/, results/metrics/pretrain_<variant>.json)."""
    nist = make_nist_tree(tmp_path / "duc")
    work = tmp_path / "work"
    _tiny_checkpoint(work / "models/pretrain/clf_qbert", seed=3)
    write_json(work / "results/metrics/pretrain_clf_qbert.json", {"dev": {"rouge2": 1.0}})
    p = _params()
    overlay = {
        "duc": {"root": str(nist), "standin": False},
        "model": p["model"],
        "pretrain": {"variants": [p["pretrain"]["variants"][1]]},
        "finetune": {
            "settings": [
                *_settings("bert"),
                dict(SETTINGS["da_pre"], name="da_pretrained"),
                dict(
                    name="qbert_da_st",
                    label="Q-BERT + DA + ST",
                    init="pretrained",
                    variant="clf_qbert",
                    method="subnet",
                ),
            ],
            "epochs": 1,
            "batch_size": 4,
            "lr": 1e-3,
            "dev_fraction": 0.5,
        },
    }
    (tmp_path / "nist.yaml").write_text(yaml.safe_dump(overlay))
    configs = (str(repo / "config/paper.yaml"), str(tmp_path / "nist.yaml"))
    res = snakemake(
        work, "finetune_all", "--cores", "2", "--resources", "gpu=1", "--configfile", *configs, timeout=1200
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-5000:]
    md = (work / "results/tables/table6_duc.md").read_text()
    assert "profile: paper" in md and "STAND-IN" not in md
    for row in ("| LEAD |", "| QUERY-SIM |", "| BERT |", "| DA PRE-TRAINED |", "| Q-BERT + DA + ST |", "| ORACLE |"):
        assert row in md
    summary = json.loads((work / "results/metrics/finetune.json").read_text())
    assert summary["standin"] is False and summary["profile"] == "paper"
    for s in ("bert", "da_pretrained", "qbert_da_st"):
        for y in (2005, 2006, 2007):
            m = json.loads((work / f"results/metrics/duc_{s}_{y}.json").read_text())
            assert m["test"]["ROUGE-2"]["topics"] == (2 if y == 2005 else 1)
            assert 0 <= m["test"]["ROUGE-1"]["R"] <= 1
    m = json.loads((work / "results/metrics/duc_qbert_da_st_2005.json").read_text())
    assert m["train_years"] == [2006, 2007] and m["subnet"]["masked_trainable_fraction"] < 0.11
    assert (work / "models/finetune/qbert_da_st/2005/model.safetensors").exists()  # paper: keep_models
