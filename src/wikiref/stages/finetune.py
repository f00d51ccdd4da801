"""Held-out-year fine-tuning on DUC 2005-2007 (journal §V, Table VI; Table IX's subnetworks).

For a held-out year Y and a *setting* (``finetune.settings[*]``: starting point + method):

1. **Data** (``data/duc/<year>.parquet`` from ``wikiref duc prepare``): the other years are the training
   years; at most ``max_train_clusters`` clusters per training year are kept (seeded), and a seeded
   ``dev_fraction`` of the remaining clusters is held out for selection. One training example per
   (query, document): the query levels (title + narrative sentences), the document's sentences (the
   first ``max_doc_sentences`` when capped) and each sentence's ROUGE-2 recall against the cluster's
   references pooled (``sentence_targets``), turned into targets by ``finetune.target`` (raw x scale,
   standardised, per-cluster, rank: :mod:`wikiref.model.targets`) and learned with ``finetune.loss``
   (mse on the regression head: the paper's objective; pairwise / listwise within a cluster; bce on
   labels with the classification head: :mod:`wikiref.model.losses`).
2. **Start** (``init``): ``encoder`` = the encoder alone (``model.encoder``, fresh pooling + head;
   ``pooling: cls`` is BERT, ``query`` is Q-BERT); ``pretrained`` = a WikiRef checkpoint from
   ``models/pretrain/<variant>/`` (+DA): ``variant`` is a name or ``best`` = the variant with the
   highest dev ROUGE-2 in ``results/metrics/pretrain_<variant>.json`` among the pretrained-encoder
   variants with the query in the input (optionally only those with ``pooling`` / ``pretrain_head``).
   A classification checkpoint is switched to the regression head (same linear layer).
3. **Method**: ``full`` (every weight trainable), ``subnet`` (ST: top ``subnet.fraction`` by
   magnitude per encoder-layer tensor, :mod:`wikiref.model.subnetworks`), ``iterative`` (the subnetwork left by
   gradual magnitude pruning during a WikiRef training run, :func:`prune`, pruned entries
   stay zero) or ``none`` (DA PRE-TRAINED: the checkpoint applied as is).
4. **Selection**: :func:`wikiref.model.training.train` keeps the epoch with the best mean dev ROUGE-2 recall
   (official scorer, ``duc.rouge_flags``) of the summaries built by the DUC rule.
5. **Test**: every sentence of year Y is scored per (query, document), ranked across the cluster and
   added while the summary stays within ``duc.summary_words`` words, skipping a sentence when more
   than half of its bigrams are already in it (:mod:`wikiref.extractive.selection`); ROUGE-1/2/SU4
   with :mod:`wikiref.rouge.official` and the DUC flags (like the duc stage's baselines).

The jobs of the stage (``wikiref finetune <job>``), each ``job(params, inputs, outputs, **options) ->
dict`` writing its outputs itself: :func:`run_job` (one setting, one held-out year: metrics,
predictions, summaries), :func:`prune` (an iterative setting's pruned WikiRef model) and :func:`table`
(Table VI from the duc stage's baselines + the settings, :func:`table6` / :func:`summary_metrics`,
and the stage's metrics). :func:`train_and_test` is the work of one job without the files (the
ablation cells run it too).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.supervised.duc_finetune import (
    MEASURES,
    FinetuneError,
    candidate_variants,
    find_setting,
    recall_x100,
    settings,
    start_from_files,
    train_and_test,
)
from wikiref.supervised.duc_finetune import prune as prune  # the stage's `prune` job (the ablation cells run it too)

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- settings


def run_job_name(setting: Mapping) -> str:
    """The registry job a setting's fine-tuning runs as: ``run_pretrained`` (it reads the ``pretrain``
    section: the WikiRef checkpoint it starts from) or ``run``."""
    return "run_pretrained" if setting["init"] == "pretrained" else "run"


def setting_only(params: Mapping, name: str) -> dict[str, Any]:
    """What a setting's jobs receive in place of the configured ``finetune.settings`` (``replace=`` of
    :func:`wikiref.config.job_params`): that setting alone, so adding or editing another setting reruns
    none of its jobs."""
    return {"finetune.settings": [find_setting(params["finetune"], name)]}


def pretrained_inputs(params: Mapping, name: str) -> list[str]:
    """The files setting ``name`` may start from: the checkpoint of each candidate variant and its
    metrics (which ``best`` compares); none for a setting that starts from the encoder."""
    return pretrained_files(params, name, layout.PRETRAIN_DIR, layout.METRICS)


def pretrained_files(params: Mapping, name: str, pretrain_dir: str | Path, metrics_dir: str | Path) -> list[str]:
    """:func:`pretrained_inputs` in other folders: the checkpoint files of each candidate variant in
    ``<pretrain_dir>/<variant>/`` and its ``pretrain_<variant>.json`` in ``metrics_dir`` (a hand run's
    ``--pretrain-dir`` / ``--metrics-dir``)."""
    files: list[str] = []
    for variant in candidate_variants(find_setting(params["finetune"], name), params.get("pretrain", {})):
        files += layout.checkpoint_files(f"{pretrain_dir}/{variant}")
        files.append(str(layout.in_folder(metrics_dir, layout.PRETRAIN_VARIANT_METRICS, variant=variant)))
    return files


def pruned_files(name: str) -> list[str]:
    """What :func:`prune` writes for setting ``name`` (a ``{setting}`` wildcard works too)."""
    return [f"{layout.FINETUNE_PRUNED_DIR.format(setting=name)}/{f}" for f in layout.FINETUNE_PRUNED_FILES]


def start_inputs(params: Mapping, name: str) -> list[str]:
    """The files a fine-tuning job of setting ``name`` starts from: the pruned model (method iterative)
    or :func:`pretrained_inputs`."""
    if find_setting(params["finetune"], name)["method"] == "iterative":
        return pruned_files(name)
    return pretrained_inputs(params, name)


# --------------------------------------------------------------------------- data


# --------------------------------------------------------------------------- summaries and ROUGE


# --------------------------------------------------------------------------- models


# --------------------------------------------------------------------------- one job


def run_job(
    params: Mapping, inputs: Mapping, outputs: Mapping, *, setting: str, year: int, progress: bool = True
) -> dict:
    """One fine-tuning job: ``setting`` with ``year`` held out (:func:`train_and_test`), and its files.

    inputs: ``years`` (every ``duc.years`` year -> its ``data/duc/<year>.parquet``); ``start`` (the files the
    setting starts from, :func:`start_inputs`: the candidate checkpoints' files and their
    ``pretrain_<variant>.json``, or with method iterative the :func:`prune` output's files; none for a
    setting that starts from the encoder).
    outputs: ``model_dir`` (training.json, subnet.json; the weights when ``finetune.keep_models``),
    ``predictions`` (Parquet: id, topic, doc_position, sentence_scores per test document),
    ``summaries`` (JSON: topic -> summary sentences), ``metrics`` (JSON), ``live_dir`` (dvclive, optional).
    Returns the metrics.
    """
    import pyarrow as pa

    from wikiref.files import write_json, write_parquet

    find_setting(params["finetune"], setting)
    years = list(params["duc"]["years"])
    if year not in years:
        raise FinetuneError(f"year {year} is not in duc.years {years}")
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(path or y) for y, path in paths.items() if path is None or not Path(path).exists()]
    if missing:
        raise FinetuneError(
            f"missing {', '.join(missing)}: run `wikiref duc prepare` (Snakemake rule duc_prepare) first"
        )
    metrics, predictions, summaries = train_and_test(
        params,
        setting,
        year,
        paths,
        outputs["model_dir"],
        start=start_from_files(inputs.get("start", ())),
        live_dir=outputs.get("live_dir"),
        progress=progress,
    )
    write_parquet(outputs["predictions"], pa.Table.from_pandas(predictions, preserve_index=False))
    write_json(outputs["summaries"], summaries)
    write_json(outputs["metrics"], metrics)
    return metrics


# --------------------------------------------------------------------------- iterative pruning on WikiRef


# --------------------------------------------------------------------------- Table VI


def _group(m: Mapping) -> str:
    start = m["start"]
    if m.get("method") == "ltr":
        return "learning to rank " + ("(without DA)" if start["init"] == "encoder" else "+ DA scorer")
    if start["init"] == "encoder":
        return "without DA"
    return f"{start.get('checkpoint_head', '?')} pre-training"


def table6(
    baselines: Mapping,
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
) -> pd.DataFrame:
    """Rows: LEAD, QUERY-SIM, LEAD-EACH, QUERY-SIM (no redundancy rule) (those in ``baselines``), the settings in
    params order, ORACLE; columns: <year> R-1/R-2/R-SU4 recall x 100."""
    from wikiref.extractive.baselines import SYSTEMS

    def cells(per_year: Mapping) -> dict:
        row = {}
        for y in years:
            m = per_year[str(y)] if str(y) in per_year else per_year[y]
            for meas in MEASURES:
                row[f"{y} {meas.replace('ROUGE-', 'R-')}"] = round(100 * float(m[meas]["R"]), 2)
        return row

    rows = []
    base = baselines.get("systems", {})
    other = "baseline variant (cf. [12])"  # other readings of [12]'s LEAD / QUERY-SIM (extractive.baselines)
    for key, group in (
        ("lead", "baseline"),
        ("query_sim", "baseline"),
        ("lead_each", other),
        ("query_sim_plain", other),
    ):
        if key in base:
            rows.append({"System": SYSTEMS[key], "Group": group, **cells(base[key])})
    for s in setting_specs:
        per = job_metrics[s["name"]]
        first = per[years[0]]
        variant = first["start"].get("variant")
        rows.append(
            {
                "System": s["label"],
                "Group": _group(first) + (f" ({variant})" if variant else ""),
                **cells({y: per[y]["test"] for y in years}),
            }
        )
        cosine_row = first.get("cosine", {}).get("label")
        if s["method"] == "ltr" and cosine_row not in {r["System"] for r in rows}:
            # the ranker's own reference: the encoder's cosine on the same embeddings (once per encoder)
            rows.append(
                {
                    "System": first["cosine"]["label"],
                    "Group": "reference (untrained)",
                    **cells({y: per[y]["cosine"]["test"] for y in years}),
                }
            )
    if "oracle" in base:
        rows.append({"System": SYSTEMS["oracle"], "Group": "upper bound", **cells(base["oracle"])})
    return pd.DataFrame(rows)


def summary_metrics(
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
    baselines: Mapping,
) -> dict:
    """Per setting and year R-1/R-2/R-SU4 recall (x 100) and their means; the DA and ST comparisons
    that the configured settings allow (mean R-2 over the years, with the per-year signs)."""
    out: dict[str, Any] = {"years": list(years), "settings": {}}
    r2: dict[str, list[float]] = {}
    for s in setting_specs:
        per = job_metrics[s["name"]]
        entry: dict[str, Any] = {"label": s["label"], "method": s["method"], "init": s["init"], "years": {}}
        for y in years:
            m = per[y]
            entry["years"][str(y)] = {
                **recall_x100(m["test"]),
                "seconds": m.get("seconds"),
                "best_epoch": m.get("training", {}).get("best_epoch"),
                **({"alpha": m["interpolation"]["alpha"]} if "interpolation" in m else {}),
                **({"mmr": m["select"]["mmr"]} if "select" in m else {}),
                "start_variant": m["start"].get("variant"),
            }
        for meas in MEASURES:
            entry[f"mean_{meas}"] = round(float(np.mean([entry["years"][str(y)][meas] for y in years])), 4)
        entry["seconds_total"] = round(float(sum(per[y].get("seconds") or 0.0 for y in years)), 2)
        out["settings"][s["name"]] = entry
        r2[s["name"]] = [entry["years"][str(y)]["ROUGE-2"] for y in years]
    base = baselines.get("systems", {})
    out["baselines_mean_ROUGE-2"] = {
        k: round(float(np.mean([100 * float(v[str(y)]["ROUGE-2"]["R"]) for y in years])), 4)
        for k, v in base.items()
        if all(str(y) in v for y in years)
    }
    out["comparisons"] = _comparisons(job_metrics, setting_specs, years, r2)
    out["paired"] = _paired(job_metrics, setting_specs, years, base)
    return out


def _paired(
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
    base: Mapping,
) -> dict:
    """Per setting and year: the paired bootstrap of its per-topic ROUGE-2 recall against QUERY-SIM's on the
    same topics (:func:`wikiref.extractive.official.paired_difference`, x 100), for an ``ltr`` setting its job's
    comparison with the encoder's cosine, for an interpolated setting its job's comparison with its start."""
    from wikiref.extractive.official import paired_difference, scaled

    out: dict = {}
    for s in setting_specs:
        for y in years:
            m = job_metrics[s["name"]][y]
            entry = {}
            qs = base.get("query_sim", {}).get(str(y), {}).get("ROUGE-2", {}).get("per_topic_R")
            mine = m["test"]["ROUGE-2"].get("per_topic_R")
            if qs and mine and sorted(qs) == sorted(mine):
                entry["vs QUERY-SIM"] = scaled(paired_difference(mine, qs), 100)
            if "paired_vs_cosine" in m:
                entry["vs cosine"] = scaled(m["paired_vs_cosine"], 100)
            if "paired_vs_start" in m:
                entry["vs its start"] = scaled(m["paired_vs_start"], 100)
            if entry:
                out.setdefault(s["name"], {})[str(y)] = entry
    return out


def _comparisons(
    job_metrics: Mapping[str, Mapping[int, Mapping]],
    setting_specs: Sequence[Mapping],
    years: Sequence[int],
    r2: Mapping[str, list[float]],
) -> list[dict]:
    """The DA and ST comparisons of :func:`summary_metrics` that the settings allow (``r2``: setting -> its
    R-2 recall per year)."""

    def compare(a: str, b: str, what: str) -> dict:
        d = [x - y for x, y in zip(r2[a], r2[b])]
        return {
            "what": what,
            "setting": a,
            "reference": b,
            "mean_delta_ROUGE-2": round(float(np.mean(d)), 4),
            "years_better": int(sum(x > 0 for x in d)),
            "years": len(d),
            "helps": bool(np.mean(d) > 0),
        }

    def start_of(name: str) -> Mapping:
        return job_metrics[name][years[0]]["start"]

    cmps = []
    by = {s["name"]: s for s in setting_specs}
    for a, sa in by.items():
        for b, sb in by.items():
            if a == b:
                continue
            # +DA: fine-tuned from a WikiRef checkpoint vs the same encoder alone, with the same pooling and pairing.
            if (
                sa["init"] == "pretrained"
                and sa["method"] == "full"
                and sb["init"] == "encoder"
                and sb["method"] == "full"
                and start_of(a).get("encoder") == start_of(b).get("encoder")
                and start_of(a)["pooling"] == start_of(b)["pooling"]
                and start_of(a).get("pairing", "cross") == start_of(b).get("pairing", "cross")
            ):
                cmps.append(compare(a, b, "data augmentation (+DA)"))
            # ST: the same start, subnetwork vs every weight.
            if (
                sa["method"] in ("subnet", "iterative")
                and sb["method"] == "full"
                and sa["init"] == sb["init"]
                and sa.get("variant") == sb.get("variant")
                and sa.get("pooling") == sb.get("pooling")
            ):
                cmps.append(compare(a, b, f"subnetwork fine-tuning ({sa['method']})"))
            # Fine-tuning the checkpoint, or ranking with its scores as a signal, vs applying it as is.
            if (
                sa["method"] in BEYOND_THE_CHECKPOINT
                and sb["method"] == "none"
                and sa["init"] == "pretrained"
                and start_of(a).get("variant") == start_of(b).get("variant")
            ):
                cmps.append(compare(a, b, f"{BEYOND_THE_CHECKPOINT[sa['method']]} vs DA PRE-TRAINED"))
            # Learning to rank with the pre-trained scorer's scores as a signal vs without them.
            if sa["method"] == sb["method"] == "ltr" and sa["init"] == "pretrained" and sb["init"] == "encoder":
                cmps.append(compare(a, b, "the DA scorer as a ranking signal"))
    return cmps


# what a setting does with its checkpoint beyond applying it as is, as the comparisons name it
BEYOND_THE_CHECKPOINT = {"full": "fine-tuning", "ltr": "learning to rank"}


def table6_notes(params: Mapping, summary: Mapping) -> str:
    """The notes under Table VI: how the jobs trained and scored, the comparisons the settings allow."""
    from wikiref.extractive.official import paired_text

    dp, fp = params["duc"], params["finetune"]
    mmr = dp["select"]["mmr"]
    if isinstance(mmr, list):
        order = (
            f"taken by maximal marginal relevance, lambda chosen among {', '.join(f'{m:g}' for m in mmr)} (1: rank "
            "order) by each row's held-out clusters (QUERY-SIM's: the other years'; epochs chosen in rank order)"
        )
    else:
        order = "ranked across the cluster" if mmr is None else f"taken by maximal marginal relevance (lambda {mmr})"
    notes = (
        f"Each year is tested with a model fine-tuned on the other years (epoch chosen on a held-out "
        f"{fp['dev_fraction']:.0%} of their clusters; regression on each sentence's ROUGE-2 recall); sentences "
        f"scored per (query, document), {order}, <= {dp['summary_words']} words, bigram "
        f"redundancy > {dp['select']['max_bigram_overlap']} skipped. DA = started from a WikiRef pre-trained "
        f"checkpoint (Group: its pre-training head and variant); DA PRE-TRAINED = that checkpoint without "
        f"fine-tuning; ST = only the top {fp['subnet']['fraction']:.0%} by magnitude of each encoder-layer tensor "
        f"trained. Epochs {fp['epochs']}, batch {fp['batch_size']}, lr {fp['lr']}, train clusters per year cap "
        f"{fp['max_train_clusters']}, document sentences cap {fp['max_doc_sentences']}."
    )
    for c in summary["comparisons"]:
        notes += (
            f" {c['what']}: {c['setting']} vs {c['reference']} mean R-2 {c['mean_delta_ROUGE-2']:+.2f} "
            f"({c['years_better']}/{c['years']} years better)."
        )
    for s in fp["settings"]:
        if s.get("interpolate") and s["name"] in summary["settings"]:
            alphas = [summary["settings"][s["name"]]["years"][str(y)]["alpha"] for y in summary["years"]]
            notes += (
                f" {s['name']}: weights interpolated between its start and its fine-tuned weights, the mixing weight"
                f" chosen on the held-out clusters ({', '.join(f'{y} {a:g}' for y, a in zip(summary['years'], alphas))};"
                " 0 = the start, 1 = fine-tuned)."
            )
    if isinstance(mmr, list):  # each row's chosen weight per year
        chosen = []
        for name, entry in summary["settings"].items():
            per_year = [(y, entry["years"][str(y)].get("mmr")) for y in summary["years"]]
            if all(m is not None for _, m in per_year):
                chosen.append(f"{name} " + ", ".join(f"{y} {m:g}" for y, m in per_year))
        notes += f" MMR lambda per year: {'; '.join(chosen)}." if chosen else ""
    for s in fp["settings"]:
        if s.get("encoder") and s["name"] in summary["settings"]:
            notes += f" {s['name']}: encoder {s['encoder']} (not {params['model']['encoder']})."
    paired_notes = {s["name"] for s in fp["settings"] if s["method"] == "ltr" or s.get("interpolate")}
    for name in sorted(paired_notes & set(summary.get("paired", {}))):
        for y, entry in summary["paired"][name].items():
            for what, d in entry.items():
                notes += f" {name} {y} {what}, paired bootstrap of R-2: {paired_text(d)}."
    if dp["standin"]:
        notes += " STAND-IN: the topics, documents and references are built from Wikipedia, not NIST DUC."
    return notes


def job_metrics_file(metrics_dir: str | Path, setting: str, year: int) -> Path:
    """``<metrics_dir>/duc_<setting>_<year>.json`` (named as in :data:`wikiref.layout.FINETUNE_JOB_METRICS`)."""
    return layout.in_folder(metrics_dir, layout.FINETUNE_JOB_METRICS, setting=setting, year=year)


def table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Table VI and the stage's metrics. inputs: ``job_metrics`` (setting name -> DUC year -> the metrics
    JSON of that job, for every setting and ``duc.years`` year), ``baselines`` (the duc stage's
    ``results/metrics/duc_baselines.json``); outputs: ``table`` (stem of the .csv/.md/.tex), ``summary``
    (JSON). The caption says STAND-IN when ``duc.standin``. Returns the summary."""
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    dp = params["duc"]
    years = sorted(dp["years"])
    chosen = list(settings(params["finetune"]).values())
    jobs: dict = {}
    for s in chosen:
        for y in years:
            path = inputs["job_metrics"].get(s["name"], {}).get(y)
            if path is None or not Path(path).exists():
                raise FinetuneError(
                    f"missing {path or 'the metrics file'} of setting {s['name']}, year {y}: run "
                    f"`wikiref finetune run --setting {s['name']} --year {y}` first"
                )
            jobs.setdefault(s["name"], {})[y] = read_json(path)
    if not Path(inputs["baselines"]).exists():
        raise FinetuneError(f"missing {inputs['baselines']}: run `wikiref duc baselines` first")
    baselines = read_json(inputs["baselines"])
    df = table6(baselines, jobs, chosen, years)
    summary = summary_metrics(jobs, chosen, years, baselines)
    kind = "STAND-IN pseudo-years" if dp["standin"] else "DUC"
    title = (
        f"Table VI: ROUGE recall x 100 on {kind} {', '.join(map(str, years))} (held-out-year fine-tuning), "
        f"official ROUGE-1.5.5 scoring ({dp['rouge_flags']})"
    )
    encoder = params["model"]["encoder"]
    write_table(
        df,
        outputs["table"],
        title=title,
        profile=params["profile"],
        encoder=encoder,
        notes=table6_notes(params, summary),
    )
    summary.update(profile=params["profile"]["name"], standin=bool(dp["standin"]), encoder=encoder)
    write_json(outputs["summary"], summary)
    return summary
