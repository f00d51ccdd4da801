"""scripts/recipe-study on QMSum with a training file: the scorer is trained (and its epoch chosen) on the
training file's meetings only, the evaluation file's queries are only summarized. STAND-IN files, so these
run without ../shared/data (tests/test_recipe_study.py has the run on the real files)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from wikiref.stages.qmsum.standin import write_standin

TINY = "mse:loss=mse,transform=standardise,epochs=1,encoder=tiny-random"


@pytest.fixture()
def qmsum_files(tmp_path) -> tuple[Path, Path]:
    """(train, val): 6 and 3 STAND-IN meetings, different files and seeds."""
    train, val = tmp_path / "train.jsonl", tmp_path / "val.jsonl"
    write_standin(train, meetings=6, seed=1)
    write_standin(val, meetings=3, seed=2)
    return train, val


def _read(study, train: Path, val: Path, *extra: str):
    args = study.parse_args(["--train", str(train), "--qmsum", str(val), "--preset", "tiny", *extra])
    train_rows = None if study.qmsum_train_file(args) is None else study.qmsum_rows(train, "train", "--train")
    return args, study.qmsum_rows(val), train_rows


def _meetings(rows) -> set[str]:
    return {r["meeting_id"] for r in rows}


def _transcripts(rows) -> set[str]:
    return {"\n".join(r["turns"]) for r in rows}


def test_val_meetings_are_never_trained_on(load_script, qmsum_files):
    study = load_script("recipe-study")
    train, val = qmsum_files
    args, val_rows, train_rows = _read(study, train, val)
    plan = study.qmsum_plan(args, val_rows, train_rows)
    assert len(plan["runs"]) == 1  # one scorer per recipe, no folds
    trained, dev, test = plan["runs"][0]
    assert trained and dev and test
    assert _meetings(trained) | _meetings(dev) <= _meetings(train_rows)  # dev meetings: the training file's
    assert not _meetings(trained) & _meetings(dev)  # whole meetings held out for the epoch
    assert not (_transcripts(trained) | _transcripts(dev)) & _transcripts(val_rows)  # no val meeting, by content
    assert len(trained) == args.train_queries and len(dev) <= args.dev_queries
    assert test == plan["test_all"] and {r["id"] for r in test} == plan["test_ids"]
    (pool,) = plan["dev_pools"]  # the queries that choose the ranker's target: the tiny preset's few, as dev's
    assert [r["id"] for r in pool] == [r["id"] for r in dev] and plan["info"]["dev_pool"] == len(dev)
    assert plan["test_ids"] <= {r["id"] for r in val_rows} and plan["transcript_ids"] <= plan["test_ids"]
    info = plan["info"]
    assert (info["mode"], info["train_meetings"] + info["dev_meetings"]) == ("train", 6)
    assert (info["eval_meetings"], info["eval_queries"]) == (3, len(plan["test_ids"]))
    again = study.qmsum_plan(args, val_rows, train_rows)  # seeded
    assert [r["id"] for r in again["runs"][0][0]] == [r["id"] for r in trained]
    args.dev_queries = 1  # the ranker chooses on every query of the dev meetings when its own cap is off
    args.ltr_dev_queries = None
    (pool,) = study.qmsum_plan(args, val_rows, train_rows)["dev_pools"]
    assert len(pool) == sum(r["meeting_id"] in _meetings(dev) for r in train_rows) > 1
    args.train_queries = args.dev_queries = None  # uncapped: every training meeting's queries
    trained, dev, _ = study.qmsum_plan(args, val_rows, train_rows)["runs"][0]
    assert _meetings(trained) | _meetings(dev) == _meetings(train_rows) and not _meetings(trained) & _meetings(dev)


def test_a_val_meeting_in_the_training_file_stops_the_run(load_script, qmsum_files, tmp_path):
    study = load_script("recipe-study")
    train, val = qmsum_files
    leaky = tmp_path / "leaky.jsonl"  # the training meetings plus one val meeting (another file, other ids)
    leaky.write_text(train.read_text() + val.read_text().splitlines()[1] + "\n")
    args, val_rows, train_rows = _read(study, leaky, val)
    with pytest.raises(SystemExit, match="1 meeting"):
        study.qmsum_plan(args, val_rows, train_rows)


def test_train_none_is_the_k_fold_mode_on_one_file(load_script, qmsum_files):
    study = load_script("recipe-study")
    train, val = qmsum_files
    args, rows, train_rows = _read(study, "none", train, "--folds", "2")
    assert train_rows is None
    plan = study.qmsum_plan(args, rows, None)
    assert len(plan["runs"]) == 2 and plan["info"]["mode"] == "cv"
    for (trained, dev, test), pool in zip(plan["runs"], plan["dev_pools"], strict=True):
        assert not (_meetings(trained) | _meetings(dev)) & _meetings(test) and not _meetings(trained) & _meetings(dev)
        assert _meetings(pool) == _meetings(dev) and {r["id"] for r in dev} <= {r["id"] for r in pool}
    args.qmsum_info = {**plan["info"], "recipes": 3}
    assert f"Cross-validated on {train}" in study.notes(args, None)


def test_a_missing_file_is_named_without_a_traceback(load_script, tmp_path, capsys):
    study = load_script("recipe-study")
    missing = tmp_path / "shared" / "data" / "qmsum" / "train.jsonl"
    with pytest.raises(SystemExit) as exc:
        study.parse_args(["--train", str(missing), "--qmsum", str(missing.with_name("val.jsonl"))])
    assert exc.value.code == 1
    err = capsys.readouterr().err
    assert f"QMSum file not found: {missing.with_name('val.jsonl')} (--qmsum" in err and "Traceback" not in err


@pytest.mark.slow
def test_tiny_run_trains_on_the_training_file(load_script, qmsum_files, tmp_path, monkeypatch):
    """The whole run (the tiny preset, a tiny random encoder): what reaches the training loop comes from the
    training file, what is scored from the val file; the table's notes say so."""
    study = load_script("recipe-study")
    train, val = qmsum_files
    seen = []
    fold = study.qmsum_fold

    def spy(recipe, train_rows, dev_rows, tests, args):
        seen.append((train_rows, dev_rows, tests))
        return fold(recipe, train_rows, dev_rows, tests, args)

    monkeypatch.setattr(study, "qmsum_fold", spy)
    from wikiref.supervised import ltr_scoring

    ranked = []
    fit_and_extract = ltr_scoring.fit_and_extract_queries

    def ltr_spy(splits, setting, *a, **k):
        ranked.append((setting, {name: df.to_dict("records") for name, df in splits.items()}))
        return fit_and_extract(splits, setting, *a, **k)

    monkeypatch.setattr(ltr_scoring, "fit_and_extract_queries", ltr_spy)
    out = tmp_path / "study"
    argv = ["--train", str(train), "--val", str(val), "--preset", "tiny", "--out", str(out), "--threads", "1"]
    argv += ["--interpolate", "none", "--ltr-encoder", "tiny-random"]  # no NAME+wise rows
    assert study.main([*argv, "--recipes", TINY, TINY.replace("mse:", "mse2:")]) == 0
    val_meetings, train_meetings = _meetings(study.qmsum_rows(val)), _meetings(study.qmsum_rows(train))
    assert len(seen) == 2  # one training per recipe
    for train_rows, dev_rows, tests in seen:
        assert _meetings(train_rows) | _meetings(dev_rows) <= train_meetings
        assert not _meetings(train_rows) & _meetings(dev_rows)
        assert all(_meetings(rows) <= val_meetings for rows in tests.values())
    # the ranker: fitted on the recipes' training queries, chosen on their dev meetings' queries, val only summarized
    assert [setting for setting, _ in ranked] == ["gold_span", "transcript"]
    for _, splits in ranked:
        assert [r["id"] for r in splits["train"]] == [r["id"] for r in seen[0][0]]
        assert [r["id"] for r in splits["dev"]] == [r["id"] for r in seen[0][1]]  # the tiny preset's cap
        assert _meetings(splits["test"]) <= val_meetings
    with open(out / "recipes.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    ltr = ["COSINE [tiny-random]", "LTR [cosine + TF-IDF + context]"]
    systems = ["LEAD", "QUERY-SIM", "ORACLE", *ltr, "Q-BERT [mse]", "Q-BERT [mse2]"]
    assert [r["system"] for r in rows] == [s for s in systems for _ in ("gold_span", "transcript")]
    assert {r["queries"] for r in rows if r["setting"] == "gold_span"} == {"8"}
    assert {r["queries"] for r in rows if r["setting"] == "transcript"} == {"2"}
    assert all(r["data"] == "STAND-IN" for r in rows)
    assert all(r["R-2 vs QUERY-SIM (paired 95% CI)"] for r in rows)
    vs_cosine = "R-2 vs COSINE (paired 95% CI)"  # every row paired with the untrained cosine, the cosine's own "-"
    assert all((r[vs_cosine] == "-") == (r["system"] == ltr[0]) and r[vs_cosine] for r in rows)
    ranker = next(r for r in rows if r["system"] == ltr[1])
    assert "gold_span: target " in ranker["recipe"] and "transcript: target " in ranker["recipe"]
    md = (out / "recipes.md").read_text()
    info = json.loads((out / "qmsum-split.json").read_text())
    assert f"Training file {train}: {info['train_meetings']} training meetings" in md
    assert f"Evaluation file {val} (3 meetings): 8 specific queries" in md
    assert "2 recipes tried; each reported once on val" in md and "NAME+wise" not in md
    assert "LTR and COSINE rows: the ranker over each turn's signals (embeddings of tiny-random)" in md
