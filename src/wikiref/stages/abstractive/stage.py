"""The abstractive stage's jobs: :func:`run_train` (one per ``abstractive.runs`` entry) and :func:`run_table`.

:func:`run_train` (rule ``abstractive_train``, wildcard ``run``):

1. *Data*: the train splits of the run's ``train`` sources concatenated (sorted by id), a seeded subset of
   ``abstractive.max_train_examples`` (the same subset for every run on the same sources); dev likewise, a
   seeded subset of ``max_eval_examples`` per source. Rows become :class:`wikiref.model.abstractive.Item` s
   (lower-cased word / punctuation tokens); an example without a document token or a summary token is
   dropped and counted.
2. *Model*: vocabulary from the training items (``abstractive.vocab.max_words``), the family's config with the
   run's overrides (:func:`wikiref.supervised.abstractive_runs.model_config`), weights drawn from ``seed``;
   :func:`wikiref.model.abstractive.fit` with the family's ``train`` settings, the best epoch chosen by the
   family's ``select`` (``loss``: dev loss; ``rougeL``: dev ROUGE-L F1 of greedy summaries, HEROSumm's
   criterion) saved in ``models/abstractive/<run>/`` (resumable from its ``last/``), dvclive beside.
3. *Test*: the test split of each ``test`` source (seeded subset of ``max_eval_examples``) decoded with
   ``abstractive.decode`` + the run's ``decode`` overrides, the tokens cut into sentences
   (:func:`~wikiref.model.abstractive.split_sentences`), scored against the example's summary sentences by the
   official scorer through :func:`wikiref.extractive.official.score` (ROUGE-1/2/L R/P/F x100 with 95%
   intervals): ``psg2sum.rouge_flags`` for Psg2Sum, ``abstractive.rouge_flags`` for the other sources.
4. *DUC* (``duc: true``): every topic of each ``abstractive.duc.years`` year (``data/duc/<year>.parquet``, one row
   per topic x document, grouped by :func:`wikiref.extractive.baselines.rows_to_topics`: documents oldest first,
   query = title + narrative sentences, references = the model summaries) decoded with the DUC decode settings,
   truncated to ``duc.summary_words`` word tokens, scored by :func:`wikiref.extractive.baselines.evaluate`
   with ``duc.rouge_flags`` minus ``-x`` (Table 5 prints ROUGE-L; the flags' ``-l`` truncates at 250 words too):
   R-1 / R-2 / R-L / R-SU4 recall (and P / F) x100 with 95% intervals.

``standin`` comes from the data: any example used is ``standin``, or a DUC year's prepare stats say STAND-IN.

:func:`run_table` (rule ``abstractive_table``) renders the four tables of :mod:`.tables` and
``results/metrics/abstractive.json``.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wikiref.stages.abstractive import runs as R
from wikiref.supervised.abstractive_runs import (
    AbstractiveError,
    decode_settings,
    duc_items,
    model_config,
    truncate_words,
)

log = logging.getLogger(__name__)

PSG2SUM = "psg2sum"


# ------------------------------------------------------------------------------------------ data
def _read_rows(path: str | Path) -> list[dict]:
    from wikiref import examples as ex

    return sorted(ex.read(path).to_pylist(), key=lambda r: str(r["id"]))


def subset(rows: Sequence[Mapping], cap: int | None, key: str) -> list[Mapping]:
    """A seeded subset of at most ``cap`` rows (all when ``cap`` is None), in id order. ``key`` seeds it
    (``<seed>:<what>``), so every run drawing from the same rows gets the same subset."""
    rows = list(rows)
    if cap is not None and len(rows) > int(cap):
        rows = random.Random(key).sample(rows, int(cap))
    return sorted(rows, key=lambda r: str(r["id"]))


def items_of(rows: Sequence[Mapping], *, need_summary: bool) -> tuple[list, dict[str, int]]:
    """(Items, drop counts) of example rows: an example without a document token (or, for training, without a
    summary token) is dropped and counted."""
    from wikiref.model import abstractive as am

    items, drops = [], {"no_document_token": 0, "no_summary_token": 0}
    for r in rows:
        try:
            it = am.item_from_example(r)
        except ValueError:
            drops["no_document_token"] += 1
            continue
        if need_summary and not it.summary:
            drops["no_summary_token"] += 1
            continue
        items.append(it)
    return items, {k: v for k, v in drops.items() if v}


def _split_rows(paths: Mapping[str, str | Path], sources: Sequence[str], split: str) -> dict[str, list[dict]]:
    missing = [s for s in sources if s not in paths]
    if missing:
        raise AbstractiveError(f"no {split} file given for source(s) {missing}")
    return {s: _read_rows(paths[s]) for s in sources}


def duc_standin(parquet: str | Path, stats: str | Path | None = None) -> bool:
    """Whether a DUC year is STAND-IN: its prepare stats (``<year>.stats.json`` beside the table) say so."""
    from wikiref.files import read_json

    path = Path(stats) if stats else Path(parquet).with_suffix(".stats.json")
    if not path.exists():
        raise AbstractiveError(f"{path} (the DUC year's prepare stats, which say whether it is STAND-IN) is missing")
    return bool(read_json(path).get("standin"))


# --------------------------------------------------------------------------------------- scoring
def duc_scores(summaries: Mapping[str, Sequence[str]], topics: Sequence[Mapping], flags: str) -> dict:
    """Official ROUGE (``flags``) of one year's summaries: per measure (``ROUGE-1``, ``ROUGE-2``, ``ROUGE-L``,
    ``ROUGE-SU4``, as the flags compute) ``recall`` / ``precision`` / ``f1`` x100 with ``*_ci`` 95% intervals."""
    from wikiref.extractive.baselines import evaluate

    res = evaluate(summaries, topics, flags)

    def x100(v) -> float:
        return round(float(v) * 100, 3)

    return {
        measure: {
            "recall": x100(m["R"]),
            "recall_ci": [x100(v) for v in m["R_ci"]],
            "precision": x100(m["P"]),
            "precision_ci": [x100(v) for v in m["P_ci"]],
            "f1": x100(m["F"]),
            "f1_ci": [x100(v) for v in m["F_ci"]],
        }
        for measure, m in res.items()
    }


def test_flags(params: Mapping, source: str) -> str:
    """The ROUGE flags of a test split: ``psg2sum.rouge_flags`` for Psg2Sum (Table 4's), else
    ``abstractive.rouge_flags``."""
    return str(params["psg2sum"]["rouge_flags"] if source == PSG2SUM else params["abstractive"]["rouge_flags"])


# ------------------------------------------------------------------------------------------ train
def run_train(params: Mapping, inputs: Mapping, outputs: Mapping, *, run: str, progress: bool = False) -> dict:
    """Train, test and (with ``duc``) DUC-test run ``run`` (see the module docstring).

    ``params``: the keys of registry job ``train_<family>`` (``abstractive.runs`` may hold this run alone).
    ``inputs``: ``train`` / ``dev`` / ``test`` (source -> common example file of that split), ``duc`` (year ->
    ``data/duc/<year>.parquet``; its ``.stats.json`` beside, or ``duc_stats``: year -> stats file).
    ``outputs``: ``model_dir``, ``summaries`` (JSON), ``metrics`` (JSON), ``live_dir`` (dvclive, optional).
    Returns the metrics (also written)."""
    from wikiref.files import write_json
    from wikiref.model import abstractive as am
    from wikiref.model.training import resolve_device

    t0 = time.perf_counter()
    entry = R.run_entry(params, run)
    config, use_query = model_config(params, entry)
    years = R.duc_years(params, run)
    data = _run_data(params, inputs, entry, run)
    standin = data.standin
    vocab, result = _fit(params, entry, config, use_query, data, outputs, progress)
    t_train = time.perf_counter() - t0
    device = resolve_device(params["model"]["device"])
    summariser = am.load(outputs["model_dir"], device=device)

    dec, batch = decode_settings(params, entry)
    summaries: dict[str, Any] = {"run": run, "standin": standin, "test": {}, "duc": {}}
    test_metrics = _test_splits(params, summariser, data.test_rows, dec, batch, summaries["test"])
    t_test = time.perf_counter() - t0 - t_train

    duc_metrics: dict[str, Any] = {}
    duc_decode = None
    if years:
        ddec, dbatch = decode_settings(params, entry, duc=True)
        duc_decode = {**ddec, "batch_size": dbatch}
        duc_metrics, duc_standin_seen = _duc_tests(params, inputs, summariser, years, ddec, dbatch, summaries["duc"])
        standin = standin or duc_standin_seen
    summaries["standin"] = standin
    write_json(outputs["summaries"], summaries)
    metrics = _run_metrics(
        run,
        entry,
        config=config,
        use_query=use_query,
        years=years,
        standin=standin,
        data=data,
        vocab_size=len(vocab),
        res=result.to_dict(),
        select=params["abstractive"][entry["family"]]["select"],
        decode={**dec, "batch_size": batch},
        duc_decode=duc_decode,
        test_metrics=test_metrics,
        duc_metrics=duc_metrics,
        seconds=(t0, t_train, t_test),
    )
    write_json(outputs["metrics"], metrics)
    return metrics


@dataclass
class _RunData:
    """A run's rows (seeded subsets, in id order) and the items made of them (with the counts dropped)."""

    train_rows: list
    dev_rows: list
    test_rows: dict[str, list]
    train_items: list
    train_drops: dict[str, int]
    dev_items: list
    dev_drops: dict[str, int]

    @property
    def standin(self) -> bool:
        """Whether any example used is STAND-IN."""
        return any(r["standin"] for rows in (self.train_rows, self.dev_rows, *self.test_rows.values()) for r in rows)


def _run_data(params: Mapping, inputs: Mapping, entry: Mapping, run: str) -> _RunData:
    """Step 1 (*Data*) of :func:`run_train`: an error when no train or no dev example is usable."""
    a = params["abstractive"]
    seed = int(params["seed"])
    train_by_src = _split_rows(inputs["train"], entry["train"], "train")
    dev_by_src = _split_rows(inputs["dev"], entry["train"], "dev")
    test_by_src = _split_rows(inputs.get("test", {}), entry["test"], "test")
    train_rows = subset(
        [r for s in entry["train"] for r in train_by_src[s]], a["max_train_examples"], f"{seed}:abstractive:train"
    )
    dev_rows = [
        r for s in entry["train"] for r in subset(dev_by_src[s], a["max_eval_examples"], f"{seed}:abstractive:dev:{s}")
    ]
    test_rows = {
        s: subset(test_by_src[s], a["max_eval_examples"], f"{seed}:abstractive:test:{s}") for s in entry["test"]
    }
    train_items, train_drops = items_of(train_rows, need_summary=True)
    dev_items, dev_drops = items_of(dev_rows, need_summary=True)
    if not train_items or not dev_items:
        raise AbstractiveError(
            f"run {run}: no usable train ({len(train_items)}) or dev ({len(dev_items)}) example in {entry['train']}"
        )
    return _RunData(train_rows, dev_rows, test_rows, train_items, train_drops, dev_items, dev_drops)


def _fit(
    params: Mapping, entry: Mapping, config: dict, use_query: bool, data: _RunData, outputs: Mapping, progress: bool
):
    """Step 2 (*Model*) of :func:`run_train`: the vocabulary, the model (weights drawn from ``seed``) and its
    training, the best epoch saved in ``outputs["model_dir"]``. Returns (vocabulary, training result)."""
    from wikiref.model import abstractive as am
    from wikiref.model.training import TrainSettings

    fam = entry["family"]
    a = params["abstractive"]
    seed = int(params["seed"])
    vocab = am.build_vocab(data.train_items, int(a["vocab"]["max_words"]))
    model = am.build_model(fam, vocab, config, seed=seed)
    settings = TrainSettings.from_params(seed, params["model"], a[fam]["train"], progress=progress)
    live_dir = outputs.get("live_dir")
    if live_dir:
        Path(live_dir).mkdir(parents=True, exist_ok=True)
    result = am.fit(
        fam,
        model,
        vocab,
        data.train_items,
        data.dev_items,
        settings,
        outputs["model_dir"],
        live_dir=live_dir,
        use_query=use_query,
        select=a[fam]["select"],
    )
    return vocab, result


def _test_splits(
    params: Mapping, summariser, test_rows: Mapping[str, list], dec: dict, batch: int, summaries: dict
) -> dict[str, Any]:
    """Step 3 (*Test*) of :func:`run_train`: each test source's rows summarised (``summaries``: source -> id ->
    sentences) and scored. Returns the test metrics by source."""
    from wikiref.extractive import official as bl
    from wikiref.model import abstractive as am
    from wikiref.model.decoding import DecodeSettings

    test_metrics: dict[str, Any] = {}
    for s, rows in test_rows.items():
        items, drops = items_of(rows, need_summary=False)
        gen = am.summarise(summariser, items, DecodeSettings(**dec), batch_size=batch)
        sents = {it.id: am.split_sentences(toks) for it, toks in zip(items, gen)}
        # an example whose documents have no token gets an empty summary (scored 0, never skipped)
        system = {str(r["id"]): sents.get(str(r["id"]), []) for r in rows}
        refs = {str(r["id"]): [str(x) for x in r["summary"]] for r in rows}
        flags = test_flags(params, s)
        summaries[s] = system
        test_metrics[s] = {
            "examples": len(rows),
            "dropped": drops,
            "flags": flags,
            "summary_tokens_mean": round(sum(len(t) for t in gen) / max(len(gen), 1), 3),
            "scores": bl.score(system, refs, flags=flags) if rows else None,
        }
    return test_metrics


def _duc_tests(
    params: Mapping, inputs: Mapping, summariser, years: Sequence, ddec: dict, dbatch: int, summaries: dict
) -> tuple[dict[str, Any], bool]:
    """Step 4 (*DUC*) of :func:`run_train`: every topic of each year summarised (``summaries``: year -> topic ->
    sentences) and scored. Returns (the DUC metrics by year, whether any year is STAND-IN)."""
    import pyarrow.parquet as pq

    from wikiref.model import abstractive as am
    from wikiref.model.decoding import DecodeSettings

    duc_metrics: dict[str, Any] = {}
    standin = False
    words = int(params["duc"]["summary_words"])
    flags = R.duc_flags(params["duc"]["rouge_flags"])
    for y in years:
        path = inputs["duc"][y] if y in inputs["duc"] else inputs["duc"][str(y)]
        stats = (inputs.get("duc_stats") or {}).get(y) or (inputs.get("duc_stats") or {}).get(str(y))
        year_standin = duc_standin(path, stats)
        standin = standin or year_standin
        items, topics = duc_items(pq.read_table(str(path)).to_pylist())
        gen = am.summarise(summariser, items, DecodeSettings(**ddec), batch_size=dbatch)
        system = {it.id: am.split_sentences(truncate_words(toks, words)) for it, toks in zip(items, gen)}
        summaries[str(y)] = system
        duc_metrics[str(y)] = {
            "topics": len(topics),
            "standin": year_standin,
            "flags": flags,
            "summary_words": words,
            "summary_tokens_mean": round(sum(len(t) for t in gen) / max(len(gen), 1), 3),
            "scores": duc_scores(system, topics, flags),
        }
    return duc_metrics, standin


def _run_metrics(
    run: str,
    entry: Mapping,
    *,
    config: dict,
    use_query: bool,
    years: list,
    standin: bool,
    data: _RunData,
    vocab_size: int,
    res: Mapping,
    select: str,
    decode: dict,
    duc_decode: dict | None,
    test_metrics: dict,
    duc_metrics: dict,
    seconds: tuple[float, float, float],
) -> dict:
    """The run's metrics record (``results/metrics/abstractive/<run>.json``); ``seconds``: (start time, training
    seconds, test seconds), the total measured now."""
    from wikiref.tables import STANDIN_NOTE

    t0, t_train, t_test = seconds
    return {
        "run": run,
        "family": entry["family"],
        "standin": standin,
        **({"label": STANDIN_NOTE} if standin else {}),
        "config": config,
        "use_query": use_query,
        "train_sources": list(entry["train"]),
        "test_sources": list(entry["test"]),
        "duc_years": years,
        "data": {
            "train_examples": len(data.train_items),
            "dev_examples": len(data.dev_items),
            "dropped": {"train": data.train_drops, "dev": data.dev_drops},
            "vocab_size": vocab_size,
        },
        "training": {
            "best_epoch": res["best_epoch"],
            "best_metric": round(float(res["best_metric"]), 6),
            "select": select,
            "epochs": len(res["history"]),
            "history": res["history"],
            "seconds": round(float(res["train_seconds"]), 3),
            "examples_per_second": round(float(res["windows_per_second"]), 3),
            **(
                {"tokens_per_second": round(float(res["tokens_per_second"]), 3)} if res.get("tokens_per_second") else {}
            ),
            "variant": res["extra"].get("variant"),
        },
        "decode": decode,
        **({"duc_decode": duc_decode} if years else {}),
        "test": test_metrics,
        "duc": duc_metrics,
        "seconds": {
            "train": round(t_train, 3),
            "test": round(t_test, 3),
            "total": round(time.perf_counter() - t0, 3),
        },
    }


# ------------------------------------------------------------------------------------------ table
def run_table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The table job. ``params``: ``profile``, ``abstractive.runs``, ``abstractive.duc.years``. ``inputs``:
    ``runs`` (run metrics files, ``results/metrics/abstractive/<run>.json``; the run is the file's ``run``),
    ``psg2sum_baselines`` (the psg2sum baselines job's metrics: Table 4's extractive rows). ``outputs``:
    ``psg2sum_table4``, ``qmdscnn_table3``, ``qmdsir_table4``, ``duc_table5`` (stems) and ``metrics``."""
    from wikiref.files import read_json, write_json
    from wikiref.stages.abstractive import tables as T
    from wikiref.tables import STANDIN_NOTE

    t0 = time.perf_counter()
    metrics_by_run: dict[str, dict] = {}
    for path in inputs["runs"]:
        m = read_json(path)
        metrics_by_run[str(m["run"])] = m
    configured = set(R.run_names(params))
    unknown = sorted(set(metrics_by_run) - configured)
    if unknown:
        raise AbstractiveError(f"metrics of runs {unknown} that abstractive.runs does not list")
    baselines = read_json(inputs["psg2sum_baselines"]) if inputs.get("psg2sum_baselines") else None
    profile = params["profile"]
    years = sorted(int(y) for y in params["abstractive"]["duc"]["years"])
    tables = {
        "psg2sum_table4": T.psg2sum_table4(metrics_by_run, baselines, outputs["psg2sum_table4"], profile=profile),
        "qmdscnn_table3": T.qmds_table("qmdscnn", metrics_by_run, outputs["qmdscnn_table3"], profile=profile),
        "qmdsir_table4": T.qmds_table("qmdsir", metrics_by_run, outputs["qmdsir_table4"], profile=profile),
        "duc_table5": T.duc_table5(metrics_by_run, years, outputs["duc_table5"], profile=profile),
    }
    standin = any(t["standin"] for t in tables.values())
    summary = {}
    for name, m in sorted(metrics_by_run.items()):
        summary[name] = {
            "family": m["family"],
            "train_sources": m["train_sources"],
            "standin": m["standin"],
            "best_epoch": m["training"]["best_epoch"],
            "test_f1": {
                s: {k: v["f1"] for k, v in t["scores"].items()} for s, t in m["test"].items() if t.get("scores")
            },
            "duc_recall": {y: {k: v["recall"] for k, v in d["scores"].items()} for y, d in m["duc"].items()},
            "seconds": m["seconds"]["total"],
        }
    out = {
        "standin": standin,
        **({"label": STANDIN_NOTE} if standin else {}),
        "runs": summary,
        "not_run": sorted(set(T.TABLE_RUNS) - set(metrics_by_run)),
        "tables": {k: v["rows"] for k, v in tables.items()},
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["metrics"], out)
    return out
