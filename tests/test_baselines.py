"""ALL / LEAD / ORACLE baselines, and the pretrain stage's jobs (run, evaluate, table, fixture) on
synthetic oracle-format splits with the tiny-random encoder."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from wikiref import config, schemas
from wikiref.extractive.selection import evaluate
from wikiref.stages import pretrain
from wikiref.stages.pretrain.baselines import all_sentences, lead, oracle_summaries
from wikiref.supervised import pretraining as go

DOCS = [["a b c", "d e f", "g h i"], ["only one"], []]


def test_all_and_lead():
    assert all_sentences(DOCS) == [[0, 1, 2], [0], []]
    assert lead(DOCS) == [[0, 1], [0], []]
    assert lead(DOCS, 3) == [[0, 1, 2], [0], []]
    with pytest.raises(ValueError):
        lead(DOCS, 0)


def test_oracle_summaries_sorted_and_checked():
    assert oracle_summaries([[2, 0], [0], []], DOCS) == [[0, 2], [0], []]
    with pytest.raises(ValueError):
        oracle_summaries([[3], [0], []], DOCS)


def test_oracle_scores_perfect_when_summary_is_extractive():
    docs = [["the river flooded the town", "nothing else here"], ["prices rose sharply today", "a b"]]
    refs = ["the river flooded the town", "prices rose sharply today"]
    assert evaluate(oracle_summaries([[0], [0]], docs), docs, refs)["rouge2"] == pytest.approx(100.0)
    assert evaluate(lead(docs, 2), docs, refs)["rouge2"] < 100.0


def test_lead_on_real_examples(cloze_examples):
    docs = [ex["document"] for ex in cloze_examples]
    refs = [ex["cloze"] for ex in cloze_examples]
    r_lead = evaluate(lead(docs, 2), docs, refs)
    r_oracle = evaluate(oracle_summaries([ex["labels"] for ex in cloze_examples], docs), docs, refs)
    assert 0 < r_lead["rouge2"] < r_oracle["rouge2"]


# --------------------------------------------------------------------------- the pretrain jobs


@pytest.fixture(scope="module")
def tiny_params(repo):
    p = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    p["model"].update(max_length=64, stride=32)
    p["pretrain"].update(max_train_examples=12, max_eval_examples=6, epochs=1)
    p["pretrain"]["variants"] = [v for v in p["pretrain"]["variants"] if v["name"] == "clf_qbert"]
    return p


@pytest.fixture(scope="module")
def splits(tmp_path_factory):
    out = tmp_path_factory.mktemp("oracle")
    frames = {
        "train": pretrain.synthetic_oracle_frame(14, seed=1, prefix="tr"),
        "dev": pretrain.synthetic_oracle_frame(6, seed=2, prefix="dv"),
        "test": pretrain.synthetic_oracle_frame(6, seed=3, prefix="te"),
    }
    pretrain.write_oracle_splits(frames, out)
    return pretrain.split_files(out)


def test_oracle_splits_have_the_oracle_schema(splits):
    assert pq.read_schema(splits["train"]).remove_metadata() == schemas.ORACLE
    df, counts = pretrain.read_split(splits["dev"], None, 0)
    assert counts == {
        "rows": 6,
        "empty_document": 0,
        "length_mismatch": 0,
        "empty_statement": 0,
        "kept": 6,
        "standin": 6,  # synthetic rows are STAND-IN
        "used": 6,
    }
    assert counts["rows"] == pq.read_metadata(splits["dev"]).num_rows and len(df) == counts["used"]  # cross-check


def test_run_and_table_write_their_outputs(tiny_params, splits, tmp_path):
    import torch

    torch.set_num_threads(1)
    outputs = {
        "model_dir": tmp_path / "models" / "clf_qbert",
        "metrics": tmp_path / "metrics" / "pretrain_clf_qbert.json",
        "live_dir": tmp_path / "live",
    }
    metrics = pretrain.run(tiny_params, splits, outputs, variant="clf_qbert", progress=False)
    assert json.loads(outputs["metrics"].read_text()) == json.loads(json.dumps(metrics))
    assert metrics["dev"]["examples"] == metrics["test"]["examples"] == 6 and metrics["training"]["best_epoch"] == 1
    assert (outputs["model_dir"] / "model.safetensors").exists() and (outputs["live_dir"] / "metrics.json").exists()
    # evaluate alone reproduces the metrics of run (which reused the best epoch's dev scores)
    again = pretrain.evaluate(
        tiny_params,
        {**splits, "model_dir": outputs["model_dir"]},
        {"metrics": tmp_path / "again.json"},
        variant="clf_qbert",
        progress=False,
    )
    assert again["dev"] == metrics["dev"] and again["test"] == metrics["test"]

    inputs = {**splits, "variant_metrics": {"clf_qbert": outputs["metrics"]}}
    summary = pretrain.table(tiny_params, inputs, {"table": tmp_path / "t4", "summary": tmp_path / "pretrain.json"})
    assert json.loads((tmp_path / "pretrain.json").read_text()) == summary and summary["profile"] == "tiny"
    md = (tmp_path / "t4.md").read_text()
    assert "Table IV" in md and "dev/test examples: 6/6" in md and (tmp_path / "t4.tex").exists()


def test_jobs_reject_bad_input(tiny_params, splits, tmp_path):
    with pytest.raises(pretrain.PretrainError, match="unknown variant 'nope'; params define: clf_qbert"):
        pretrain.run(tiny_params, splits, {"model_dir": tmp_path / "m", "metrics": tmp_path / "x.json"}, variant="nope")
    with pytest.raises(pretrain.PretrainError, match="missing: run the oracle stage"):
        pretrain.read_split(tmp_path / "nowhere.parquet", None, 0)
    with pytest.raises(pretrain.PretrainError, match="no trained model"):
        pretrain.evaluate(
            tiny_params,
            {**splits, "model_dir": tmp_path / "empty"},
            {"metrics": tmp_path / "x.json"},
            variant="clf_qbert",
        )
    inputs = {**splits, "variant_metrics": {"clf_qbert": tmp_path / "pretrain_clf_qbert.json"}}
    with pytest.raises(pretrain.PretrainError, match="pretrain_clf_qbert.json: run `wikiref pretrain run"):
        pretrain.table(tiny_params, inputs, {"table": tmp_path / "t4", "summary": tmp_path / "s.json"})
    with pytest.raises(schemas.SchemaError, match="missing oracle columns"):
        go.validate_oracle_frame(pretrain.synthetic_oracle_frame(2).drop(columns=["oracle_score"]), "x")
    with pytest.raises(pretrain.PretrainError, match="give a cloze file"):
        pretrain.fixture({}, {}, {"dir": tmp_path / "fixture"})
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "s.json").exists()


def test_fixture_job_splits_by_id(tmp_path):
    counts = pretrain.fixture({}, {}, {"dir": tmp_path}, synthetic=30)
    assert sum(counts.values()) == 30 and set(counts) == {"train", "dev", "test"}
    ids = {s: set(pq.read_table(tmp_path / f"{s}.parquet")["id"].to_pylist()) for s in counts}
    assert {s: len(v) for s, v in ids.items()} == counts
    assert not ids["train"] & ids["dev"] and not ids["dev"] & ids["test"]


def test_cli_errors_are_messages(tiny_params, tmp_path):
    from wikiref.cli import main

    pj = config.job_params(tiny_params, "seed", "model", "pretrain")
    with pytest.raises(SystemExit, match="wikiref pretrain evaluate: unknown variant 'nope'"):
        main(["pretrain", "evaluate", "--variant", "nope", "--params-json", pj])
    with pytest.raises(SystemExit, match="wikiref pretrain fixture: give a cloze file"):
        main(["pretrain", "fixture", "--out", str(tmp_path)])
