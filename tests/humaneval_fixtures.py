"""Hand-made inputs of the five human studies, written at their layout paths under a working folder."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from wikiref import config, layout, schemas

REPO = Path(__file__).resolve().parents[1]
# The words each hidden system's summaries are made of (never the system's name: the test looks for names).
WORDS = {"bert": "plain", "bert_da": "augmented", "wiki": "first-run", "cb": "second-run"}


def params(**studies) -> dict:
    """The tiny profile with every study enabled, small sizes (``studies`` overrides entries)."""
    p = config.load_params(REPO / "params.yaml", [REPO / "config/tiny.yaml"])
    s = p["humaneval"]["studies"]
    s["wikiref_table3"].update(enabled=True, split="test", bins=[[0.2, 0.5], [0.5, 1.0]], per_bin=2, raters=2)
    s["wikiref_table7"].update(enabled=True, year=2007, systems=["bert", "bert_da"], topics=4, raters=3)
    s["qmdscnnir_table6"].update(enabled=True, years=[2006, 2007], systems=["wiki", "cb"], topics=None, raters=3)
    s["psg2sum_table3"].update(enabled=True, thresholds=[0.5, 0.7], per_threshold=3, raters=1)
    s["wcep_ccnews"].update(enabled=True, articles=4, sentences=2, raters=1)
    for name, values in studies.items():
        s[name].update(values)
    p["psg2sum"]["dump"]["parts"] = ["p1"]
    p["humaneval"]["bootstrap"] = 500
    return p


def _table(path: str, rows: list[dict], schema: pa.Schema) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)


def _json(path: str, obj) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(obj))


def write_inputs(standin: bool = True) -> None:
    """Every study's input files in the current folder (oracle split, DUC years, finetune and abstractive
    summaries, Psg2Sum pairs, WCEP-total)."""
    scores = [0.1, 0.25, 0.3, 0.45, 0.55, 0.6, 0.9, 1.0]  # 3 in [0.2, 0.5), 4 in [0.5, 1.0], 0.1 in no bin
    _table(
        layout.ORACLE_FILE.format(split="test"),
        [
            {"id": f"ex{i}", "query": ["Article", f"Section {i}"], "doc_sentences": [f"Doc {i} s1.", f"Doc {i} s2."],
             "statement": f"Statement {i}.", "oracle_labels": [1, 0], "oracle_scores": [x, 0.0], "oracle_indices": [0],
             "oracle_score": x, "standin": standin}
            for i, x in enumerate(scores)
        ],
        schemas.ORACLE,
    )  # fmt: skip
    for year in (2006, 2007):
        rows = [
            {"id": f"D{year}{t}-{d}", "year": year, "topic": f"D{year}{t}", "query": [f"Topic {t}", "Describe it."],
             "title": f"Topic {t}", "narrative": "Describe it.", "doc_id": f"doc{d}", "doc_date": "2006-01-01",
             "doc_position": d, "doc_headline": "", "doc_sentences": ["A sentence."], "sentence_targets": [0.1],
             "references": [f"Reference {t} one.", f"Reference {t} two."], "reference_ids": ["A", "B"]}
            for t in range(5)
            for d in range(2)
        ]  # fmt: skip
        _table(layout.DUC_YEAR.format(year=year), rows, schemas.DUC)
        _json(layout.DUC_YEAR_STATS.format(year=year), {"year": year, "standin": standin})
        for run in ("wiki", "cb"):
            path = layout.ABSTRACTIVE_SUMMARIES.format(run=run)
            old = json.loads(Path(path).read_text()) if Path(path).exists() else {"run": run, "test": {}, "duc": {}}
            old["standin"] = standin
            old["duc"][str(year)] = {f"D{year}{t}": [f"{WORDS[run]} summary of topic {t}."] for t in range(5)}
            _json(path, old)
    for setting in ("bert", "bert_da"):
        _json(
            layout.FINETUNE_SUMMARIES.format(setting=setting, year=2007),
            {f"D2007{t}": [f"{WORDS[setting]} sentence {t}."] for t in range(5)},
        )
    pairs = [
        {"page_id": i, "title": f"Page {i}", "rev_id": 100 + i, "parent_rev_id": 99 + i, "timestamp": "2019-01-01",
         "summary": f"Lead sentence {i}.", "passage": f"Passage {i} text.", "section": ["History"],
         "score": 0.5 + 0.05 * i, "candidates": 1, "standin": standin}
        for i in range(8)
    ]  # fmt: skip
    _table(layout.PSG2SUM_PART.format(part="p1"), pairs + pairs[:2], schemas.PSG2SUM_PAIRS)  # 2 duplicates
    for split in layout.SPLITS:
        docs = [
            {"id": f"{split}-{o}-{k}", "title": f"Title {k}", "sentences": ["One.", "Two.", "Three."], "url": "u",
             "origin": o, "score": 0.95 if o == "retrieved" else None}
            for o in ("original", "retrieved")
            for k in range(3)
        ]  # fmt: skip
        _table(
            layout.WCEP_TOTAL.format(split=split),
            [{"id": f"wcep:{split}", "source": "wcep", "split": split, "query": ["Event"], "documents": docs,
              "summary": ["The event happened."], "source_id": split, "query_origin": "portal_story",
              "standin": standin, "input_file": "x", "meta": "{}"}],
            schemas.EXAMPLE,
        )  # fmt: skip


def run_sample(p: dict) -> dict:
    from wikiref.stages.humaneval import stage
    from wikiref.stages.humaneval.studies import enabled

    studies = enabled(p["humaneval"])
    return stage.sample(
        p,
        {s: stage.study_inputs(p, s) for s in studies},
        {**{s: stage.outputs(p, s) for s in studies}, "metrics": layout.HUMANEVAL_SAMPLE_METRICS},
    )


def run_score(p: dict, ratings_dir: str = layout.HUMANEVAL_RATINGS_DIR) -> dict:
    from wikiref.stages.humaneval import sheets, stage
    from wikiref.stages.humaneval.studies import enabled

    studies = enabled(p["humaneval"])
    inputs = {s: {**stage.outputs(p, s), "ratings": sheets.rating_files(Path(ratings_dir) / s)} for s in studies}
    outputs = {s: layout.HUMANEVAL_TABLE.format(study=s) for s in studies}
    return stage.score(p, inputs, {**outputs, "metrics": layout.HUMANEVAL_METRICS})
