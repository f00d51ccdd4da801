"""The source comparison: multi-document packing, the oracle over pooled sentences, equal budgets,
the grid, the findings."""

from __future__ import annotations

import copy
import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from wikiref import config, layout
from wikiref.examples import document, example
from wikiref.model import ScorerConfig, build_scorer
from wikiref.model.packing import Packer, document_ends
from wikiref.model.scoring_task import ScoringExample
from wikiref.model.training import TrainSettings, train
from wikiref.rouge.oracle import greedy_oracle_reference
from wikiref.schemas import EXAMPLE, ORACLE_SOURCE
from wikiref.stages import compare
from wikiref.supervised import pretraining as go
from wikiref.supervised.labels import example_oracle_table

torch.set_num_threads(1)

WORDS = "river bridge harbour museum tower station garden market school forest island railway".split()


def _sentences(rng, n, topic=""):
    return [" ".join([topic, *rng.choice(WORDS, size=int(rng.integers(4, 9)))]).strip() + " ." for _ in range(n)]


def _examples(source: str, n: int, docs: int, seed: int, split: str = "train") -> list[dict]:
    """Synthetic common-schema examples: ``docs`` documents each; the summary restates two sentences."""
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        topic = str(rng.choice(WORDS))
        documents = [
            document(f"d{i}-{d}", _sentences(rng, int(rng.integers(2, 6)), topic if d == 0 else ""), origin="original")
            for d in range(docs)
        ]
        pooled = [s for d in documents for s in d["sentences"]]
        summary = [pooled[-1], pooled[0]]
        rows.append(
            example(
                source,
                f"{split}{i:03d}",
                split=split,
                query=[topic, "history"],
                documents=documents,
                summary=summary,
                query_origin="search_query",
                standin=True,
            )
        )
    return rows


def _table(rows):
    return pa.Table.from_pylist(rows, schema=EXAMPLE)


# --------------------------------------------------------------------------- packing


def test_document_ends_mark_the_last_sentence_of_every_document_but_the_last():
    assert document_ends(None, 5) == frozenset()
    assert document_ends([2, 3], 5) == {1}
    assert document_ends([1, 0, 2, 1], 4) == {0, 2}  # an empty document adds no boundary
    assert document_ends([5], 5) == frozenset()
    with pytest.raises(ValueError, match="add up"):
        document_ends([2, 2], 5)


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    model, tok = build_scorer(
        ScorerConfig(encoder="tiny-random", pooling="query", head="regression", max_length=40, stride=12, num_levels=4)
    )
    return model, tok


@pytest.mark.parametrize("lengths", [[3, 2, 4], [1, 1, 1, 1, 1], [6], [2, 7]])
def test_multi_document_packing_keeps_boundaries_order_and_scores_every_sentence_once(tiny, lengths):
    _, tok = tiny
    rng = np.random.default_rng(sum(lengths))
    sentences = _sentences(rng, sum(lengths))
    packer = Packer(tok, max_length=40, stride=12, max_query_tokens=12, num_levels=4)
    windows = packer.pack(["bridge", "history"], sentences, doc_lengths=lengths)
    single = packer.pack(["bridge", "history"], sentences)
    ends = document_ends(lengths, len(sentences))
    scored = sorted(j for w in windows for j in w.sentences)
    assert scored == list(range(len(sentences)))  # every sentence once, in order across windows
    assert [j for w in windows for j in w.sentences] == scored
    sep, cls = tok.sep_token_id, tok.cls_token_id
    for w in windows:
        for j, (a, b), partial in zip(w.sentences, w.spans, w.partial):
            assert w.input_ids[a] == cls
            if not partial:
                assert w.input_ids[b - 1] == sep  # the span ends at the sentence's own [SEP] ...
                if j in ends:  # ... and a complete last sentence of a document is followed by the boundary
                    assert w.input_ids[b] == sep
                elif b < len(w.input_ids):
                    assert w.input_ids[b] == cls
    # Exactly one extra token per boundary compared with the single-document packing.
    doc_tokens = sum(len(w.input_ids) for w in windows)
    assert len(ends) == len(lengths) - 1 - sum(1 for n in lengths[:-1] if n == 0)
    if len(windows) == len(single) == 1:
        assert doc_tokens == sum(len(w.input_ids) for w in single) + len(ends)


def test_scoring_example_with_document_lengths_trains_and_scores(tiny):
    from wikiref.model import score_sentences

    model, tok = tiny
    rng = np.random.default_rng(3)
    sents = _sentences(rng, 6)
    ex = ScoringExample(["river"], sents, [0.1] * 6, "a", doc_lengths=[2, 4])
    scores = score_sentences(model, tok, [(ex.query, ex.sentences, ex.doc_lengths), (ex.query, ex.sentences)])
    assert len(scores[0]) == len(scores[1]) == 6
    # The boundary changes the input, so the scores of the second document differ.
    assert not np.allclose(scores[0], scores[1])


@pytest.mark.slow
def test_max_steps_stops_mid_epoch_and_spans_the_schedule(tmp_path):
    from wikiref.stages import pretrain as pt

    train_df = pt.synthetic_oracle_frame(24, seed=1, prefix="tr")
    dev_df = pt.synthetic_oracle_frame(6, seed=2, prefix="dv")
    tr, dv = go.to_examples(train_df, "regression"), go.to_examples(dev_df, "regression")
    torch.manual_seed(0)
    model, tok = build_scorer(
        ScorerConfig(encoder="tiny-random", pooling="query", head="regression", max_length=48, stride=16, num_levels=4)
    )
    settings = TrainSettings(epochs=1, batch_size=4, lr=1e-3, seed=7, progress=False, device="cpu", bucket_batches=2)

    def run(max_steps, name):
        torch.manual_seed(0)
        fresh, tok2 = build_scorer(model.config)
        settings.max_steps = max_steps
        return train(fresh, tok2, tr, dv, settings, tmp_path / name)

    per_epoch = run(None, "epoch").history[-1]["global_step"]
    assert per_epoch > 3
    assert [h["global_step"] for h in run(3, "short").history] == [3]  # stops mid-epoch
    # More steps than one epoch holds: as many epochs as needed, stopping at exactly max_steps.
    assert [h["global_step"] for h in run(per_epoch + 2, "long").history] == [per_epoch, per_epoch + 2]
    with pytest.raises(ValueError, match="max_steps"):
        settings.max_steps = 0
        train(model, tok, tr, dv, settings, tmp_path / "m3")


# --------------------------------------------------------------------------- the oracle of any source


def test_oracle_over_pooled_sentences_equals_the_reference_greedy():
    rows = _examples("qmdsir", 12, docs=3, seed=5)
    table, selected = example_oracle_table(_table(rows))
    assert table.schema.equals(ORACLE_SOURCE)
    out = table.to_pylist()
    assert [r["id"] for r in out] == sorted(r["id"] for r in rows)
    by_id = {r["id"]: r for r in rows}
    for r, k in zip(out, selected):
        src = by_id[r["id"]]
        pooled = [s for d in src["documents"] for s in d["sentences"]]
        assert r["doc_sentences"] == pooled
        assert r["doc_lengths"] == [len(d["sentences"]) for d in src["documents"]]
        assert r["doc_ids"] == [d["id"] for d in src["documents"]]
        assert r["statement"] == " ".join(src["summary"])
        idx, score = greedy_oracle_reference(pooled, r["statement"], metric="rouge2_f1")
        assert r["oracle_indices"] == idx and r["oracle_score"] == pytest.approx(score)
        assert r["oracle_labels"] == [int(i in idx) for i in range(len(pooled))]
        assert len(idx) == k
        # The summary restates the first sentence of the first and the last of the last document.
        assert 0 in idx and len(pooled) - 1 in idx


def test_wikiref_export_gives_the_same_oracle_as_the_wikiref_spine():
    """A single-document example: the pooled oracle is the spine's oracle of the same statement."""
    from wikiref.supervised.labels import oracle_record

    rows = _examples("wikiref", 6, docs=1, seed=9)
    table, _ = example_oracle_table(_table(rows))
    for r, src in zip(table.to_pylist(), sorted(rows, key=lambda x: x["id"])):
        rec = oracle_record(src["documents"][0]["sentences"], " ".join(src["summary"]))
        assert r["oracle_indices"] == rec["oracle_indices"] and r["oracle_scores"] == rec["oracle_scores"]


# --------------------------------------------------------------------------- the grid


def test_cells_grid_and_paramspace_names(repo):
    from snakemake.utils import Paramspace

    params = config.load_params(repo / "params.yaml")
    cells = compare.cells(params)
    ids = [c.id for c in cells]
    assert ids[-1] == "source~none_budget~none" and len(set(ids)) == len(ids)
    space = Paramspace(compare.grid(params), filename_params="*", single_wildcard="cell")
    assert list(space.instance_patterns) == [c.id for c in cells if c.trains]
    for c in cells:
        assert compare.parse_cell(c.id) == c
    for bad in ("source~wiki_budget~equal", "source~none_budget~equal", "budget~equal_source~wcep", "source~wcep"):
        with pytest.raises(compare.CompareError):
            compare.parse_cell(bad)
    p = copy.deepcopy(params)
    p["compare"]["sources"] = [*p["compare"]["sources"], "union"]
    p["compare"]["union"] = ["wikiref"]
    with pytest.raises(compare.CompareError, match="two or more"):
        compare.cells(p)
    assert compare.compared_sources(params) == ["wikiref", "qmdscnn", "qmdsir", "wcep", "psg2sum"]


def test_each_benchmark_runs_its_modes(repo):
    """Fine-tuned, learning to rank (the cell's scorer a signal; the ranker alone for the encoder-only row) and
    transfer (not for the encoder-only row), as compare.duc / compare.qmsum switch them."""
    from wikiref.stages.compare.extractive import _benchmark_run

    params = config.load_params(repo / "params.yaml")
    params["compare"]["duc"]["ltr"] = True  # the paper and tiny parameter sets' (the sample's is off)
    wcep, none = compare.parse_cell("source~wcep_budget~equal"), compare.parse_cell("source~none_budget~none")
    assert _benchmark_run(params, wcep, "duc")[2] == ["finetuned", "ltr", "transfer"]
    assert _benchmark_run(params, none, "duc")[2] == ["finetuned", "ltr"]
    assert _benchmark_run(params, wcep, "qmsum")[2] == ["finetuned", "transfer"]  # the sample's: no ltr
    params["compare"]["qmsum"]["ltr"] = True
    assert _benchmark_run(params, none, "qmsum")[2] == ["finetuned", "ltr"]
    off = copy.deepcopy(params)
    off["compare"]["duc"]["ltr"] = False
    assert _benchmark_run(off, wcep, "duc")[2] == ["finetuned", "transfer"]
    assert compare.MODE_LABELS["ltr"].startswith("learning to rank")


def test_cell_jobs_do_not_read_the_table_iv_variants_or_table_vi_settings(repo):
    from wikiref.registry import params_json

    params = config.load_params(repo / "params.yaml")
    other = copy.deepcopy(params)
    other["pretrain"]["variants"] = other["pretrain"]["variants"][:1]
    other["finetune"]["settings"] = other["finetune"]["settings"][:1]
    other["compare"]["budgets"] = ["equal", "natural"]
    other["compare"]["qmsum"]["transfer"] = False
    for job in ("pretrain", "duc", "qmsum"):
        passed = json.loads(params_json(params, "compare", job))
        # Every other key of the sections (a new one reaches the job without a registry change), not the lists.
        assert set(passed["pretrain"]) == set(params["pretrain"]) - {"variants"}
        if job != "pretrain":
            assert set(passed["finetune"]) == set(params["finetune"]) - {"settings"}
        config.validate_sections(passed)
    for job in ("pretrain", "duc"):
        assert params_json(params, "compare", job) == params_json(other, "compare", job)
    assert params_json(params, "compare", "qmsum") != params_json(other, "compare", "qmsum")
    other = copy.deepcopy(params)
    other["pretrain"]["lr"] *= 2  # a training key still reruns the cells
    assert params_json(params, "compare", "pretrain") != params_json(other, "compare", "pretrain")


def test_shares_and_document_caps():
    assert compare.shares(10, 3) == [4, 3, 3] and sum(compare.shares(7, 5)) == 7
    df = pd.DataFrame(
        [
            {
                "doc_sentences": ["a", "b", "c", "d", "e", "f"],
                "oracle_labels": [1, 0, 0, 1, 0, 1],
                "oracle_scores": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6],
                "doc_lengths": [3, 1, 2],
                "doc_ids": ["x", "y", "z"],
                "oracle_indices": [0, 3, 5],
            }
        ]
    )
    out, cut = compare.cap_documents(df, max_documents=2, document_sentences=2)
    r = out.iloc[0]
    assert list(r.doc_sentences) == ["a", "b", "d"] and list(r.doc_lengths) == [2, 1] and cut == 3
    assert list(r.oracle_labels) == [1, 0, 1] and list(r.oracle_indices) == [0, 2] and list(r.doc_ids) == ["x", "y"]


@pytest.fixture(scope="module")
def two_sources(tmp_path_factory, repo):
    """Oracle splits of two sources (one single-, one multi-document) made by the oracle job."""
    root = tmp_path_factory.mktemp("cmp")
    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])
    sizes = {"wikiref": 9, "qmdsir": 14}
    for source, docs in (("wikiref", 1), ("qmdsir", 3)):
        src_dir = root / "sources" / source
        src_dir.mkdir(parents=True)
        inputs = {}
        for k, split in enumerate(layout.SPLITS):
            n = sizes[source] if split == "train" else 4
            path = src_dir / f"{split}.parquet"
            import pyarrow.parquet as pq

            pq.write_table(_table(_examples(source, n, docs, seed=k + docs, split=split)), path)
            inputs[split] = path
        outputs = {**compare.oracle_files(source, root / "oracle"), "metrics": root / f"oracle_{source}.json"}
        m = compare.oracle(params, inputs, outputs, source=source)
        assert m["splits"]["train"]["examples"] == sizes[source] and m["standin"]
    return root, params


def test_equal_budget_cells_see_the_same_examples_and_optimizer_steps(two_sources):
    root, params = two_sources
    results = {}
    for cell in ("source~wikiref_budget~equal", "source~qmdsir_budget~equal", "source~union_budget~equal"):
        inputs = compare.pretrain_inputs(params, cell, root / "oracle")
        out = {"model_dir": root / "models" / cell, "result": root / f"{cell}.json"}
        results[cell] = compare.pretrain(params, inputs, out, cell=cell)
        assert json.loads((root / f"{cell}.json").read_text())["cell"] == cell
    # N = the smallest training split (wikiref: 9); the same steps everywhere.
    assert {r["examples"] for r in results.values()} == {9}
    assert {r["optimizer_steps"] for r in results.values()} == {params["compare"]["equal"]["steps"]}
    assert results["source~union_budget~equal"]["examples_by_source"] == {"wikiref": 5, "qmdsir": 4}
    assert results["source~qmdsir_budget~equal"]["document_boundaries"] > 0
    assert results["source~wikiref_budget~equal"]["document_boundaries"] == 0
    assert all(r["standin"] for r in results.values())


def test_equal_budget_larger_than_a_source_is_a_clear_error(two_sources):
    root, params = two_sources
    p = copy.deepcopy(params)
    p["compare"]["equal"]["examples"] = 12
    inputs = compare.pretrain_inputs(p, "source~wikiref_budget~equal", root / "oracle")
    with pytest.raises(compare.CompareError, match="source wikiref: 9 usable training examples"):
        compare.pretrain(
            p, inputs, {"model_dir": root / "x", "result": root / "x.json"}, cell="source~wikiref_budget~equal"
        )


# --------------------------------------------------------------------------- findings


def _row(source, mode, r2, **extra):
    return {
        "source": source,
        "Source": compare.SOURCE_LABELS.get(source, source),
        "Budget": "equal",
        "mode": mode,
        "DUC 2005 R-2": r2,
        "DUC 2006 R-2": r2,
        "QMSum R-2": extra.get("q", r2),
    }


def test_findings_follow_the_numbers_and_say_ties():
    rows = [_row("wcep", "finetuned", 7.0), _row("wikiref", "finetuned", 6.5), _row("none", "finetuned", 6.9)]
    f = compare.findings(rows, [2005, 2006], "gold_span")
    duc = next(x for x in f if x["benchmark"] == "DUC" and x["mode"] == "finetuned")
    assert duc["best"]["source"] == "wcep" and duc["margin_over_next"] == pytest.approx(0.5)
    assert duc["margin_over_no_augmentation"] == pytest.approx(0.1)
    assert "WCEP (equal budget) scores highest (7.00), 0.50 above WikiRef" in duc["text"]
    tie = compare.findings([_row("wcep", "transfer", 5.0), _row("qmdsir", "transfer", 5.0)], [2005], None)
    assert "no single best source" in tie[0]["text"]
    below = compare.findings([_row("wcep", "finetuned", 5.0), _row("none", "finetuned", 6.0)], [2005], None)
    assert "1.00 below the encoder without augmentation" in below[0]["text"]
    # A cell missing a year is not ranked on the mean of the others.
    missing = [_row("wcep", "finetuned", 5.0), {**_row("qmdsir", "finetuned", 9.0), "DUC 2006 R-2": None}]
    ranked = compare.findings(missing, [2005, 2006], None)[0]["ranking"]
    assert [r["source"] for r in ranked] == ["wcep"]


def test_findings_say_when_the_runner_up_is_inside_the_best_interval():
    rows = [
        {**_row("wcep", "finetuned", 7.0, q=6.0), compare.QMSUM_R2_CI: [5.0, 7.0]},
        {**_row("qmdsir", "finetuned", 6.0, q=5.5), compare.QMSUM_R2_CI: [4.5, 6.5]},
    ]
    q = next(f for f in compare.findings(rows, [2005], "gold_span") if f["benchmark"] == "QMSum")
    assert q["next_inside_ci95"] and q["best_ci95"] == [5.0, 7.0]
    assert "inside its 95% bootstrap interval [5.00, 7.00]: not a clear difference" in q["text"]
    rows[1]["QMSum R-2"] = 4.0
    q = next(f for f in compare.findings(rows, [2005], "gold_span") if f["benchmark"] == "QMSum")
    assert not q["next_inside_ci95"] and "interval" not in q["text"]


def test_findings_use_the_duc_interval_when_one_year_was_tested():
    a = {**_row("wcep", "finetuned", 7.0), "DUC 2006 R-2": None, compare.duc_r2_ci(2005): [6.0, 8.0]}
    b = {**_row("qmdsir", "finetuned", 6.5), "DUC 2006 R-2": None, compare.duc_r2_ci(2005): [5.0, 7.0]}
    duc = compare.findings([a, b], [2005, 2006], None)[0]
    assert duc["measure"] == "mean R-2 recall over 2005" and duc["next_inside_ci95"]
    both = compare.findings([_row("wcep", "finetuned", 7.0), _row("qmdsir", "finetuned", 6.5)], [2005, 2006], None)
    assert "next_inside_ci95" not in both[0]  # a mean over years has no interval here


# --------------------------------------------------------------------------- the abstractive model axis


def test_abstractive_cells_names_and_job_params(repo):
    from wikiref.registry import params_json

    params = config.load_params(repo / "params.yaml")
    cells = compare.abstractive_cells(params)
    models = [m["name"] for m in params["compare"]["abstractive"]["models"]]
    assert len(cells) == len(models) * len(compare.training_cells(params))
    for c in cells:
        assert compare.parse_abstractive_cell(c.id) == c and c.cell in compare.training_cells(params)
        assert re.fullmatch(compare.ABSTRACTIVE_CELL_REGEX, c.id) and not re.fullmatch(compare.CELL_REGEX, c.id)
    for bad in ("model~a_b_source~wcep_budget~equal", "model~x_source~none_budget~none", "source~wcep_budget~equal"):
        with pytest.raises(compare.CompareError):
            compare.parse_abstractive_cell(bad)
    # A cell's job gets its own model only: adding another model or editing the runs reruns none of its jobs.
    other = copy.deepcopy(params)
    other["compare"]["abstractive"]["models"].append({"name": "pgn", "family": "seq2seq", "config": {"copy": True}})
    other["abstractive"]["runs"] = other["abstractive"]["runs"][:1]
    cell = cells[0].id
    assert params_json(params, "compare", "abstractive", **compare.abstractive_only(params, cell)) == params_json(
        other, "compare", "abstractive", **compare.abstractive_only(other, cell)
    )
    none = copy.deepcopy(params)
    none["compare"]["abstractive"]["models"] = []
    assert compare.abstractive_cells(none) == [] and list(compare.abstractive_grid(none).columns) == [
        "model",
        "source",
        "budget",
    ]


def test_abstractive_cell_trains_on_the_extractive_cells_examples(two_sources, duc_years, tmp_path):
    root, params = two_sources
    p = copy.deepcopy(params)
    p["compare"]["qmsum"]["settings"] = []  # QMSum is covered by the end-to-end workflow test
    cell = "model~hs-joint_source~union_budget~equal"
    inputs = compare.abstractive_inputs(p, cell, root / "oracle")
    inputs["years"] = [duc_years[y] for y in sorted(duc_years)]
    outs = {"model_dir": tmp_path / "m", "result": tmp_path / "r.json"}
    r = compare.abstractive(p, inputs, outs, cell=cell)
    # The same N and shares as the extractive cell source~union_budget~equal; its own step budget.
    assert r["examples"] == 9 and r["examples_by_source"] == {"wikiref": 5, "qmdsir": 4}
    assert r["optimizer_steps"] == p["compare"]["abstractive"]["steps"] and r["family"] == "hiersumm"
    assert sorted(r["duc"]["years"]) == ["2005", "2006", "2007"] and r["standin"]
    for year, rec in r["duc"]["years"].items():
        assert rec["topics"] == 3 and 0 <= rec["recall"]["ROUGE-2"] <= 100
        for summary in r["summaries"][f"duc{year}"].values():  # word tokens (punctuation does not count, as in -l)
            assert sum(any(ch.isalnum() for ch in w) for w in " ".join(summary).split()) <= p["duc"]["summary_words"]
    again = compare.abstractive(p, inputs, {"model_dir": tmp_path / "m2", "result": tmp_path / "r2.json"}, cell=cell)
    assert again["summaries"] == r["summaries"]  # deterministic
    assert json.loads((tmp_path / "r.json").read_text())["cell"] == cell


def test_abstractive_rows_join_the_table_as_a_model_axis(repo):
    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])
    years = sorted(int(y) for y in params["duc"]["years"])
    setting = params["compare"]["qmsum"]["settings"][0]
    duc_rec = {"recall": {"ROUGE-1": 20.0, "ROUGE-2": 3.0, "ROUGE-SU4": 6.0}, "recall_ci": {"ROUGE-2": [2.0, 4.0]}}
    qrec = {"modes": {}, "standin": False}
    results: dict = {"pretrain": {}, "duc": {}, "qmsum": {}, "abstractive": {}}
    for c in compare.cells(params):
        results["duc"][c.id] = {"modes": {}, "standin": False}
        results["qmsum"][c.id] = qrec
    rouge = {m: {"f1": 1.0, "f1_ci": [0.5, 1.5]} for m in ("rouge1", "rouge2", "rougeL")}
    for k, c in enumerate(compare.abstractive_cells(params)):
        results["abstractive"][c.id] = {
            "label": f"{c.model} (hiersumm, abstractive)",
            "examples": 9,
            "optimizer_steps": 4,
            "duc": {"years": {str(y): {**duc_rec, "recall": {**duc_rec["recall"], "ROUGE-2": 3.0 + k}} for y in years}},
            "qmsum": {"rouge": rouge},
            "standin": True,
        }
    out = compare.assemble(params, results, {})
    abstractive = [r for r in out["rows"] if r["mode"] == compare.ABSTRACTIVE_MODE]
    assert len(abstractive) == len(compare.abstractive_cells(params))
    assert all(r["Model"].endswith("(hiersumm, abstractive)") and r[f"DUC {years[0]} R-2"] >= 3.0 for r in abstractive)
    assert all(r["QMSum R-2"] == 1.0 for r in abstractive) and setting
    found = [f for f in out["findings"] if f["mode"] == compare.ABSTRACTIVE_MODE and f["benchmark"] == "DUC"]
    assert (
        len(found) == 1
        and found[0]["model"] == "hs-joint"
        and "abstractive, no fine-tuning hs-joint" in found[0]["text"]
    )
    best = compare.abstractive_cells(params)[-1]
    assert found[0]["best"]["source"] == best.source
    with pytest.raises(compare.CompareError, match="no result of abstractive cell"):
        compare.assemble(params, {**results, "abstractive": {}}, {})


def test_the_table_job_needs_every_result_among_the_files_it_is_given(repo, capsys):
    from wikiref.cli import main
    from wikiref.registry import params_json

    params = config.load_params(repo / "params.yaml", [repo / "config" / "tiny.yaml"])
    files = compare.result_files(params)
    given = [f for v in files.values() for f in v]
    p = params_json(params, "compare", "table")
    with pytest.raises(SystemExit, match=f"--results lacks {re.escape(given[0])}"):
        main(["compare", "table", "--params-json", p, "--results", *given[1:]])
