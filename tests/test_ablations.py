"""Ablation grids (journal §VI): cell names, the plan, training subsets, budgets, and a small end-to-end
run of every kind of cell on fixture data with the tiny-random encoder (no network, ~1 minute)."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from wikiref import config, layout
from wikiref.registry import job_keys
from wikiref.stages import ablations as ab


@pytest.fixture(scope="module")
def profiles(repo):
    return {
        name: config.load_params(repo / "params.yaml", [] if name == "params.yaml" else [repo / name])
        for name in ("params.yaml", "config/tiny.yaml", "config/paper.yaml")
    }


# --------------------------------------------------------------------------- names


def test_cell_ids_round_trip_and_errors():
    cell = ab.AugCell("query", "quality", 0.2)
    assert cell.id == "pooling~query_data~quality_amount~0.2_prune~none_start~encoder"
    assert ab.parse_aug(cell.id) == cell
    d = ab.DucCell("all", 50, "full")
    assert d.id == "train~all_percent~50_method~full" and ab.parse_duc(d.id) == d
    assert ab.parse_duc("train~2005_percent~100_method~full").train == "2005"
    for bad in (
        "pooling~query",
        "pooling~query_data~size_amount~x_prune~none_start~encoder",
        "pooling~avg_data~size_amount~1.0_prune~none_start~encoder",
        "pooling~query_data~size_amount~1_prune~none_start~encoder",  # not canonical (1.0)
        "pooling~query_data~none_amount~0.0_prune~iterative_start~encoder",
        "pooling~query_data~size_amount~1.0_prune~none_start~da",
    ):
        with pytest.raises(ab.AblationError):
            ab.parse_aug(bad)
    for bad in (
        "train~all_percent~150_method~full",
        "train~all_percent~50_method~none",
        "train~none_percent~0_method~full",
        "percent~50_train~all_method~full",
    ):
        with pytest.raises(ab.AblationError):
            ab.parse_duc(bad)


@pytest.mark.parametrize("name", ["params.yaml", "config/tiny.yaml", "config/paper.yaml"])
def test_paramspace_patterns_are_the_cell_ids(profiles, name):
    """The Snakemake rules expand the grids with Paramspace; the CLI parses the same strings."""
    import re

    from snakemake.utils import Paramspace

    params = profiles[name]
    aug_df, duc_df = ab.grids(params)
    aug_space = Paramspace(aug_df, filename_params="*", single_wildcard="aug")
    duc_space = Paramspace(duc_df[list(ab.DUC_COLUMNS)], filename_params="*", single_wildcard="duc")
    pl = ab.plan(params)
    assert list(aug_space.instance_patterns) == [c.id for c in pl.aug_cells]
    assert list(duc_space.instance_patterns) == [d.id for _, d in pl.pairs()]
    paths = [f"results/ablations/wikiref/{a}.json" for a in aug_space.instance_patterns] + [
        f"results/ablations/duc/{a}/{d}.json" for a, d in zip(duc_df["aug"], duc_space.instance_patterns)
    ]
    assert sorted(paths) == ab.all_outputs(params)
    for a in aug_space.instance_patterns:
        assert re.fullmatch(ab.AUG_REGEX, a) and ab.parse_aug(a).id == a
    for d in duc_space.instance_patterns:
        assert re.fullmatch(ab.DUC_REGEX, d)


# --------------------------------------------------------------------------- plan


def test_plan_shares_cells(profiles):
    pl = ab.plan(profiles["params.yaml"])
    base = pl.base
    assert base == ab.AugCell("query", "size", 1.0)
    full = ab.DucCell("all", 100, "full")
    # the full-data Q-BERT model serves Fig. 5 (100%), Table VIII (Q-BERT), Table IX (NONE) and Fig. 4 (+DA 100%)
    assert (1.0, base, full) in pl.data_size
    assert ("Q-BERT", base, full) in pl.pooling
    assert ("none", base, full) in pl.subnetwork
    assert (100, base, full) in pl.duc_size["da"]
    assert len(pl.pairs()) == len(set(pl.pairs()))
    assert [n for n, *_ in pl.quality] == ["Poor", "Excellent"]
    assert set(pl.duc_lines) == {"2005 only", "2006 only", "DA pre-trained"}
    # the iterative-from-DA cell needs the base model: it is in the grid even if nothing else asked for it
    assert any(a.start == "da" for a in pl.aug_cells) and base in pl.aug_cells
    paper = ab.plan(profiles["config/paper.yaml"])
    assert [n for n, *_ in paper.quality] == ["Poor", "Fair", "Average", "Good", "Very Good", "Excellent"]
    assert [s for _, s, *_ in paper.quality] == [0.0, 0.1, 0.2, 0.3, 0.4, 0.5]
    assert len(paper.duc_size["bert"]) == 10


def test_plan_rejects_nonsense(profiles):
    p = copy.deepcopy(profiles["params.yaml"])
    p["ablations"]["test_year"] = 2010
    with pytest.raises(ab.AblationError, match="test_year"):
        ab.plan(p)
    p = copy.deepcopy(profiles["params.yaml"])
    p["ablations"]["quality"]["names"] = ["Poor"]
    with pytest.raises(ab.AblationError, match="names"):
        ab.plan(p)
    p = copy.deepcopy(profiles["params.yaml"])
    p["ablations"]["quality"]["starts"] = [0.0, 0.6]
    p["ablations"]["quality"]["names"] = ["a", "b"]
    with pytest.raises(ab.AblationError, match="window"):
        ab.plan(p)
    p = copy.deepcopy(profiles["params.yaml"])
    p["ablations"]["budget"]["stride"] = 500
    with pytest.raises(ab.AblationError, match="stride"):
        ab.effective_params(p)


def test_effective_params_overrides_only_non_null(profiles):
    p = profiles["params.yaml"]
    e = ab.effective_params(p)
    b = p["ablations"]["budget"]
    assert e["model"]["max_length"] == b["max_length"] and e["pretrain"]["epochs"] == b["pretrain_epochs"]
    assert e["pretrain"]["max_train_examples"] == b["train_pool"]
    assert p["model"]["max_length"] != e["model"]["max_length"] or b["max_length"] is None  # input untouched
    paper = profiles["config/paper.yaml"]
    e = ab.effective_params(paper)
    assert e["model"] == paper["model"] and e["pretrain"]["epochs"] == paper["pretrain"]["epochs"]
    assert e["pretrain"]["max_train_examples"] is None


def test_cell_params_ignore_the_grid_lists(profiles):

    p = copy.deepcopy(profiles["params.yaml"])
    before = ab.cell_params_json(p)
    config.validate_sections(json.loads(before))  # what the CLI validates
    # The registry's keys of a cell, the grid lists emptied, placeholders for the variants / settings.
    want = {k: copy.deepcopy(p[k]) for k in job_keys("ablations", "cell")}
    want["ablations"].update(data_fractions=[], poolings=[], subnetworks=[], duc_percents=[], duc_single_years=False)
    want["ablations"]["quality"].update(starts=[], names=[])
    # One placeholder variant (a regression head on the query-pooled, pretrained encoder) and one setting.
    placeholder = dict(name="ablation", label="ablation")
    want["pretrain"]["variants"] = [
        dict(placeholder, head="regression", pooling="query", query=True, init="pretrained")
    ]
    want["finetune"]["settings"] = [dict(placeholder, init="encoder", pooling="query", method="full")]
    assert json.loads(before) == want
    p["ablations"]["poolings"] = ["cls"]
    p["ablations"]["quality"]["starts"] = [0.0]
    p["pretrain"]["variants"] = p["pretrain"]["variants"][:1]
    assert ab.cell_params_json(p) == before  # no finished cell reruns
    p["ablations"]["budget"]["pretrain_epochs"] = 3
    assert ab.cell_params_json(p) != before  # a budget change does
    assert "profile" not in json.loads(before)


def test_rule_inputs():
    base = ab.AugCell("query", "size", 1.0)
    it = ab.AugCell("query", "size", 1.0, "iterative", "da")
    params = {"duc": {"years": [2006, 2005, 2007]}}
    assert ab.pretrain_inputs(params, base.id) == {s: f"data/oracle/{s}.parquet" for s in ("train", "dev", "test")}
    checkpoint = [
        f"{ab.aug_path(base)}/{f}"
        for f in ("model.safetensors", "config.json", "tokenizer.json", "tokenizer_config.json")
    ]
    assert ab.pretrain_inputs(params, it.id)["start"] == checkpoint
    assert ab.aug_path(base) == f"models/ablations/pretrain/{base.id}"
    assert (
        ab.duc_metrics_path(base, ab.DucCell("all", 50, "full"))
        == f"results/ablations/duc/{base.id}/train~all_percent~50_method~full.json"
    )
    got = ab.finetune_inputs(params, base.id, "train~all_percent~100_method~full")
    assert got == {
        "duc": ["data/duc/2005.parquet", "data/duc/2006.parquet", "data/duc/2007.parquet"],
        "model": checkpoint,
    }
    assert "model" not in ab.finetune_inputs(
        params, ab.AugCell("query", "none", 0.0).id, "train~2005_percent~100_method~full"
    )


# --------------------------------------------------------------------------- subsets


def _pool(n: int) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame({"id": [f"x{i:03d}" for i in range(n)], "oracle_score": rng.random(n)})


def test_size_subsets_are_nested():
    pool = _pool(40)
    sets = [set(ab.training_subset(pool, ab.AugCell("query", "size", f), 0.5, 13)[0]["id"]) for f in (0.25, 0.5, 1.0)]
    assert [len(s) for s in sets] == [10, 20, 40]
    assert sets[0] < sets[1] < sets[2]
    again, _ = ab.training_subset(pool.sample(frac=1.0, random_state=3), ab.AugCell("query", "size", 0.25), 0.5, 13)
    assert set(again["id"]) == sets[0]  # independent of row order


def test_quality_slices_are_overlapping_halves_by_oracle_score():
    pool = _pool(40)
    ranked = list(pool.sort_values("oracle_score")["id"])
    slices = {}
    for start in (0.0, 0.1, 0.5):
        sub, info = ab.training_subset(pool, ab.AugCell("query", "quality", start), 0.5, 13)
        slices[start] = set(sub["id"])
        assert len(sub) == 20 and info["start_row"] == int(start * 40)
        assert slices[start] == set(ranked[int(start * 40) : int(start * 40) + 20])
        assert info["oracle_score_min"] <= info["oracle_score_max"]
    assert len(slices[0.0] & slices[0.1]) == 16  # overlapping halves
    assert max(pool.set_index("id").loc[list(slices[0.0]), "oracle_score"]) <= min(
        pool.set_index("id").loc[list(slices[0.5]), "oracle_score"]
    )
    with pytest.raises(ab.AblationError):
        ab.training_subset(pool, ab.AugCell("query", "none", 0.0), 0.5, 13)


def test_cap_doc_sentences():
    df = pd.DataFrame(
        {
            "id": ["a"],
            "doc_sentences": [["s0", "s1", "s2", "s3"]],
            "oracle_labels": [[0, 1, 0, 1]],
            "oracle_scores": [[0.1, 0.5, 0.0, 0.4]],
            "oracle_indices": [[1, 3]],
        }
    )
    out, cut = ab.cap_doc_sentences(df, 2)
    assert cut == 2 and out["doc_sentences"][0] == ["s0", "s1"] and out["oracle_labels"][0] == [0, 1]
    assert out["oracle_scores"][0] == [0.1, 0.5] and out["oracle_indices"][0] == [1]
    assert df["doc_sentences"][0] == ["s0", "s1", "s2", "s3"]  # input untouched
    assert ab.cap_doc_sentences(df, None)[0] is df


def test_clusters_for_percent():
    assert ab.clusters_for_percent({2005: 6, 2006: 6}, 100, None) is None
    assert ab.clusters_for_percent({2005: 6, 2006: 6}, 100, 4) == 4
    assert ab.clusters_for_percent({2005: 6, 2006: 6}, 50, None) == 3
    assert ab.clusters_for_percent({2005: 6, 2006: 6}, 25, None) == 2
    assert ab.clusters_for_percent({2005: 50, 2006: 50}, 10, None) == 5
    assert ab.clusters_for_percent({2005: 6}, 1, None) == 1


def test_duc_setting_rules():
    base = ab.AugCell("query", "size", 1.0)
    s = ab.duc_setting(base, ab.DucCell("all", 100, "subnet"))
    assert s["init"] == "pretrained" and s["variant"] == base.id and s["method"] == "subnet"
    s = ab.duc_setting(ab.AugCell("cls", "none", 0.0), ab.DucCell("2005", 100, "full"))
    assert s["init"] == "encoder" and s["pooling"] == "cls"
    with pytest.raises(ab.AblationError):
        ab.duc_setting(base, ab.DucCell("all", 100, "iterative"))
    with pytest.raises(ab.AblationError):
        ab.duc_setting(ab.AugCell("query", "none", 0.0), ab.DucCell("all", 100, "subnet"))


# --------------------------------------------------------------------------- end to end (tiny-random)


def _duc_rows(year: int, n_topics: int, n_docs: int, seed: int) -> pd.DataFrame:
    from wikiref.rouge.oracle import sentence_scores

    words = (
        "market report city council weather season river museum school road festival harbour bridge "
        "station library garden factory election budget railway tower village forest island"
    ).split()
    rng = np.random.default_rng([seed, year])
    rows = []
    for t in range(n_topics):
        topic = f"D{year % 100:02d}{t:02d}"
        focus = str(rng.choice(words))
        docs = []
        for _ in range(n_docs):
            sents = [" ".join(rng.choice(words, size=int(rng.integers(6, 12)))) + " ." for _ in range(6)]
            sents[int(rng.integers(0, 6))] = f"the {focus} grew by {rng.integers(10, 99)} percent in {year} ."
            docs.append(sents)
        refs = [
            f"the {focus} grew in {year} .\nofficials said the {focus} report was late .",
            f"the {focus} grew by many percent .",
        ]
        for d, sents in enumerate(docs):
            rows.append(
                {
                    "id": f"{year}/{topic}/DOC{d}",
                    "year": year,
                    "topic": topic,
                    "query": [focus, f"Describe the {focus}."],
                    "title": focus,
                    "narrative": f"Describe the {focus}.",
                    "doc_id": f"DOC{d}",
                    "doc_date": f"{year}0101",
                    "doc_position": d,
                    "doc_headline": "",
                    "doc_sentences": sents,
                    "sentence_targets": sentence_scores(sents, refs, metric="rouge2_recall"),
                    "references": refs,
                    "reference_ids": ["A", "B"],
                }
            )
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def small_world(tmp_path_factory, profiles):
    from wikiref.files import write_parquet
    from wikiref.stages import pretrain as pt

    root = tmp_path_factory.mktemp("abl")
    frames = {
        "train": pt.synthetic_oracle_frame(24, seed=1, prefix="tr"),
        "dev": pt.synthetic_oracle_frame(6, seed=2, prefix="dv"),
        "test": pt.synthetic_oracle_frame(6, seed=3, prefix="te"),
    }
    pt.write_oracle_splits(frames, root / "oracle")
    for y in (2005, 2006, 2007):
        write_parquet(root / "duc" / f"{y}.parquet", _duc_rows(y, 3, 2, 7))
    params = copy.deepcopy(profiles["config/tiny.yaml"])
    params["model"].update(device="cpu", amp=False)
    params["ablations"].update(
        data_fractions=[1.0],
        quality={"window": 0.5, "starts": [0.5], "names": ["Excellent"]},
        poolings=["query"],
        subnetworks=["none", "iterative_da", "one_step_da"],
        duc_percents=[50, 100],
        duc_single_years=True,
    )
    params["ablations"]["budget"].update(max_length=64, stride=48, max_query_tokens=16, train_pool=16, eval_examples=6)
    params["finetune"].update(dev_fraction=0.3, batch_size=8)
    params["pretrain"].update(batch_size=8)
    return root, params


@pytest.mark.slow
def test_every_kind_of_cell_runs_and_collects(small_world, monkeypatch):

    import torch

    from wikiref.files import read_json

    torch.set_num_threads(1)
    root, params = small_world
    monkeypatch.chdir(root)
    pl = ab.plan(params)
    assert len(pl.aug_cells) == 3 and len(pl.pairs()) == 10
    splits = {s: root / "oracle" / f"{s}.parquet" for s in layout.SPLITS}
    years = {y: root / "duc" / f"{y}.parquet" for y in (2005, 2006, 2007)}
    for cell in sorted(pl.aug_cells, key=lambda c: c.start == "da"):  # pruning from DA needs the base model
        outputs = {"model_dir": ab.aug_path(cell), "result": ab.wikiref_metrics_path(cell)}
        start = ab.start_files(cell, layout.ABLATIONS_PRETRAIN_DIR)  # the DA model (start~da), as the rule gives it
        res = ab.pretrain_cell(params, {**splits, "start": start}, outputs, aug=cell.id)
        assert read_json(ab.wikiref_metrics_path(cell)) == json.loads(json.dumps(res))
        assert (Path(ab.aug_path(cell)) / "model.safetensors").exists()
        if cell.prune == "none":
            w = res["wikiref"]["test"]
            assert 0.0 <= w["rouge2"] <= 100.0 and res["subset"]["examples"] == (8 if cell.data == "quality" else 16)
        else:
            assert res["pruning"]["masks"]["masked_trainable_fraction"] == pytest.approx(0.1, abs=0.02)
    for a, d in pl.pairs():
        outputs = {"work_dir": root / "work" / a.id / d.id, "result": ab.duc_metrics_path(a, d)}
        model = ab.model_files(a, layout.ABLATIONS_PRETRAIN_DIR)  # the augmentation model (none for data~none)
        res = ab.finetune_cell(params, {"years": years, "model": model}, outputs, aug=a, duc=d)
        assert read_json(ab.duc_metrics_path(a, d)) == json.loads(json.dumps(res))
        assert set(res["duc"]) == set(ab.MEASURES) and res["test_year"] == 2007
        if d.method == "none":
            assert res["train_years"] == [] and res["train_clusters"] == 0
        elif d.train == "2005":
            assert res["train_years"] == [2005]
        elif d.percent == 50:
            # 50% of the 3 clusters per year (or of the finetune section's own cap), rounded
            assert res["clusters_per_year_cap"] == ab.clusters_for_percent(
                {2005: 3, 2006: 3}, 50, params["finetune"]["max_train_clusters"]
            )
        if d.method == "subnet":
            assert res["subnet"]["masked_trainable_fraction"] == pytest.approx(0.1, abs=0.02)
        assert not list((root / "work" / a.id / d.id).glob("*.safetensors"))  # weights not kept
    out = ab.collect(params, {"results_root": root}, {"metrics": root / "ablations.json"})
    assert read_json(root / "ablations.json") == json.loads(json.dumps(out))
    # the files the rule declares, given one by one: the same collection; a cell left out is an error
    results = ab.all_outputs(params)
    assert ab.collect(params, {"results": results}, {"metrics": root / "given.json"}) == out
    with pytest.raises(ab.AblationError, match=f"{re.escape(results[0])} is not among the given results"):
        ab.collect(params, {"results": results[1:]}, {"metrics": root / "short.json"})
    assert [r["key"] for r in out["subnetwork"]["rows"]] == ["none", "iterative_da", "one_step_da"]
    assert [p["percent"] for p in out["duc_size"]["curves"]["da"]] == [50, 100]
    assert set(out["duc_size"]["lines"]) == {"2005 only", "2006 only", "DA pre-trained"}
    assert out["quality"]["full"]["wikiref"]["train_examples"] == 16
    assert out["encoder"] == "tiny-random" and out["profile"] == "tiny"


def test_plan_lines(profiles):
    params = profiles["config/tiny.yaml"]
    pl = ab.plan(params)
    lines = ab.plan_lines(params)
    assert lines == [f"pretrain {c.id}" for c in pl.aug_cells] + [f"finetune {a.id}/{d.id}" for a, d in pl.pairs()]
    assert len(lines) == 15


def test_jobs_reject_bad_input(small_world, tmp_path):
    from wikiref.cli import main

    root, params = small_world
    base = ab.AugCell("query", "size", 1.0)
    outputs = {"work_dir": tmp_path / "work", "result": tmp_path / "result.json"}
    with pytest.raises(ab.AblationError, match="missing DUC files"):
        ab.finetune_cell(
            params,
            {"years": {2007: root / "duc" / "2007.parquet"}},
            outputs,
            aug=base,
            duc="train~all_percent~100_method~full",
        )
    with pytest.raises(ab.AblationError, match="no augmentation, nothing to train"):
        ab.pretrain_cell(
            params,
            {},
            {"model_dir": tmp_path / "m", "result": tmp_path / "r.json"},
            aug=ab.AugCell("query", "none", 0.0),
        )
    with pytest.raises(ab.AblationError, match="missing cell result"):
        ab.collect(params, {"results_root": tmp_path}, {"metrics": tmp_path / "ablations.json"})
    assert not (tmp_path / "result.json").exists() and not (tmp_path / "ablations.json").exists()
    pj = ab.cell_params_json(params)
    with pytest.raises(SystemExit, match="wikiref ablations pretrain: .*pooling 'avg'"):
        main(
            [
                "ablations",
                "pretrain",
                "--aug",
                "pooling~avg_data~size_amount~1.0_prune~none_start~encoder",
                "--params-json",
                pj,
            ]
        )
