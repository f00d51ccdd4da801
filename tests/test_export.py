"""`wikiref export`: a built source loads with `datasets.load_dataset`, its card says what the data says (sizes,
STAND-IN), a checkpoint's card quotes its metrics files; bad input is a clear error, not a traceback."""

from __future__ import annotations

import argparse
import json
import os

import pytest
import yaml

os.environ.setdefault("HF_DATASETS_OFFLINE", "1")  # before `datasets` is imported (it reads it once)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
datasets = pytest.importorskip("datasets")

from wikiref import examples, layout  # noqa: E402
from wikiref.cli import export as cli  # noqa: E402
from wikiref.export import model as export_model_mod  # noqa: E402
from wikiref.export.common import MARKER  # noqa: E402
from wikiref.export.sources import COLUMNS, SOURCES  # noqa: E402
from wikiref.files import write_json  # noqa: E402
from wikiref.schemas import EXAMPLE, SOURCE_NAMES  # noqa: E402


def run_cli(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="wikiref export")
    cli.add_arguments(parser)
    return cli.main(parser.parse_args(list(argv)))


def rows(split: str, n: int, standin, start: int = 0) -> list[dict]:
    """``n`` QmdsCnn-like examples; ``standin``: a bool, or a function of the row number."""
    out = []
    for i in range(start, start + n):
        docs = [
            examples.document(f"d{i}a", [f"First sentence {i}.", "Second sentence."], title=f"Story {i}"),
            examples.document(f"d{i}b", ["Another story."], origin="retrieved", score=1.5),
        ]
        out.append(
            examples.example(
                "qmdscnn",
                f"s{i:03d}",
                split=split,
                query=[f"Story {i}"],
                documents=docs,
                summary=[f"Highlight {i}."],
                query_origin="archived_title",
                standin=standin(i) if callable(standin) else standin,
                input_file=f"stories/{i % 2}.story",
                meta={"n": i},
            )
        )
    return out


def build(workdir, standin, sizes=None) -> None:
    """A built qmdscnn source under ``workdir`` at the layout's paths, written by the package's own helper
    (split files, statistics table captioned with the profile, metrics JSON)."""
    sizes = sizes or {"train": 3, "dev": 2, "test": 0}
    all_rows, start = [], 0
    for split, n in sizes.items():
        all_rows += rows(split, n, standin, start)
        start += n
    outputs = {
        "splits": {s: workdir / layout.SOURCE_SPLIT.format(source="qmdscnn", split=s) for s in layout.SPLITS},
        "table": workdir / layout.QMDSCNN_TABLE,
        "metrics": workdir / layout.QMDSCNN_METRICS,
    }
    profile = {"name": "sample", "standin": True, "description": "test"}
    examples.finish("qmdscnn", all_rows, outputs, profile=profile, title="QmdsCnn", counts={"records_read": 9})


def read_card(folder) -> tuple[dict, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    assert text.startswith("---\n")
    head, body = text[4:].split("\n---\n", 1)
    return yaml.safe_load(head), body


def load(folder, tmp_path):
    return datasets.load_dataset(str(folder), cache_dir=str(tmp_path / "hf-cache"))


# ------------------------------------------------------------------------------------------ dataset
def test_a_stand_in_source_loads_and_says_stand_in(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    build(tmp_path, standin=True)
    assert run_cli("dataset", "qmdscnn", "--out", "exports/qmdscnn") == 0
    assert "train=3, dev=2" in capsys.readouterr().out
    out = tmp_path / "exports/qmdscnn"

    ds = load(out, tmp_path)
    assert set(ds) == {"train", "dev"}  # the empty test split is left out (datasets cannot load it)
    assert (ds["train"].num_rows, ds["dev"].num_rows) == (3, 2)
    assert ds["train"].column_names == EXAMPLE.names
    assert ds["train"].features == datasets.Features.from_arrow_schema(EXAMPLE)  # the card's features match
    first = ds["train"][0]
    assert first["id"] == "qmdscnn:s000" and first["query"] == ["Story 0"] and first["summary"] == ["Highlight 0."]
    assert first["documents"][0]["sentences"] == ["First sentence 0.", "Second sentence."]
    assert first["documents"][1]["origin"] == "retrieved" and first["documents"][1]["score"] == 1.5
    assert json.loads(first["meta"]) == {"n": 0} and first["standin"] is True
    assert ds["dev"][0]["split"] == "dev"

    head, body = read_card(out)
    assert head["license"] == "cc-by-sa-4.0"  # every input a stand-in built from Wikipedia text
    assert head["task_categories"] == ["summarization"] and "stand-in-data" in head["tags"]
    assert head["pretty_name"] == "QmdsCnn (STAND-IN)"
    files = head["configs"][0]["data_files"]
    assert files == [{"split": "train", "path": "data/train.parquet"}, {"split": "dev", "path": "data/dev.parquet"}]
    assert [(s["name"], s["num_examples"]) for s in head["dataset_info"]["splits"]] == [("train", 3), ("dev", 2)]
    assert MARKER in body and "STAND-IN" in body and "Every example" in body
    assert "Profile: `sample`" in body and "results/tables/qmdscnn_table1" in body
    assert "| train | 3 | 3 | 2 | 1 |" in body  # sizes counted from the files: documents, retrieved per example
    assert "Not exported: test" in body
    for name in EXAMPLE.names:
        assert f"| `{name}` |" in body
    assert "`stories/0.story` | 3 |" in body  # input files counted over the exported rows
    licences = body.split("## Licences of the inputs", 1)[1].split("\n## ", 1)[0]
    assert "CC BY-SA 4.0" in licences and "CNN/DailyMail" not in licences  # only the terms of what is in the data
    assert (out / "metrics/qmdscnn.json").is_file() and "`counts.records_read` | 9 |" in body


def test_real_data_is_not_labelled_and_names_the_inputs_terms(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build(tmp_path, standin=False, sizes={"train": 2, "dev": 1, "test": 1})
    assert run_cli("dataset", "qmdscnn", "--out", str(tmp_path / "out")) == 0
    ds = load(tmp_path / "out", tmp_path)
    assert {k: v.num_rows for k, v in ds.items()} == {"train": 2, "dev": 1, "test": 1}
    head, body = read_card(tmp_path / "out")
    text = (tmp_path / "out/README.md").read_text(encoding="utf-8")
    assert "STAND-IN" not in text and "stand-in-data" not in head["tags"]
    assert head["license"] == "other" and "CNN/DailyMail" in body and "check the terms" in body
    assert "Not exported" not in body


def test_mixed_data_says_which_rows_are_stand_ins(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build(tmp_path, standin=lambda i: i == 0, sizes={"train": 2, "dev": 1, "test": 0})
    assert run_cli("dataset", "qmdscnn", "--out", "out") == 0
    head, body = read_card(tmp_path / "out")
    assert (
        "1 of the 3 examples" in body
        and "CNN/DailyMail" in body
        and "STAND-IN inputs of the 1 STAND-IN examples" in body
    )
    assert head["license"] == "other"


def test_the_card_quotes_the_parameters_dvc_recorded(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    build(tmp_path, standin=True)
    (tmp_path / layout.QMDSCNN_TABLE).with_suffix(".md").unlink()  # no caption: the profile comes from dvc.lock
    lock = {
        "schema": "2.0",
        "stages": {
            "qmdscnn": {
                "cmd": "wikiref qmdscnn build",
                "params": {"params.yaml": {"profile": {"name": "paper", "standin": False}, "qmdscnn": {"k": 4}}},
                "outs": [{"path": "data/sources/qmdscnn", "md5": "x.dir"}],
            }
        },
    }
    (tmp_path / "dvc.lock").write_text(yaml.safe_dump(lock))
    assert run_cli("dataset", "qmdscnn", "--out", "out") == 0
    _, body = read_card(tmp_path / "out")
    assert "stage `qmdscnn` (`dvc.lock`)" in body and "k: 4" in body and "Profile: `paper`" in body


def test_an_earlier_export_is_replaced_and_anything_else_is_not(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    build(tmp_path, standin=True)
    assert run_cli("dataset", "qmdscnn", "--out", "out") == 0
    (tmp_path / "out/stale.txt").write_text("old")
    assert run_cli("dataset", "qmdscnn", "--out", "out") == 0
    assert not (tmp_path / "out/stale.txt").exists()  # the folder is replaced as a whole
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine/notes.txt").write_text("keep me")
    assert run_cli("dataset", "qmdscnn", "--out", "mine") == 1
    assert "not an earlier export" in capsys.readouterr().err and (tmp_path / "mine/notes.txt").exists()
    assert run_cli("dataset", "qmdscnn", "--out", "data") == 1  # would replace the source itself
    assert "overlaps the input" in capsys.readouterr().err


@pytest.mark.parametrize(
    "case,message",
    [
        ("no_folder", "no folder"),
        ("no_split", "has no split file"),
        ("unreadable", "cannot read split file"),
        ("wrong_schema", "cannot read split file"),
        ("metrics_missing", "metrics file nowhere.json does not exist"),
        ("empty", "every split file"),
    ],
)
def test_bad_input_is_a_clear_error(tmp_path, monkeypatch, capsys, case, message):
    monkeypatch.chdir(tmp_path)
    src = tmp_path / layout.SOURCE_DIR.format(source="qmdscnn")
    argv = ["dataset", "qmdscnn", "--out", "out"]
    if case != "no_folder":
        build(tmp_path, standin=True, sizes={"train": 0, "dev": 0, "test": 0} if case == "empty" else None)
    if case == "no_split":
        for p in src.glob("*.parquet"):
            p.unlink()
    if case == "unreadable":
        (src / "dev.parquet").write_bytes(b"not parquet")
    if case == "wrong_schema":
        from wikiref.files import write_parquet

        write_parquet(src / "dev.parquet", __import__("pandas").DataFrame({"id": ["x"]}))
    if case == "metrics_missing":
        argv += ["--metrics", "nowhere.json"]
    assert run_cli(*argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("wikiref export dataset: ") and message in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_every_source_and_column_is_described():
    assert set(SOURCES) == set(SOURCE_NAMES)
    assert set(COLUMNS) == set(EXAMPLE.names)
    for source, info in SOURCES.items():
        assert info.terms  # the card has the real inputs' terms of every source
        assert info.metrics.startswith(layout.METRICS) and source in info.metrics + info.table


# ------------------------------------------------------------------------------------------ model
@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    """A saved tiny scorer (random 2-layer BERT, real tokenizer files)."""
    import torch

    from wikiref.model import ScorerConfig, build_scorer, save_scorer

    path = tmp_path_factory.mktemp("ckpt") / "scorer"
    torch.manual_seed(0)
    config = ScorerConfig(encoder="tiny-random", max_length=64, stride=32, max_query_tokens=32, num_levels=4)
    model, tok = build_scorer(config)
    save_scorer(model, tok, path)
    return path


def place_checkpoint(src, dst) -> None:
    import shutil

    shutil.copytree(src, dst)
    (dst / "last").mkdir()  # a training run's resumable state: not part of the export
    (dst / "last/state.pt").write_bytes(b"x")


def variant_metrics(standin: bool) -> dict:
    return {
        "variant": "qbert",
        "encoder": "tiny-random",
        "encoder_label": "tiny-random",
        "standin": standin,
        "threshold": 0.25,
        "threshold_candidates": 17,
        "dev": {"rouge1": 40.0, "rouge2": 12.3456, "rougeL": 30.0, "examples": 20},
        "test": {"rouge1": 41.0, "rouge2": 13.0, "rougeL": 31.0, "examples": 21},
        "rows": {"dev": {"standin": 20}, "test": {"standin": 21}},
        "training": {"best_epoch": 2, "history": [{"epoch": 1}, {"epoch": 2}]},
    }


def test_a_pretrain_checkpoint_gets_a_card_with_its_metrics(tmp_path, tiny_checkpoint, capsys):
    place_checkpoint(tiny_checkpoint, tmp_path / layout.PRETRAIN_MODEL_DIR.format(variant="qbert"))
    write_json(tmp_path / layout.PRETRAIN_VARIANT_METRICS.format(variant="qbert"), variant_metrics(True))
    write_json(tmp_path / layout.PRETRAIN_METRICS, {"profile": "tiny", "standin": True})
    ckpt = tmp_path / "models/pretrain/qbert"
    assert run_cli("model", str(ckpt), "--out", str(tmp_path / "share/qbert"), "--root", str(tmp_path)) == 0
    assert "(pretrain): " in capsys.readouterr().out
    out = tmp_path / "share/qbert"
    copied = {p.name for p in out.iterdir() if p.is_file()}
    assert {"model.safetensors", "config.json", "README.md", "tokenizer_config.json"} <= copied
    assert not (out / "last").exists()
    assert (out / "metrics/results/metrics/pretrain_qbert.json").is_file()
    assert (out / "metrics/results/metrics/pretrain.json").is_file()

    head, body = read_card(out)
    assert head["license"] == "other" and "stand-in-data" in head["tags"] and "extractive-summarization" in head["tags"]
    assert "# wikiref pretrain: qbert (STAND-IN)" in body and "STAND-IN" in body
    assert "Table IV variant `qbert`" in body and "data/oracle/{split}.parquet" in body
    assert "Base encoder: `tiny-random`" in body and "num_hidden_layers 2" in body
    assert "`tiny` (from `results/metrics/pretrain.json`)" in body
    assert "| `dev.rouge2` | 12.35 |" in body and "| `test.rouge1` | 41 |" in body
    assert "history" not in body and "threshold_candidates" not in body  # bookkeeping left out of the card
    assert "`model.safetensors` |" in body  # the files with their checksums

    from wikiref.model import load_scorer

    load_scorer(out)  # the copy is a working checkpoint


def test_real_metrics_leave_the_model_unlabelled_and_missing_files_are_noted(tmp_path, tiny_checkpoint):
    place_checkpoint(tiny_checkpoint, tmp_path / "models/finetune/qbert_da/2005")
    write_json(tmp_path / layout.FINETUNE_JOB_METRICS.format(setting="qbert_da", year=2005), {"standin": False})
    res = export_model_mod.export_model(tmp_path / "models/finetune/qbert_da/2005", tmp_path / "o", root=tmp_path)
    assert res["kind"] == "finetune" and res["standin"] is False and res["profile"] is None
    text = (tmp_path / "o/README.md").read_text(encoding="utf-8")
    assert "STAND-IN" not in text and "DUC 2005 held out" in text and "Profile\n\nNot recorded" in text


def test_a_checkpoint_outside_the_layout_quotes_the_metrics_given(tmp_path, tiny_checkpoint, capsys):
    place_checkpoint(tiny_checkpoint, tmp_path / "elsewhere/ckpt")
    write_json(tmp_path / "m.json", variant_metrics(False))
    ckpt = str(tmp_path / "elsewhere/ckpt")
    assert run_cli("model", ckpt, "--out", str(tmp_path / "o"), "--metrics", str(tmp_path / "m.json")) == 0
    _, body = read_card(tmp_path / "o")
    assert "Not known from the folder's path" in body and "| `dev.rouge2` | 12.35 |" in body
    assert (tmp_path / "o/metrics/m.json").is_file()
    assert run_cli("model", ckpt, "--out", str(tmp_path / "o2"), "--root", str(tmp_path)) == 0  # no metrics at all
    assert "is not recorded" in (tmp_path / "o2/README.md").read_text(encoding="utf-8")
    capsys.readouterr()


def test_model_bad_input_is_a_clear_error(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty/training.json").write_text("{}")
    for ckpt, message in ((tmp_path / "nope", "no checkpoint folder"), (tmp_path / "empty", "no weights")):
        assert run_cli("model", str(ckpt), "--out", str(tmp_path / "o")) == 1
        err = capsys.readouterr().err
        assert err.startswith("wikiref export model: ") and message in err


@pytest.mark.parametrize(
    "path,kind,fields",
    [
        ("models/pretrain/qbert", "pretrain", {"variant": "qbert"}),
        ("models/finetune/qbert_da/2006", "finetune", {"setting": "qbert_da", "year": "2006"}),
        ("models/finetune/qbert_da_iter/pruned", "finetune-pruned", {"setting": "qbert_da_iter"}),
        ("models/abstractive/hs-joint", "abstractive", {"run": "hs-joint"}),
        ("models/compare/source~wcep_budget~equal", "compare", {"cell": "source~wcep_budget~equal"}),
        ("models/ablations/pretrain/none", "ablations", {"aug": "none"}),
        ("models/wcep", "wcep", {}),
        ("models/compare/work/x", None, {}),
    ],
)
def test_checkpoint_kinds_come_from_the_layout(tmp_path, path, kind, fields):
    found, got = export_model_mod.match(tmp_path / path, tmp_path)
    assert (found.name if found else None, got) == (kind, fields)
