"""The qmsum stage's jobs (prepare, baselines) and the model evaluation the source comparison uses."""

from __future__ import annotations

import copy
import json

import numpy as np
import pandas as pd
import pytest
import torch

from wikiref import config, layout
from wikiref.stages import compare
from wikiref.stages.qmsum import stage
from wikiref.supervised import qmsum_finetune as gq

torch.set_num_threads(1)


def _outputs(root):
    out = {s: root / f"{s}.parquet" for s in layout.SPLITS}
    out.update(stats=root / "stats.json", metrics=root / "qmsum.json")
    return out


@pytest.fixture(scope="module")
def prepared(tmp_path_factory, repo):
    root = tmp_path_factory.mktemp("qmsum")
    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])  # qmsum.standin: true
    stage.standin(params, {}, {"file": root / "standin.jsonl"})
    metrics = stage.prepare(params, {"standin": root / "standin.jsonl"}, _outputs(root))
    return root, params, metrics


def test_prepare_standin_splits_whole_meetings(prepared):
    root, params, metrics = prepared
    assert metrics["standin"] is True
    frames = {s: stage.load_split(root / f"{s}.parquet") for s in layout.SPLITS}
    meetings = {s: set(df["meeting_id"]) for s, df in frames.items()}
    assert not (meetings["train"] & meetings["dev"]) and not (meetings["train"] & meetings["test"])
    assert sum(len(m) for m in meetings.values()) == params["qmsum"]["standin_meetings"]
    for s, df in frames.items():
        assert df["standin"].all() and (df["split"] == s).all()
        assert metrics["splits"][s]["queries"] == len(df)
    stats = json.loads((root / "stats.json").read_text())
    assert stats["counts"]["meetings_kept"] == params["qmsum"]["standin_meetings"]


@pytest.mark.slow
def test_prepare_prefers_real_files_and_falls_back_to_the_standin(prepared, tmp_path, shared_data):
    root, params, _ = prepared
    p = copy.deepcopy(params)
    p["qmsum"]["standin"] = "auto"
    p["qmsum"]["files"] = {"train": None, "dev": str(tmp_path / "missing.jsonl"), "test": None}
    assert stage.use_standin(p["qmsum"]) and stage.real_inputs(p["qmsum"]) == []
    p["qmsum"]["standin"] = False
    with pytest.raises(FileNotFoundError):
        stage.prepare(p, {"standin": root / "standin.jsonl"}, _outputs(tmp_path))
    real = shared_data / "qmsum" / "val.jsonl"
    if not real.exists():
        pytest.skip(f"{real} absent")
    p["qmsum"]["standin"] = "auto"
    p["qmsum"]["files"]["dev"] = str(real)
    assert not stage.use_standin(p["qmsum"])
    m = stage.prepare(p, {"standin": root / "standin.jsonl"}, _outputs(tmp_path))
    assert m["standin"] is False
    assert sum(v["meetings"] for v in m["splits"].values()) == 35
    assert sum(v["queries"] for v in m["splits"].values()) == 35 + 237


def test_eval_rows_filter_types_then_cap(prepared):
    root, params, _ = prepared
    test = stage.load_split(root / "test.parquet")
    q = dict(params["qmsum"], eval_query_types=["specific"], eval_queries=3)
    rows = stage.eval_rows(test, q, seed=1)
    assert len(rows) == min(3, int((test["query_type"] == "specific").sum()))
    assert (rows["query_type"] == "specific").all() and list(rows["id"]) == sorted(rows["id"])
    assert rows.equals(stage.eval_rows(test, q, seed=1))


def test_baselines_job_table_and_labels(prepared):
    root, params, _ = prepared
    m = stage.baselines(params, {"test": root / "test.parquet"}, {"table": root / "t", "metrics": root / "b.json"})
    assert m["standin"] and set(m["systems"]) == {"lead", "query_sim", "oracle"}
    setting = params["qmsum"]["settings"][0]
    r2 = {s: m["systems"][s][setting]["rouge2"]["f1"] for s in m["systems"]}
    assert r2["oracle"] >= max(r2["lead"], r2["query_sim"])
    csv = pd.read_csv(root / "t.csv")
    assert (csv["Data"] == "STAND-IN").all() and len(csv) == 3 * len(params["qmsum"]["settings"])


def test_bi_job_fine_tunes_chooses_on_dev_and_compares_with_its_start(prepared, tmp_path):
    """wikiref qmsum bi: the bi scorer trained on the train queries with qmsum.bi's recipe, the mixing weight with its
    start chosen on dev (one of qmsum.bi.interpolate or 1), every setting scored beside QUERY-SIM (the baselines'
    own) and the untrained scorer, paired; the same params and seed give the same outputs."""
    root, params, _ = prepared
    inputs = {s: root / f"{s}.parquet" for s in ("train", "dev", "test")}
    spec = params["qmsum"]["bi"]
    m = stage.bi(params, inputs, {"table": tmp_path / "bi", "metrics": tmp_path / "bi.json"})
    assert m["standin"] and m["encoder"] == params["model"]["encoder"] and set(m["settings"]) == set(spec["settings"])
    training = m["training"]
    assert training["best_epoch"] == spec["recipe"]["epochs"] and training["train_queries"] > 0
    assert training["interpolation"]["alpha"] in [*spec["interpolate"], 1.0]
    base = stage.baselines(params, {"test": inputs["test"]}, {"table": tmp_path / "b", "metrics": tmp_path / "b.json"})
    for setting, res in m["settings"].items():
        assert set(res["paired"]) == {"vs QUERY-SIM", "vs untrained"} and len(res["systems"]) == 3
        assert res["paired"]["vs QUERY-SIM"]["n"] == m["test_queries"]
        if setting in params["qmsum"]["settings"]:
            ours = res["systems"]["QUERY-SIM"]["rouge2"]["f1"]
            assert ours == base["systems"]["query_sim"][setting]["rouge2"]["f1"]
    table = pd.read_csv(tmp_path / "bi.csv")
    assert len(table) == 3 * len(spec["settings"]) and (table["Data"] == "STAND-IN").all()
    assert table["System"].iloc[0] == "BI (fine-tuned, interpolated)"
    assert json.loads((tmp_path / "bi.json").read_text()) == json.loads(json.dumps(m))
    again = stage.bi(params, inputs, {"table": tmp_path / "again", "metrics": tmp_path / "again.json"})
    for k in ("seconds",):
        m["training"].pop(k), again["training"].pop(k)
    assert json.loads(json.dumps(again)) == json.loads(json.dumps(m))
    assert (tmp_path / "again.md").read_text() == (tmp_path / "bi.md").read_text()


def test_model_summaries_rank_by_score_fill_budget_keep_transcript_order():
    row = {
        "id": "m:specific-00",
        "turns": ["A: one two three", "B: four five", "C: six seven eight nine", "D: ten"],
        "span_turns": [0, 1, 2, 3],
    }
    df = pd.DataFrame([row])
    out = gq.model_summaries(df, [np.array([0.1, 0.9, 0.5, np.nan])], "gold_span", max_words=6)
    # Ranked B (3 words), C (5 words: cut to 3 to fill 6), in transcript order; the NaN turn ranks last.
    assert out["m:specific-00"] == ["B: four five", "C: six seven"]


@pytest.mark.slow
def test_compare_qmsum_job_transfer_finetuned_and_ltr(prepared, tmp_path, two_source_model):
    root, params, _ = prepared
    models_root, cell = two_source_model
    from wikiref.registry import params_json

    p = json.loads(params_json(params, "compare", "qmsum"))  # what the rule passes: no variants, no settings
    assert "variants" not in p["pretrain"] and "settings" not in p["finetune"]
    inputs = {s: root / f"{s}.parquet" for s in layout.SPLITS}
    inputs["start"] = compare.start_files(cell, models_root)  # the cell's checkpoint files, as the rule gives them
    res = compare.qmsum(p, inputs, {"work_dir": tmp_path / "w", "result": tmp_path / "r.json"}, cell=cell)
    setting = p["compare"]["qmsum"]["settings"][0]
    assert p["compare"]["qmsum"]["ltr"]  # tiny: on
    assert set(res["modes"]) == {"finetuned", "ltr", "transfer"} and res["standin"]
    for mode in res["modes"]:
        rec = res["modes"][mode][setting]
        assert 0 <= rec["rouge"]["rouge2"]["f1"] <= 100
        assert rec["summary_words_mean"] <= p["qmsum"]["summary_words"]
    training = res["modes"]["finetuned"][setting]["training"]
    assert training["train_queries"] > 0
    # tiny: qmsum.finetune.interpolate [0.5], the fine-tuned end (1) always a candidate
    assert training["interpolation"]["alpha"] in (0.5, 1.0) and set(training["interpolation"]["by_alpha"]) == {
        "0.5",
        "1.0",
    }
    ltr = res["modes"]["ltr"][setting]  # the cell's scorer one of the ranker's signals
    assert ltr["start"]["variant"] == cell and ltr["training"]["chosen_target"] in p["compare"]["ltr"]["targets"]
    assert ltr["training"]["train_documents"] > 0 and "cosine" in ltr["training"]["dev_values"]
    assert not any(f.name.endswith(".safetensors") for f in (tmp_path / "w").rglob("*"))  # copies not kept
    none = compare.qmsum(
        p,
        {**inputs, "start": []},
        {"work_dir": tmp_path / "w2", "result": tmp_path / "r2.json"},
        cell="source~none_budget~none",
    )
    assert set(none["modes"]) == {"finetuned", "ltr"}  # an untrained head is not transferred
    assert none["modes"]["ltr"][setting]["start"]["init"] == "encoder"  # the ranker alone


@pytest.fixture(scope="module")
def two_source_model(tmp_path_factory, repo):
    """A checkpoint of one comparison cell (tiny encoder) trained on synthetic WikiRef oracle rows."""
    from wikiref.stages import pretrain as pt

    root = tmp_path_factory.mktemp("cmpmodels")
    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])
    cell = compare.Cell("wikiref", "equal")
    oracle_root = root / "oracle"
    for split, n in (("train", 8), ("dev", 4), ("test", 4)):
        df = pt.synthetic_oracle_frame(n, seed=len(split), prefix=split)
        df["source"], df["standin"] = "wikiref", True
        df["doc_lengths"] = [[len(d)] for d in df["doc_sentences"]]
        df["doc_ids"] = [["d"] for _ in range(n)]
        path = compare.oracle_files("wikiref", oracle_root)[split]
        from pathlib import Path

        import pyarrow as pa

        from wikiref.files import write_parquet
        from wikiref.schemas import ORACLE_SOURCE

        Path(path).parent.mkdir(parents=True, exist_ok=True)
        write_parquet(path, pa.Table.from_pandas(df[ORACLE_SOURCE.names], schema=ORACLE_SOURCE, preserve_index=False))
    p = copy.deepcopy(params)
    p["compare"]["sources"] = ["wikiref"]
    inputs = compare.pretrain_inputs(p, cell.id, oracle_root)
    from wikiref.registry import params_json

    p = json.loads(params_json(p, "compare", "pretrain"))  # what the rule passes: no pretrain.variants
    compare.pretrain(p, inputs, {"model_dir": root / "models" / cell.id, "result": root / "r.json"}, cell=cell)
    return root / "models", cell.id
