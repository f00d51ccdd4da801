"""The abstractive stage: params and per-run job parameters, one run of each family trained, tested and DUC-tested
end to end on tiny synthetic sources (deterministic), and the tables beside the papers' numbers."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
import yaml

from wikiref import config, examples
from wikiref.extractive import official
from wikiref.files import write_json, write_parquet
from wikiref.registry import params_json
from wikiref.schemas import DUC
from wikiref.stages.abstractive import runs as R
from wikiref.stages.abstractive import stage as S
from wikiref.stages.abstractive import tables as T
from wikiref.supervised import abstractive_runs as ga
from wikiref.tables import STANDIN_NOTE, StandinMismatch

REPO = Path(__file__).resolve().parents[1]
PROFILES = ["params.yaml", "config/tiny.yaml", "config/paper.yaml"]
FLAGS = "-n 2 -m -c 95 -r 200 -a"
DUC_FLAGS = "-n 2 -x -m -2 4 -u -c 95 -r 200 -f A -p 0.5 -t 0 -l 250"


# ------------------------------------------------------------------------------------------ params
@pytest.mark.parametrize("name", PROFILES)
def test_profiles_declare_valid_runs(name):
    params = config.load_params(REPO / "params.yaml", [] if name == "params.yaml" else [REPO / name])
    a = params["abstractive"]
    assert a["runs"], name
    names = [entry["name"] for entry in a["runs"]]
    for entry in a["runs"]:
        run = entry["name"]
        cfg, use_query = ga.model_config(params, entry)  # every override is a key of the run's family
        assert set(cfg) == set(ga.CONFIG_KEYS[entry["family"]])
        assert R.train_job(params, run) == f"train_{entry['family']}"
        ga.decode_settings(params, entry, duc=entry["duc"])
        if entry["family"] == "seq2seq":
            assert use_query is False and cfg["cell"] == "gru"  # Psg2Sum: GRUs, passage only
    if name == "config/paper.yaml":
        assert {f"{d}-{v}" for d in ("qmdscnn", "qmdsir") for v in T.HS_VARIANTS} <= set(names)
        assert set(T.PSG2SUM_RUNS.values()) <= set(names)
        assert {"qmdscnnir-baseline", "qmdscnnir-joint"} <= set(names)
        s2s = a["seq2seq"]
        assert (s2s["embedding_size"], s2s["hidden_size"], s2s["dropout"], s2s["train"]["batch_size"]) == (
            300,
            512,
            0.5,
            64,
        )
        assert a["decode"]["beam"] == 5 and a["decode"]["length_penalty"] == 0.4
        joint = R.run_entry(params, "qmdscnn-joint")["config"]
        assert joint["decoder_local_global"] is True and joint["query_encoder"] is True


@pytest.mark.parametrize(
    "edit",
    [
        lambda a: a["runs"][0].update(family="transformer"),
        lambda a: a["runs"][0]["config"].update(hidden=3),
        lambda a: a["runs"].append(dict(a["runs"][0], name="bad name")),
        lambda a: a["runs"][0].update(train=[]),
        lambda a: a["runs"][0].update(train=["wikisum"]),
        lambda a: a["runs"][0].pop("duc"),
        lambda a: a["decode"].update(beam=0),
        lambda a: a.update(runs=[]),
    ],
)
def test_schema_rejects_bad_runs(edit):
    params = yaml.safe_load((REPO / "params.yaml").read_text())
    edit(params["abstractive"])
    with pytest.raises(config.ParamsError):
        config.validate(params)


def test_a_config_key_of_the_other_family_or_a_repeated_name_is_refused():
    params = config.load_params(REPO / "params.yaml")
    entry = dict(R.run_entry(params, "psg2sum-s2s"), config={"d_model": 64})
    with pytest.raises(R.AbstractiveError, match="not seq2seq settings"):
        ga.model_config(params, entry)
    params["abstractive"]["runs"].append(R.run_entry(params, "psg2sum-s2s"))
    with pytest.raises(R.AbstractiveError, match="duplicate"):
        R.run_names(params)
    with pytest.raises(R.AbstractiveError, match="no run"):
        R.run_entry(config.load_params(REPO / "params.yaml"), "psg2sum-nothing")


def test_a_profile_overlay_replaces_the_grid():
    """Snakemake merges --configfile files over params.yaml: the runs (a list) are replaced, not merged."""
    merged = config.load_params(REPO / "params.yaml", [REPO / "config/tiny.yaml"])
    overlay = yaml.safe_load((REPO / "config/tiny.yaml").read_text())
    assert R.run_names(merged) == [r["name"] for r in overlay["abstractive"]["runs"]]
    assert len(R.run_names(merged)) < len(R.run_names(config.load_params(REPO / "params.yaml")))


def test_a_runs_job_params_hold_only_its_run_and_its_family():
    params = config.load_params(REPO / "params.yaml")
    run = "psg2sum-pgn"
    text = params_json(params, "abstractive", R.train_job(params, run), **R.run_only(params, run))
    p = json.loads(text)
    assert p["abstractive"]["runs"] == [R.run_entry(params, run)]
    assert "seq2seq" in p["abstractive"] and "hiersumm" not in p["abstractive"]
    assert set(p["model"]) == {"device", "amp", "eval_batch_size"}
    config.validate_sections(p)
    # editing another run, or the other family, leaves this job's params (its rerun trigger) unchanged
    other = copy.deepcopy(params)
    by_name = {r["name"]: r for r in other["abstractive"]["runs"]}
    by_name["qmdscnn-joint"]["config"]["ordering"] = True
    other["abstractive"]["hiersumm"]["d_model"] = 64
    other["abstractive"]["runs"].insert(0, dict(by_name[run], name="psg2sum-new"))
    assert params_json(other, "abstractive", R.train_job(other, run), **R.run_only(other, run)) == text
    by_name[run]["config"]["coverage_weight"] = 0.5
    assert params_json(other, "abstractive", R.train_job(other, run), **R.run_only(other, run)) != text


def test_train_inputs_and_duc_flags():
    params = config.load_params(REPO / "params.yaml")
    files = R.train_inputs(params, "qmdsir-joint")
    assert files["train"] == ["data/sources/qmdsir/train.parquet"]
    assert files["dev"] == ["data/sources/qmdsir/dev.parquet"]
    assert files["duc"] == [f"data/duc/{y}.parquet" for y in params["abstractive"]["duc"]["years"]]
    assert R.train_inputs(params, "psg2sum-s2s")["duc"] == []
    assert R.duc_flags(DUC_FLAGS) == DUC_FLAGS.replace("-x ", "")
    assert S.truncate_words(["a", ",", "b", ".", "c"], 2) == ["a", ",", "b", "."]
    assert S.truncate_words(["a", "b"], 0) == []


# ---------------------------------------------------------------------------------- synthetic data
TOPICS = [
    ("river", ["the river floods the valley every spring .", "farmers plant rice near the river ."]),
    ("castle", ["the old castle stands on a hill .", "tourists visit the castle in summer ."]),
    ("comet", ["a bright comet crossed the night sky .", "astronomers tracked the comet for weeks ."]),
    ("bridge", ["the stone bridge joins two towns .", "the bridge was built in the last century ."]),
]


def _sources(root: Path, *, standin: bool) -> dict:
    """psg2sum-like (one passage, summary = its first sentence) and qmdsir-like (three documents) sources."""
    paths: dict = {}
    for source, n_docs in (("psg2sum", 1), ("qmdsir", 3)):
        rows = []
        for i in range(24):
            name, sents = TOPICS[i % len(TOPICS)]
            split = "train" if i < 16 else "dev" if i < 20 else "test"
            docs = [
                examples.document(f"d{i}-{k}", [f"{s[:-2]} number {i} ." for s in sents] + [f"item {k} of {name} ."])
                for k in range(n_docs)
            ]
            rows.append(
                examples.example(
                    source,
                    f"{i:03d}",
                    split=split,
                    query=[name, "history"],
                    documents=docs,
                    summary=[f"{sents[0][:-2]} number {i} ."],
                    query_origin="wikipedia_headings",
                    standin=standin,
                )
            )
        out = {s: root / source / f"{s}.parquet" for s in examples.SPLITS}
        examples.write_splits(rows, out)
        paths[source] = out
    return paths


def _duc(root: Path, year: int, *, standin: bool) -> tuple[Path, Path]:
    rows = []
    for t, (name, sents) in enumerate(TOPICS[:2]):
        topic = f"D{year % 100:02d}{t:02d}A"
        for pos in (1, 0):  # written out of order: documents are read oldest first (doc_position)
            rows.append(
                {
                    "id": f"{year}/{topic}/DOC{pos}",
                    "year": year,
                    "topic": topic,
                    "query": [name, f"Describe the {name}."],
                    "title": name,
                    "narrative": f"Describe the {name}.",
                    "doc_id": f"DOC{pos}",
                    "doc_date": f"2006010{pos}",
                    "doc_position": pos,
                    "doc_headline": name,
                    "doc_sentences": [f"{s} document {pos} ." for s in sents],
                    "sentence_targets": [0.0, 0.0],
                    "references": ["\n".join(sents), sents[0]],
                    "reference_ids": [f"{topic}.M.250.A.A", f"{topic}.M.250.A.B"],
                }
            )
    path, stats = root / f"{year}.parquet", root / f"{year}.stats.json"
    write_parquet(path, pa.Table.from_pylist(rows, schema=DUC))
    write_json(stats, {"year": year, "standin": standin})
    return path, stats


def _params(profile_standin: bool = False) -> dict:
    tiny = config.load_params(REPO / "params.yaml", [REPO / "config/tiny.yaml"])
    a = copy.deepcopy(tiny["abstractive"])
    a["max_train_examples"] = None
    a["max_eval_examples"] = None
    a["seq2seq"]["train"]["epochs"] = 2
    a["hiersumm"]["train"]["epochs"] = 2
    a["rouge_flags"] = FLAGS
    a["duc"]["years"] = [2006]
    a["runs"] = [
        {
            "name": "psg2sum-pgn",
            "family": "seq2seq",
            "config": {"copy": True, "coverage": True},
            "train": ["psg2sum"],
            "test": ["psg2sum"],
            "duc": False,
            "decode": {"length_penalty": 0.0},
        },
        {
            "name": "qmdsir-joint",
            "family": "hiersumm",
            "config": {"decoder_local_global": True, "query_encoder": True},
            "train": ["qmdsir"],
            "test": ["qmdsir"],
            "duc": True,
        },
    ]
    return {
        "profile": {"name": "test", "standin": profile_standin, "description": "test"},
        "seed": 13,
        "model": {"device": "cpu", "amp": False, "eval_batch_size": 8},
        "abstractive": a,
        "psg2sum": {"rouge_flags": FLAGS},
        "duc": {"rouge_flags": DUC_FLAGS, "summary_words": 250, "years": [2006, 2007]},
    }


def _train(params: dict, run: str, data: dict, out: Path) -> dict:
    entry = R.run_entry(params, run)
    inputs = {
        "train": {s: data["sources"][s]["train"] for s in entry["train"]},
        "dev": {s: data["sources"][s]["dev"] for s in entry["train"]},
        "test": {s: data["sources"][s]["test"] for s in entry["test"]},
        "duc": {2006: data["duc"][0]},
        "duc_stats": {2006: data["duc"][1]},
    }
    outputs = {
        "model_dir": out / "model",
        "summaries": out / "summaries.json",
        "metrics": out / "metrics.json",
        "live_dir": out / "live",
    }
    return S.run_train(params, inputs, outputs, run=run)


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Both runs trained once for the module (one thread, deterministic algorithms, as conftest's
    torch_deterministic, which is per test)."""
    import torch

    threads, was = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    root = tmp_path_factory.mktemp("abstractive")
    data = {"sources": _sources(root / "sources", standin=False), "duc": _duc(root / "duc", 2006, standin=False)}
    params = _params()
    out = {run: root / "runs" / run for run in R.run_names(params)}
    metrics = {run: _train(params, run, data, out[run]) for run in out}
    yield {"root": root, "data": data, "params": params, "out": out, "metrics": metrics}
    torch.use_deterministic_algorithms(was)
    torch.set_num_threads(threads)


# ------------------------------------------------------------------------------------------- train
def test_each_family_trains_tests_and_writes_its_files(trained):
    for run, m in trained["metrics"].items():
        out = trained["out"][run]
        entry = R.run_entry(trained["params"], run)
        assert m["run"] == run and m["family"] == entry["family"] and m["standin"] is False
        assert json.loads((out / "metrics.json").read_text()) == m
        assert (out / "model" / "model.safetensors").is_file() and (out / "model" / "abstractive.json").is_file()
        assert (out / "live").is_dir()
        assert m["data"]["train_examples"] == 16 and m["data"]["dev_examples"] == 4
        assert 1 <= m["training"]["best_epoch"] <= m["training"]["epochs"] == 2
        assert m["training"]["seconds"] > 0
        (source,) = entry["test"]
        test = m["test"][source]
        assert test["examples"] == 4 and test["flags"] == FLAGS
        for metric in ("rouge1", "rouge2", "rougeL"):
            s = test["scores"][metric]
            assert set(s) == {"recall", "recall_ci", "precision", "precision_ci", "f1", "f1_ci"}
            assert 0 <= s["f1"] <= 100 and s["f1_ci"][0] <= s["f1"] <= s["f1_ci"][1]
        summaries = json.loads((out / "summaries.json").read_text())
        assert set(summaries["test"][source]) == {f"{source}:{i:03d}" for i in range(20, 24)}
        assert all(isinstance(x, str) for sents in summaries["test"][source].values() for x in sents)
    assert trained["metrics"]["psg2sum-pgn"]["config"]["copy"] is True
    assert trained["metrics"]["psg2sum-pgn"]["config"]["coverage"] is True
    assert trained["metrics"]["psg2sum-pgn"]["use_query"] is False
    assert trained["metrics"]["psg2sum-pgn"]["duc"] == {}


def test_duc_years_are_summarised_per_topic_and_scored_as_table5(trained):
    m = trained["metrics"]["qmdsir-joint"]
    d = m["duc"]["2006"]
    assert d["topics"] == 2 and d["standin"] is False and d["flags"] == R.duc_flags(DUC_FLAGS)
    assert set(d["scores"]) == set(T.DUC_MEASURES)  # -x dropped: ROUGE-L is computed
    for s in d["scores"].values():
        assert s["recall_ci"][0] <= s["recall"] <= s["recall_ci"][1]
    summaries = json.loads((trained["out"]["qmdsir-joint"] / "summaries.json").read_text())
    assert set(summaries["duc"]["2006"]) == {"D0600A", "D0601A"}


def test_duc_items_read_documents_oldest_first_and_the_query():
    rows = [
        {
            "topic": "T1",
            "year": 2006,
            "query": ["Comets", "Describe comets."],
            "references": ["a b"],
            "reference_ids": ["x"],
            "doc_position": p,
            "doc_id": f"D{p}",
            "doc_date": "",
            "doc_sentences": [f"Document {p}."],
        }
        for p in (2, 0, 1)
    ]
    items, topics = S.duc_items(rows)
    assert [it.id for it in items] == ["T1"] and topics[0]["references"] == [["a b"]]
    assert items[0].documents == [["document", "0", "."], ["document", "1", "."], ["document", "2", "."]]
    assert items[0].query == ["comets", "describe", "comets", "."] and items[0].summary is None


def test_a_rerun_gives_identical_summaries(trained, tmp_path):
    run = "qmdsir-joint"
    m = _train(trained["params"], run, trained["data"], tmp_path)
    first = json.loads((trained["out"][run] / "summaries.json").read_text())
    assert json.loads((tmp_path / "summaries.json").read_text()) == first
    assert m["test"] == trained["metrics"][run]["test"] and m["duc"] == trained["metrics"][run]["duc"]


def test_standin_comes_from_the_data(tmp_path, torch_deterministic):
    params = _params()
    params["abstractive"]["runs"] = [R.run_entry(params, "psg2sum-pgn")]
    params["abstractive"]["seq2seq"]["train"]["epochs"] = 1
    data = {"sources": _sources(tmp_path / "sources", standin=True), "duc": (None, None)}
    m = _train(params, "psg2sum-pgn", data, tmp_path / "run")
    assert m["standin"] is True and "STAND-IN" in m["label"]
    (tmp_path / "duc").mkdir()
    assert S.duc_standin(*_duc(tmp_path / "duc", 2007, standin=True)) is True


# ------------------------------------------------------------------------------------------- table
def _baselines(standin: bool = False) -> dict:
    refs = {"a": ["the river floods the valley ."], "b": ["the castle stands on a hill ."]}
    systems = {"lead1": {"a": ["the river floods ."], "b": ["a castle ."]}, "textrank": {"a": ["rice ."], "b": []}}
    return {
        "standin": standin,
        "test_examples": 2,
        "rouge_flags": FLAGS,
        "results": {k: official.score(v, refs, flags=FLAGS) for k, v in systems.items()},
    }


def _table(tmp_path: Path, params: dict, metrics: dict, baselines: dict) -> dict:
    files = []
    for run, m in metrics.items():
        files.append(tmp_path / "runs" / f"{run}.json")
        write_json(files[-1], m)
    write_json(tmp_path / "baselines.json", baselines)
    stems = {k: tmp_path / k for k in ("psg2sum_table4", "qmdscnn_table3", "qmdsir_table4", "duc_table5")}
    out = S.run_table(
        params,
        {"runs": files, "psg2sum_baselines": tmp_path / "baselines.json"},
        {**stems, "metrics": tmp_path / "abstractive.json"},
    )
    return {"metrics": out, **{k: pd.read_csv(f"{v}.csv", keep_default_na=False, dtype=str) for k, v in stems.items()}}


def test_table_renders_every_row_beside_the_paper(trained, tmp_path):
    params = trained["params"]
    got = _table(tmp_path, params, trained["metrics"], _baselines())
    t4 = got["psg2sum_table4"]
    assert list(t4["Paper row"]) == ["s2s", "s2s+copy", "PGN", "LEAD1", "TextRank", "NN-SE"]
    assert t4["Paper R-1 R"][0] == "36.31 ± 0.66" and t4["Paper R-L F"][5] == "30.40 ± 0.63"
    assert "(not run)" in t4["Method"][0] and t4["R-1 F"][0] == ""  # psg2sum-s2s is not in this profile
    assert "(not run)" not in t4["Method"][2] and " ± " in t4["R-1 F"][2]  # our PGN
    assert " ± " in t4["R-2 P"][3] and "(not run)" in t4["Method"][5]  # LEAD1 from the baselines; no BERT row
    assert set(t4["Data"]) == {"real"}  # real data under a real profile: every row says real
    ir = got["qmdsir_table4"]
    assert list(ir["Model"]) == list(T.HS_VARIANTS.values())
    assert list(ir["Paper R-1"]) == ["43.60", "43.37", "39.37", "44.11", "45.53"]
    assert ir["Run"][4] == "qmdsir-joint" and " ± " in ir["R-L"][4]
    assert all("(not run)" in r for r in ir["Run"][:4])
    cnn = got["qmdscnn_table3"]
    assert list(cnn["Paper R-2"]) == ["15.40", "16.36", "14.95", "16.05", "16.33"]
    assert all("(not run)" in r for r in cnn["Run"])
    t5 = got["duc_table5"]
    assert list(zip(t5["Model"], t5["Dataset"])) == [
        (T.DUC_MODELS[m], T.DUC_DATA[d]) for m in T.DUC_MODELS for d in T.DUC_DATA
    ]
    joint_ir = t5[(t5["Model"] == "HS-Joint") & (t5["Dataset"] == "QmdsIr")].iloc[0]
    assert " ± " in joint_ir["2006 R-SU4"] and joint_ir["Paper 2006 R-SU4"] == "9.79"
    assert joint_ir["Paper 2006 R-1"] == "30.17"
    assert all("(not run" in r for r in t5["Run"][t5["Run"] != "qmdsir-joint"])
    m = got["metrics"]
    assert m["standin"] is False and set(m["runs"]) == {"psg2sum-pgn", "qmdsir-joint"}
    assert "psg2sum-s2s" in m["not_run"] and "qmdsir-joint" not in m["not_run"]
    assert json.loads((tmp_path / "abstractive.json").read_text()) == m
    md = (tmp_path / "psg2sum_table4.md").read_text()
    assert "Psg2Sum Table 4" in md and "STAND-IN" not in md


def test_a_standin_input_labels_every_row(trained, tmp_path):
    metrics = copy.deepcopy(trained["metrics"])
    metrics["qmdsir-joint"]["standin"] = True
    with pytest.raises(StandinMismatch):  # STAND-IN data under a profile that says real: refused
        _table(tmp_path / "refused", trained["params"], metrics, _baselines())
    params = dict(trained["params"], profile={"name": "test", "standin": True, "description": "t"})
    got = _table(tmp_path, params, metrics, _baselines(standin=True))
    # every table: its runs' data is STAND-IN, or (QmdsCnn Table 3, no run in this profile) the profile says so
    for name in ("psg2sum_table4", "qmdscnn_table3", "qmdsir_table4", "duc_table5"):
        assert set(got[name]["Data"]) == {"STAND-IN"}, name
        assert STANDIN_NOTE in (tmp_path / f"{name}.md").read_text()
    # a table of runs whose data is real says real, whatever the profile
    real = copy.deepcopy(trained["metrics"])
    got = _table(tmp_path / "real", params, real, _baselines(standin=False))
    assert set(got["qmdsir_table4"]["Data"]) == {"real"}
    assert STANDIN_NOTE not in (tmp_path / "real" / "qmdsir_table4.md").read_text()
    assert got["metrics"]["standin"] is True


def test_table_refuses_metrics_of_an_unlisted_run(trained, tmp_path):
    metrics = {"elsewhere": dict(trained["metrics"]["psg2sum-pgn"], run="elsewhere")}
    with pytest.raises(R.AbstractiveError, match="elsewhere"):
        _table(tmp_path, trained["params"], metrics, _baselines())
