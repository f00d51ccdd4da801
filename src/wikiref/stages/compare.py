"""Which augmentation source helps most? One comparison of every source on equal terms.

No paper of the field compares its augmentation data with the others: WikiRef, QmdsCnn, QmdsIr, WCEP
and Psg2Sum were each evaluated with other models, budgets and benchmarks. Here every source goes
through the same extractive model, the same budget and the same benchmarks.

Every experiment is a *cell* ``source~S_budget~B`` (Snakemake ``Paramspace`` notation, like the
ablations):

* ``source``: one of :data:`wikiref.schemas.SOURCE_NAMES`, ``union`` (the sources of
  ``compare.union`` together, equal shares under the equal budget), or ``none`` with budget ``none``
  (the encoder without augmentation: the reference row, fine-tuned only);
* ``budget``: ``equal`` = the same number of training examples (``compare.equal.examples``; null = the
  smallest training split among the compared sources, so every source can supply it) and the same
  number of optimizer steps (``compare.equal.steps``) for every source; ``natural`` = every training
  example of the source, ``compare.natural.epochs`` epochs (so the steps differ).

Jobs (``wikiref compare <job>``, rules in ``workflow/rules/compare.smk``), each
``job(params, inputs, outputs, **options) -> dict`` writing its outputs itself:

* :func:`oracle` - per source: the oracle labels over the pooled sentences of every document
  (:func:`wikiref.glue.labels.example_oracle_table`), ``data/compare/oracle/<source>/<split>.parquet``;
* :func:`pretrain` - per cell: extractive pre-training (the ``pretrain`` section's training settings,
  ``compare.head`` / ``compare.pooling``, documents packed with their boundaries), epoch chosen on the
  source's dev ROUGE-2 (threshold searched);
* :func:`duc` - per cell: DA PRE-TRAINED transfer (no fine-tuning) on every DUC year, and held-out-year
  fine-tuning (:func:`wikiref.glue.duc.train_and_test`, the ``finetune`` section): DUC ROUGE-1/2/SU4
  recall with the official flags (``duc.rouge_flags``);
* :func:`qmsum` - per cell: transfer and fine-tuning on QMSum (``qmsum`` section: word budget, official
  ROUGE-1/2/L F1 with ``qmsum.rouge_flags``), for each of ``compare.qmsum.settings``;
* :func:`table` - every cell -> the comparison table, ``results/metrics/compare.json`` and the
  "which source for which benchmark" findings (computed from the numbers; the report shows them).

``compare.budget`` shrinks windows, document sizes and DUC/QMSum training for these runs only
(null = the ``model`` / ``finetune`` value, or no cap), so the sample grid fits its time budget.
"""

from __future__ import annotations

import copy
import logging
import math
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.config import grid_cell_fields
from wikiref.glue.oracle import cap_rows
from wikiref.schemas import SOURCE_NAMES

log = logging.getLogger(__name__)


UNION = "union"
NONE = "none"
SOURCES = (*SOURCE_NAMES, UNION)
BUDGETS = ("equal", "natural")
CELL_COLUMNS = ("source", "budget")
CELL_REGEX = r"source~[a-z0-9]+_budget~[a-z]+"
MODES = ("finetuned", "transfer")
QMSUM_R2_CI = "qmsum_r2_f1_ci"  # a row field, not a printed column
MODE_LABELS = {"finetuned": "fine-tuned", "transfer": "DA PRE-TRAINED (no fine-tuning)"}
ABSTRACTIVE_MODE = "abstractive"  # the rows of the abstractive cells: transfer, no fine-tuning
MODE_LABELS[ABSTRACTIVE_MODE] = "abstractive, no fine-tuning"
DUC_MEASURES = ("ROUGE-1", "ROUGE-2", "ROUGE-SU4")
QMSUM_METRICS = ("rouge1", "rouge2", "rougeL")
SOURCE_LABELS = {
    "wikiref": "WikiRef",
    "qmdscnn": "QmdsCnn",
    "qmdsir": "QmdsIr",
    "wcep": "WCEP",
    "psg2sum": "Psg2Sum",
    UNION: "Union",
    NONE: "None (encoder only)",
}


class CompareError(ValueError):
    """A cell name, the compare parameters or a source's data do not allow the comparison."""


# --------------------------------------------------------------------------- cells


@dataclass(frozen=True, order=True)
class Cell:
    source: str
    budget: str

    def __post_init__(self) -> None:
        if self.source not in (*SOURCES, NONE):
            raise CompareError(f"source {self.source!r} not in {(*SOURCES, NONE)}")
        if self.budget not in (*BUDGETS, NONE):
            raise CompareError(f"budget {self.budget!r} not in {(*BUDGETS, NONE)}")
        if (self.source == NONE) != (self.budget == NONE):
            raise CompareError("source none (no augmentation) goes with budget none, and only with it")

    @property
    def id(self) -> str:
        return f"source~{self.source}_budget~{self.budget}"

    @property
    def trains(self) -> bool:
        """Whether the cell pre-trains a model (source none: the encoder itself)."""
        return self.source != NONE

    @property
    def label(self) -> str:
        return SOURCE_LABELS[self.source]


NO_AUGMENTATION = Cell(NONE, NONE)


def parse_cell(text: str) -> Cell:
    fields = grid_cell_fields(text, CELL_COLUMNS, CompareError)
    cell = Cell(fields["source"], fields["budget"])
    if cell.id != text:
        raise CompareError(f"cell {text!r} is not in canonical form ({cell.id})")
    return cell


def _cell(cell: str | Cell) -> Cell:
    return parse_cell(cell) if isinstance(cell, str) else cell


def union_members(params: Mapping) -> list[str]:
    members = list(params["compare"]["union"])
    unknown = [s for s in members if s not in SOURCE_NAMES]
    if unknown or len(members) < 2 or len(set(members)) != len(members):
        raise CompareError(f"compare.union must list two or more distinct sources of {SOURCE_NAMES}, got {members}")
    return members


def members(params: Mapping, cell: Cell) -> list[str]:
    """The sources a cell trains on."""
    if not cell.trains:
        return []
    return union_members(params) if cell.source == UNION else [cell.source]


def cells(params: Mapping) -> list[Cell]:
    """Every cell of the grid: ``compare.sources`` x ``compare.budgets`` (+ the encoder-only row)."""
    cmp = params["compare"]
    if len(set(cmp["sources"])) != len(cmp["sources"]) or len(set(cmp["budgets"])) != len(cmp["budgets"]):
        raise CompareError("compare.sources and compare.budgets must not repeat a value")
    out = [Cell(s, b) for s in cmp["sources"] for b in cmp["budgets"]]
    if cmp["no_augmentation"]:
        out.append(NO_AUGMENTATION)
    if any(c.source == UNION for c in out):
        union_members(params)
    return out


def training_cells(params: Mapping) -> list[Cell]:
    return [c for c in cells(params) if c.trains]


def grid(params: Mapping) -> pd.DataFrame:
    """The pre-training cells as a DataFrame (one row per job) for Snakemake's ``Paramspace``."""
    return pd.DataFrame([(c.source, c.budget) for c in training_cells(params)], columns=list(CELL_COLUMNS))


def compared_sources(params: Mapping) -> list[str]:
    """Every source whose data the grid reads (``compare.sources``, the union's members for ``union``),
    in name order. Reads only ``compare.sources`` and ``compare.union`` (a pre-training job gets no more)."""
    out: set[str] = set()
    for s in params["compare"]["sources"]:
        out.update(union_members(params) if s == UNION else [s])
    return [s for s in SOURCE_NAMES if s in out]


# --------------------------------------------------------------------------- files


def oracle_files(source: str, root: str | Path = layout.COMPARE_ORACLE_DIR) -> dict[str, str]:
    """A source's oracle splits (in ``root`` instead of the default folder when given)."""
    template = layout.COMPARE_ORACLE_FILE.replace(layout.COMPARE_ORACLE_DIR, str(root), 1)
    return {s: template.format(source=source, split=s) for s in layout.SPLITS}


def pretrain_inputs(params: Mapping, cell: str, root: str | Path = layout.COMPARE_ORACLE_DIR) -> dict[str, list[str]]:
    """Inputs of a pre-training cell: its sources' train/dev oracle files; an equal-budget cell with
    ``examples: null`` also reads every other compared source's train file (the smallest sets N)."""
    c = parse_cell(cell)
    srcs = members(params, c)
    size_from = (
        compared_sources(params) if c.budget == "equal" and params["compare"]["equal"]["examples"] is None else []
    )
    return {
        "train": [oracle_files(s, root)["train"] for s in srcs],
        "dev": [oracle_files(s, root)["dev"] for s in srcs],
        "sizes": [oracle_files(s, root)["train"] for s in size_from if s not in srcs],
    }


def model_dir(cell: str | Cell) -> str:
    return layout.COMPARE_MODEL_DIR.format(cell=_cell(cell).id)


def model_dir_of(cell_id: str) -> str:
    """The checkpoint folder of any cell id (extractive or abstractive)."""
    return layout.COMPARE_MODEL_DIR.format(cell=cell_id)


def start_inputs(cell: str) -> list[str]:
    """The checkpoint a DUC / QMSum job starts from (none for the encoder-only row)."""
    c = parse_cell(cell)
    return (
        [layout.COMPARE_MODEL.format(cell=c.id), layout.COMPARE_PRETRAIN_RESULT.format(cell=c.id)] if c.trains else []
    )


def result_files(params: Mapping) -> dict[str, list[str]]:
    """Every cell result, by kind (the inputs of ``wikiref compare table``)."""
    train = training_cells(params)
    return {
        "pretrain": [layout.COMPARE_PRETRAIN_RESULT.format(cell=c.id) for c in train],
        "duc": [layout.COMPARE_DUC_RESULT.format(cell=c.id) for c in cells(params)],
        "qmsum": [layout.COMPARE_QMSUM_RESULT.format(cell=c.id) for c in cells(params)],
        "abstractive": abstractive_result_files(params),
    }


# --------------------------------------------------------------------------- per-run parameters

# What a cell job receives in place of the Table IV variants / Table VI settings (it makes its own), so
# that editing those lists reruns no comparison cell.
_PLACEHOLDER_VARIANT = {
    "name": "compare",
    "label": "compare",
    "head": "regression",
    "pooling": "query",
    "query": True,
    "init": "pretrained",
}
_PLACEHOLDER_SETTING = {"name": "compare", "label": "compare", "init": "encoder", "pooling": "query", "method": "full"}


def cell_param_replacements(job: str) -> dict[str, Any]:
    """``replace=`` of :func:`wikiref.config.job_params` for the cell jobs (``pretrain``, ``duc``, ``qmsum``)."""
    out: dict[str, Any] = {"pretrain.variants": [dict(_PLACEHOLDER_VARIANT)]}
    if job in ("duc", "qmsum"):
        out["finetune.settings"] = [dict(_PLACEHOLDER_SETTING)]
    return out


def effective_params(params: Mapping) -> dict:
    """``params`` with the ``compare.budget`` overrides applied to model / pretrain / finetune (null = keep)."""
    p = copy.deepcopy(dict(params))
    b = p["compare"]["budget"]
    for key in ("max_length", "stride", "max_query_tokens"):
        if b[key] is not None:
            p["model"][key] = b[key]
    if "finetune" in p:  # the DUC and QMSum jobs (a pre-training job does not read the section)
        ft = p["finetune"]
        if b["finetune_epochs"] is not None:
            ft["epochs"] = b["finetune_epochs"]
        if b["duc_doc_sentences"] is not None:
            ft["max_doc_sentences"] = b["duc_doc_sentences"]
        if b["duc_train_clusters"] is not None:
            ft["max_train_clusters"] = b["duc_train_clusters"]
        ft["keep_models"] = False  # only the scores of the fine-tuned copies are kept
    if p["model"]["stride"] > p["model"]["max_length"]:
        raise CompareError(f"compare: stride {p['model']['stride']} > max_length {p['model']['max_length']}")
    return p


def variant_spec(params: Mapping, cell: Cell) -> dict:
    """The ``pretrain.variants`` entry of a cell's model (its name is the cell id)."""
    cmp = params["compare"]
    return {
        "name": cell.id,
        "label": cell.label,
        "head": cmp["head"],
        "pooling": cmp["pooling"],
        "query": True,
        "init": "pretrained",
    }


def start_setting(params: Mapping, cell: Cell, method: str) -> dict:
    """The ``finetune.settings`` entry that starts from a cell's model (or the encoder)."""
    if cell.trains:
        start = {"init": "pretrained", "variant": cell.id}
    else:
        if method == "none":
            raise CompareError("the encoder-only row has no transfer (its sentence head is untrained)")
        start = {"init": "encoder", "pooling": params["compare"]["pooling"]}
    return {"name": "compare", "label": cell.label, **start, "method": method}


# --------------------------------------------------------------------------- training data


def read_oracle(paths: Sequence[str | Path], where: str) -> tuple[pd.DataFrame, dict]:
    """The usable rows of oracle files (``ORACLE_SOURCE``), concatenated in id order, and their counts."""
    from wikiref.files import read_parquet
    from wikiref.glue import oracle as pretrain
    from wikiref.schemas import ORACLE_SOURCE, require_columns

    frames = []
    for path in paths:
        if not Path(path).exists():
            raise CompareError(f"{path} missing: run `wikiref compare oracle` for its source first")
        df = read_parquet(path)
        require_columns(df.columns, ORACLE_SOURCE.names, str(path))
        frames.append(df)
    df = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=ORACLE_SOURCE.names)
    df, counts = pretrain.validate_oracle_frame(df, where)
    return df.sort_values("id", kind="stable").reset_index(drop=True), counts


def shares(total: int, k: int) -> list[int]:
    """``total`` split into ``k`` near-equal integer shares (the first ones get the remainder)."""
    return [total // k + (1 if i < total % k else 0) for i in range(k)]


def seeded_subset(df: pd.DataFrame, n: int, seed: int, where: str) -> pd.DataFrame:
    """``n`` rows chosen with a seeded permutation, in id order; an error when there are fewer."""
    if n > len(df):
        raise CompareError(f"{where}: {len(df)} usable training examples, the equal budget needs {n}")
    return cap_rows(df, n, seed)


def equal_examples(params: Mapping, sizes: Mapping[str, int]) -> int:
    """N of the equal budget: ``compare.equal.examples`` or, when null, the smallest training split."""
    n = params["compare"]["equal"]["examples"]
    if n is None:
        if not sizes:
            raise CompareError("compare.equal.examples is null but no source size is known")
        n = min(sizes.values())
    if n < 1:
        raise CompareError(f"the equal budget needs at least one example (sizes: {dict(sizes)})")
    return int(n)


def cap_documents(
    df: pd.DataFrame, max_documents: int | None, document_sentences: int | None
) -> tuple[pd.DataFrame, int]:
    """Each example cut to its first ``max_documents`` documents and their first ``document_sentences``
    sentences (labels, scores, lengths and oracle indices with them); returns the frame and the number
    of sentences cut. None = no cap."""
    if max_documents is None and document_sentences is None:
        return df, 0
    df = df.copy()
    cut = 0
    cols: dict[str, list] = {
        k: [] for k in ("doc_sentences", "oracle_labels", "oracle_scores", "doc_lengths", "doc_ids")
    }
    indices = []
    for r in df.itertuples(index=False):
        keep: list[int] = []
        lengths: list[int] = []
        pos = 0
        for d, n in enumerate(int(x) for x in r.doc_lengths):
            if max_documents is None or d < max_documents:
                k = n if document_sentences is None else min(n, document_sentences)
                keep.extend(range(pos, pos + k))
                lengths.append(k)
            pos += n
        cut += len(r.doc_sentences) - len(keep)
        new_pos = {old: new for new, old in enumerate(keep)}
        cols["doc_sentences"].append([r.doc_sentences[i] for i in keep])
        cols["oracle_labels"].append([r.oracle_labels[i] for i in keep])
        cols["oracle_scores"].append([r.oracle_scores[i] for i in keep])
        cols["doc_lengths"].append(lengths)
        cols["doc_ids"].append(list(r.doc_ids)[: len(lengths)])
        indices.append([new_pos[int(i)] for i in r.oracle_indices if int(i) in new_pos])
    for k, v in cols.items():
        df[k] = v
    df["oracle_indices"] = indices
    return df, cut


def training_data(params: Mapping, cell: Cell, inputs: Mapping) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """(train rows, dev rows, description) of a pre-training cell under its budget."""
    cmp, seed = params["compare"], params["seed"]
    srcs = members(params, cell)
    train_paths = dict(zip(srcs, inputs["train"]))
    dev_paths = dict(zip(srcs, inputs["dev"]))
    pools: dict[str, pd.DataFrame] = {}
    counts: dict[str, dict] = {}
    for s in srcs:
        pools[s], counts[s] = read_oracle([train_paths[s]], train_paths[s])
        if pools[s].empty:
            raise CompareError(f"{train_paths[s]}: no usable training example for source {s}")
    info: dict[str, Any] = {"sources": srcs, "train_rows": counts}
    if cell.budget == "equal":
        sizes = {s: len(df) for s, df in pools.items()}
        for path in inputs.get("sizes", []):
            other, _ = read_oracle([path], path)
            sizes[Path(path).parent.name] = len(other)
        n = equal_examples(params, sizes)
        parts = [seeded_subset(pools[s], k, seed, f"source {s}") for s, k in zip(srcs, shares(n, len(srcs)))]
        train = pd.concat(parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
        info.update(examples=n, source_sizes=sizes, steps=int(cmp["equal"]["steps"]))
    else:
        train = pd.concat(pools.values(), ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
        info.update(examples=len(train), epochs=int(cmp["natural"]["epochs"]))
    info["examples_by_source"] = {s: int((train["source"] == s).sum()) for s in srcs}
    # Dev for the epoch choice: eval_examples in total (equal shares over the union's sources).
    n_eval = cmp["budget"]["eval_examples"]
    dev_parts = []
    for s, k in zip(srcs, shares(n_eval, len(srcs)) if n_eval is not None else [None] * len(srcs)):
        dev, _ = read_oracle([dev_paths[s]], dev_paths[s])
        dev_parts.append(cap_rows(dev, k, seed))
    dev = pd.concat(dev_parts, ignore_index=True).sort_values("id", kind="stable").reset_index(drop=True)
    if dev.empty:
        raise CompareError(f"{cell.id}: no usable dev example in {list(dev_paths.values())}")
    b = cmp["budget"]
    train, cut_train = cap_documents(train, b["max_documents"], b["document_sentences"])
    dev, cut_dev = cap_documents(dev, b["max_documents"], b["document_sentences"])
    info.update(
        dev_examples=len(dev),
        sentences_cut={"train": cut_train, "dev": cut_dev},
        standin=bool(train["standin"].any() or dev["standin"].any()),
        standin_examples=int(train["standin"].sum()),
        documents_per_example=round(float(np.mean([len(x) for x in train["doc_lengths"]])), 3),
        sentences_per_example=round(float(np.mean([len(x) for x in train["doc_sentences"]])), 3),
    )
    return train, dev, info


# --------------------------------------------------------------------------- jobs


def oracle(params: Mapping, inputs: Mapping, outputs: Mapping, *, source: str, threads: int = 1) -> dict:
    """The oracle of one source's splits. inputs: split -> ``data/sources/<source>/<split>.parquet``;
    outputs: split -> ``data/compare/oracle/<source>/<split>.parquet``, ``metrics`` (JSON: per split
    examples, documents and sentences per example, mean oracle score, selected sentences, STAND-IN
    examples). Returns the metrics."""
    import pyarrow.parquet as pq

    from wikiref.files import write_json, write_parquet
    from wikiref.glue.labels import example_oracle_table

    if source not in SOURCE_NAMES:
        raise CompareError(f"source {source!r} not in {SOURCE_NAMES}")
    o = params["oracle"]
    metrics: dict[str, Any] = {
        "source": source,
        "label_metric": o["label_metric"],
        "score_metric": o["score_metric"],
        "splits": {},
    }
    for split in layout.SPLITS:
        path = Path(inputs[split])
        if not path.exists():
            raise CompareError(f"{path} missing: run the {source} stage first")
        table, selected = example_oracle_table(
            pq.read_table(path), label_metric=o["label_metric"], score_metric=o["score_metric"], threads=threads
        )
        write_parquet(outputs[split], table)
        n = table.num_rows
        cols = table.select(["oracle_score", "doc_lengths", "doc_sentences", "standin"]).to_pydict() if n else {}

        metrics["splits"][split] = {
            "examples": n,  # (the means are 0 for an empty split)
            "documents_per_example": _mean6([len(x) for x in cols.get("doc_lengths", [])]),
            "sentences_per_example": _mean6([len(x) for x in cols.get("doc_sentences", [])]),
            "oracle_score_mean": _mean6(cols.get("oracle_score", [])),
            "selected_sentences_mean": _mean6(selected),
            "no_positive_label": sum(1 for k in selected if k == 0),
            "standin_examples": int(sum(cols.get("standin", []))),
        }
    metrics["standin"] = any(v["standin_examples"] for v in metrics["splits"].values())
    write_json(outputs["metrics"], metrics)
    return metrics


def pretrain(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """Pre-train one cell. inputs: ``train`` / ``dev`` (lists: the oracle files of the cell's sources, in
    :func:`members` order), ``sizes`` (other sources' train files, for ``examples: null``); outputs:
    ``model_dir``, ``result`` (JSON: examples per source, optimizer steps, windows, dev ROUGE-2, seconds,
    STAND-IN). Returns the result."""
    import torch

    from wikiref.files import write_json
    from wikiref.glue import oracle as pre
    from wikiref.model import build_scorer
    from wikiref.model.training import TrainSettings, train

    c = _cell(cell)
    if not c.trains:
        raise CompareError(f"{c.id}: no augmentation, nothing to pre-train")
    t0 = time.perf_counter()
    run_params = effective_params(params)
    seed = run_params["seed"]
    spec = variant_spec(run_params, c)
    run_params["pretrain"]["variants"] = [spec]
    train_df, dev_df, info = training_data(run_params, c, inputs)
    settings = TrainSettings.from_params(seed, run_params["model"], run_params["pretrain"], progress)
    if c.budget == "equal":
        settings.max_steps = info["steps"]
    else:
        settings.epochs = info["epochs"]
    torch.manual_seed(seed)
    model, tok = build_scorer(pre.scorer_config(run_params["model"], spec))
    log.info("%s: %d training examples (%s), %d dev", c.id, len(train_df), info["examples_by_source"], len(dev_df))
    result = train(
        model,
        tok,
        pre.to_examples(train_df, spec["head"]),
        pre.to_examples(dev_df, spec["head"]),
        settings,
        outputs["model_dir"],
        select_fn=pre.dev_rouge2_fn(dev_df, run_params["pretrain"]),
    )
    steps = result.history[-1]["global_step"] if result.history else 0
    out = {
        "cell": c.id,
        "source": c.source,
        "budget": c.budget,
        "label": c.label,
        "encoder": run_params["model"]["encoder"],
        "head": spec["head"],
        "pooling": spec["pooling"],
        **info,
        "optimizer_steps": int(steps),
        "batch_size": settings.batch_size * settings.grad_accum_steps,
        "train_windows": result.pack_stats.get("windows"),
        "document_boundaries": result.pack_stats.get("document_boundaries"),
        "best_epoch": result.best_epoch,
        "dev_rouge2": result.best_metric,
        "windows_per_second": round(result.windows_per_second, 3),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    write_json(outputs["result"], out)
    return out


def _duc_paths(params: Mapping, inputs: Mapping) -> dict[int, str]:
    years = sorted(int(y) for y in params["duc"]["years"])
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(p or y) for y, p in paths.items() if p is None or not Path(p).exists()]
    if missing:
        raise CompareError(f"missing DUC files {missing}: run `wikiref duc prepare` first")
    return paths


def _benchmark_run(params: Mapping, cell: str | Cell, benchmark: str) -> tuple[Cell, dict, list[str], dict]:
    """What a DUC / QMSum job starts with: the cell, its parameters (the cell's model as the only
    ``pretrain.variants`` entry), the modes it runs (``compare.<benchmark>``; the encoder-only row is
    fine-tuned only) and the head of its result."""
    c = _cell(cell)
    run_params = effective_params(params)
    if c.trains:
        run_params["pretrain"]["variants"] = [variant_spec(run_params, c)]
    modes = [m for m in MODES if run_params["compare"][benchmark][m] and (c.trains or m == "finetuned")]
    return c, run_params, modes, {"cell": c.id, "source": c.source, "budget": c.budget, "label": c.label}


def duc_years(params: Mapping, mode: str) -> list[int]:
    """The DUC years a mode is tested on: every year (transfer), or ``compare.duc.finetune_years`` held out
    in turn (fine-tuned; null = every year)."""
    years = sorted(int(y) for y in params["duc"]["years"])
    chosen = params["compare"]["duc"]["finetune_years"]
    if mode == "transfer" or chosen is None:
        return years
    unknown = [y for y in chosen if int(y) not in years]
    if unknown:
        raise CompareError(f"compare.duc.finetune_years {unknown} not in duc.years {years}")
    return sorted(int(y) for y in chosen)


def duc(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """DUC for one cell: transfer (the pre-trained model applied to every year, no fine-tuning) and
    held-out-year fine-tuning (every year in turn), as ``compare.duc`` asks. inputs: ``years`` (DUC year
    -> ``data/duc/<year>.parquet``), ``models_root`` (the cells' checkpoints); outputs: ``work_dir``,
    ``result`` (JSON: mode -> year -> ROUGE recall x 100 and 95% intervals). Returns the result."""
    from wikiref.files import write_json
    from wikiref.glue import duc as finetune

    c, run_params, modes, out = _benchmark_run(params, cell, "duc")
    paths = _duc_paths(run_params, inputs)
    root = inputs.get("models_root", layout.COMPARE_MODELS_DIR)
    out.update(flags=run_params["duc"]["rouge_flags"], standin=bool(run_params["duc"]["standin"]), modes={})
    t0 = time.perf_counter()
    for mode in modes:
        setting = start_setting(run_params, c, "none" if mode == "transfer" else "full")
        run_params["finetune"]["settings"] = [setting]
        per_year = {}
        for year in duc_years(run_params, mode):
            metrics, _, _ = finetune.train_and_test(
                run_params,
                "compare",
                year,
                paths,
                Path(outputs["work_dir"]) / mode / str(year),
                pretrain_dir=root,
                metrics_dir=root,
                progress=progress,
            )
            test = metrics["test"]
            per_year[str(year)] = {
                "recall": finetune.recall_x100(test),
                "recall_ci": {m: [round(100.0 * float(x), 4) for x in test[m]["R_ci"]] for m in DUC_MEASURES},
                "topics": metrics["test_topics"],
                "train_clusters": len(metrics.get("train_clusters", [])),
                "best_epoch": (metrics.get("training") or {}).get("best_epoch"),
                "seconds": metrics["seconds"],
            }
        out["modes"][mode] = per_year
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


def qmsum(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str | Cell, progress: bool = False) -> dict:
    """QMSum for one cell: transfer and fine-tuning (``compare.qmsum``) in every setting of
    ``compare.qmsum.settings``. inputs: ``train`` / ``dev`` / ``test`` (``data/qmsum/<split>.parquet``),
    ``models_root``; outputs: ``work_dir``, ``result`` (JSON: mode -> setting -> official ROUGE-1/2/L
    R/P/F x 100 with 95% intervals). Returns the result."""
    from wikiref.files import write_json
    from wikiref.glue import duc as finetune
    from wikiref.glue import qmsum as q

    c, run_params, modes, out = _benchmark_run(params, cell, "qmsum")
    cmp, seed = run_params["compare"], run_params["seed"]
    root = inputs.get("models_root", layout.COMPARE_MODELS_DIR)
    splits = {s: q.load_split(inputs[s]) for s in layout.SPLITS}
    test = q.eval_rows(splits["test"], run_params["qmsum"], seed)
    out |= {
        "flags": run_params["qmsum"]["rouge_flags"],
        "summary_words": run_params["qmsum"]["summary_words"],
        "test_queries": len(test),
        "standin": bool(test["standin"].any()) if len(test) else False,
        "modes": {},
    }
    t0 = time.perf_counter()
    for mode in modes:
        per_setting = {}
        for setting in cmp["qmsum"]["settings"]:
            method = "none" if mode == "transfer" else "full"
            model, tok, start = finetune.start_model(
                run_params, start_setting(run_params, c, method), pretrain_dir=root, metrics_dir=root
            )
            info: dict[str, Any] = {"start": start}
            if mode == "finetuned":
                model, tok, info["training"] = q.finetune(
                    run_params,
                    model,
                    tok,
                    splits["train"],
                    splits["dev"],
                    setting,
                    Path(outputs["work_dir"]) / setting,
                    progress=progress,
                )
            res = q.evaluate_model(run_params, model, tok, test, setting, progress=progress)
            per_setting[setting] = {**res, **info}
        out["modes"][mode] = per_setting
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


# --------------------------------------------------------------------------- the abstractive model axis
# An abstractive cell trains one of ``compare.abstractive.models`` (an ``abstractive.runs``-shaped entry:
# family, config overrides, decode overrides; sizes and training settings from the ``abstractive`` section) on
# exactly the training examples of the extractive cell with the same source and budget (the same oracle rows,
# seeded subset and document caps of :func:`training_data`; the summary = the oracle's reference statement),
# and is tested without fine-tuning (transfer) on DUC and on QMSum.

ABSTRACTIVE_COLUMNS = ("model", "source", "budget")
ABSTRACTIVE_CELL_REGEX = r"model~[A-Za-z0-9]+(-[A-Za-z0-9]+)*_source~[a-z0-9]+_budget~[a-z]+"
_MODEL_NAME = re.compile(r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*")
EXTRACTIVE = "extractive"  # the model of the extractive rows (the table's Model column)
EXTRACTIVE_LABEL = "BERT scorer (extractive)"


@dataclass(frozen=True, order=True)
class AbstractiveCell:
    model: str
    source: str
    budget: str

    def __post_init__(self) -> None:
        if not _MODEL_NAME.fullmatch(self.model):
            raise CompareError(f"abstractive model name {self.model!r}: letters, digits and single '-' only")
        if not self.cell.trains:
            raise CompareError("an abstractive cell trains on a source (source none has nothing to train on)")

    @property
    def cell(self) -> Cell:
        """The extractive cell whose training examples it uses."""
        return Cell(self.source, self.budget)

    @property
    def id(self) -> str:
        return f"model~{self.model}_source~{self.source}_budget~{self.budget}"


def parse_abstractive_cell(text: str) -> AbstractiveCell:
    fields = grid_cell_fields(text, ABSTRACTIVE_COLUMNS, CompareError)
    cell = AbstractiveCell(fields["model"], fields["source"], fields["budget"])
    if cell.id != text:
        raise CompareError(f"cell {text!r} is not in canonical form ({cell.id})")
    return cell


def abstractive_models(params: Mapping) -> dict[str, dict]:
    """``compare.abstractive.models`` (a list, like ``abstractive.runs``) by name: entry (``name``, ``family``,
    ``config``, optional ``decode``)."""
    models: dict[str, dict] = {}
    for spec in params["compare"]["abstractive"]["models"] or []:
        name = str(spec["name"])
        if not _MODEL_NAME.fullmatch(name):
            raise CompareError(f"compare.abstractive.models: name {name!r}: letters, digits and single '-' only")
        if name in models:
            raise CompareError(f"compare.abstractive.models: {name!r} twice")
        if spec.get("family") not in ("seq2seq", "hiersumm"):
            raise CompareError(f"compare.abstractive.models {name}: family must be seq2seq or hiersumm")
        models[name] = dict(spec)
    return models


def abstractive_cells(params: Mapping) -> list[AbstractiveCell]:
    """Every abstractive model x every training cell of the grid."""
    return [AbstractiveCell(m, c.source, c.budget) for m in abstractive_models(params) for c in training_cells(params)]


def abstractive_grid(params: Mapping) -> pd.DataFrame:
    """The abstractive cells as a DataFrame for Snakemake's ``Paramspace`` (no rows: no abstractive model)."""
    return pd.DataFrame(
        [(c.model, c.source, c.budget) for c in abstractive_cells(params)], columns=list(ABSTRACTIVE_COLUMNS)
    )


def abstractive_result_files(params: Mapping) -> list[str]:
    return [layout.COMPARE_ABSTRACTIVE_RESULT.format(cell=c.id) for c in abstractive_cells(params)]


def abstractive_only(params: Mapping, cell: str) -> dict[str, Any]:
    """``replace=`` for an abstractive cell's job: ``compare.abstractive.models`` holding its model alone, so
    adding or editing another model reruns none of its jobs."""
    c = parse_abstractive_cell(cell)
    models = abstractive_models(params)
    if c.model not in models:
        raise CompareError(f"no model {c.model!r} in compare.abstractive.models ({', '.join(models) or 'none'})")
    return {"compare.abstractive.models": [copy.deepcopy(models[c.model])]}


def abstractive_inputs(
    params: Mapping, cell: str, root: str | Path = layout.COMPARE_ORACLE_DIR
) -> dict[str, list[str]]:
    """The extractive cell's training inputs (:func:`pretrain_inputs`), the DUC years and the QMSum test split."""
    c = parse_abstractive_cell(cell)
    return {
        **pretrain_inputs(params, c.cell.id, root),
        "years": [layout.DUC_YEAR.format(year=y) for y in sorted(int(y) for y in params["duc"]["years"])],
        "qmsum_test": [layout.QMSUM_SPLIT.format(split="test")],
    }


def oracle_item(row: Mapping):
    """An oracle row (:data:`wikiref.schemas.ORACLE_SOURCE`) as an abstractive item: its documents from
    ``doc_lengths``, the summary = the reference statement."""
    from wikiref.model import abstractive as A

    sents = [str(s) for s in row["doc_sentences"]]
    docs, pos = [], 0
    for n in (int(x) for x in row["doc_lengths"]):
        docs.append(A.tokens(" ".join(sents[pos : pos + n])))
        pos += n
    docs = [d for d in docs if d]
    if not docs:
        raise CompareError(f"example {row['id']!r}: no document with a token")
    query = [t for level in row["query"] for t in A.tokens(str(level))]
    return A.Item(str(row["id"]), query, docs, A.tokens(str(row["statement"])))


def qmsum_items(rows: pd.DataFrame, setting: str, doc_tokens: int) -> list:
    """One abstractive item per QMSum query: the query, the setting's turns (``transcript`` / ``gold_span``) cut
    in order into documents of about ``doc_tokens`` tokens (whole turns; a longer turn is one document)."""
    from wikiref.extractive import meetings as qb
    from wikiref.model import abstractive as A

    items = []
    for r in rows.to_dict("records"):
        _, turns = qb.document_turns(r, setting)
        docs: list[list[str]] = [[]]
        for turn in turns:
            toks = A.tokens(str(turn))
            if docs[-1] and len(docs[-1]) + len(toks) > doc_tokens:
                docs.append([])
            docs[-1].extend(toks)
        docs = [d for d in docs if d] or [["."]]
        items.append(A.Item(str(r["id"]), A.tokens(str(r["query"])), docs, None))
    return items


def abstractive(params: Mapping, inputs: Mapping, outputs: Mapping, *, cell: str, progress: bool = False) -> dict:
    """One abstractive cell: train the model on the extractive cell's examples (``compare.abstractive.steps``
    optimizer steps under the equal budget, the family's epochs under the natural one), then summarise every DUC
    year (official ROUGE recall, ``duc.rouge_flags``, summaries cut to ``duc.summary_words`` words, as the
    abstractive stage does: :func:`wikiref.glue.abstractive.duc_items` / ``truncate_words``) and the QMSum
    test queries (official ROUGE F1, ``qmsum.rouge_flags``, cut to ``qmsum.summary_words``; the first of
    ``compare.qmsum.settings``). inputs: :func:`abstractive_inputs`; outputs: ``model_dir``, ``result`` (JSON).
    Returns the result."""
    from wikiref.extractive.baselines import evaluate as duc_evaluate
    from wikiref.files import write_json
    from wikiref.glue import abstractive as glue
    from wikiref.glue import duc as finetune
    from wikiref.glue import qmsum as q
    from wikiref.model import abstractive as A
    from wikiref.model.decoding import DecodeSettings
    from wikiref.model.training import TrainSettings, resolve_device

    c = parse_abstractive_cell(cell)
    spec = abstractive_models(params)[c.model]
    family = spec["family"]
    run_params = effective_params(params)
    train_df, dev_df, info = training_data(run_params, c.cell, inputs)
    train_items = [oracle_item(r) for r in train_df.to_dict("records")]
    dev_items = [oracle_item(r) for r in dev_df.to_dict("records")]
    config, use_query = glue.model_config(run_params, spec)
    section = run_params["abstractive"][family]
    settings = TrainSettings.from_params(run_params["seed"], run_params["model"], section["train"], progress=progress)
    if c.budget == "equal":
        settings.max_steps = int(run_params["compare"]["abstractive"]["steps"])
    vocab = A.build_vocab(train_items, int(run_params["abstractive"]["vocab"]["max_words"]))
    model = A.build_model(family, vocab, config, seed=int(run_params["seed"]))
    t0 = time.perf_counter()
    res = A.fit(family, model, vocab, train_items, dev_items, settings, outputs["model_dir"], use_query=use_query)
    summariser = A.load(outputs["model_dir"], resolve_device(run_params["model"]["device"]))
    out: dict[str, Any] = {
        "cell": c.id,
        "model": c.model,
        "family": family,
        "variant": model.config.variant,
        "source": c.source,
        "budget": c.budget,
        "label": f"{c.model} ({family}, abstractive)",
        "examples": info["examples"],
        "examples_by_source": info["examples_by_source"],
        "optimizer_steps": int(res.history[-1]["global_step"]) if res.history else 0,
        "best_epoch": res.best_epoch,
        "train_tokens_per_second": round(res.tokens_per_second, 1),
        "vocab_size": len(vocab),
        "summaries": {},
    }
    keys, batch = glue.decode_settings(run_params, spec, duc=True)
    keys.update({k: v for k, v in (spec.get("decode") or {}).items() if k in keys})  # the model's own decoding wins
    duc_settings = DecodeSettings(**keys)
    duc = run_params["duc"]
    per_year = {}
    for path in inputs["years"]:
        df = finetune.load_year(path)
        items, topics = glue.duc_items(df.to_dict("records"))
        toks = A.summarise(summariser, items, duc_settings, batch)
        words = int(duc["summary_words"])
        summaries = {it.id: A.split_sentences(glue.truncate_words(t, words)) for it, t in zip(items, toks)}
        scores = duc_evaluate(summaries, topics, duc["rouge_flags"])
        year = str(int(df["year"].iloc[0]))
        per_year[year] = {
            "recall": finetune.recall_x100(scores),
            "recall_ci": {m: [round(100.0 * float(x), 4) for x in scores[m]["R_ci"]] for m in DUC_MEASURES},
            "topics": len(items),
        }
        out["summaries"][f"duc{year}"] = summaries
    out["duc"] = {"flags": duc["rouge_flags"], "standin": bool(duc["standin"]), "years": per_year}
    settings_q = run_params["compare"]["qmsum"]["settings"]
    if settings_q:
        setting, qp = settings_q[0], run_params["qmsum"]
        rows = q.eval_rows(q.load_split(inputs["qmsum_test"][0]), qp, run_params["seed"])
        doc_tokens = int(config.get("max_doc_length", config.get("max_source_length", 400)))
        keys, batch = glue.decode_settings(run_params, spec)
        items = qmsum_items(rows, setting, doc_tokens)
        toks = A.summarise(summariser, items, DecodeSettings(**keys), batch)
        words = int(qp["summary_words"])
        summaries = {it.id: A.split_sentences(glue.truncate_words(t, words)) for it, t in zip(items, toks)}
        out["qmsum"] = {
            "setting": setting,
            "flags": qp["rouge_flags"],
            "test_queries": len(rows),
            "rouge": q.score(summaries, rows, qp["rouge_flags"]),
            "standin": bool(rows["standin"].any()) if len(rows) else False,
        }
        out["summaries"]["qmsum"] = summaries
    out["standin"] = bool(info["standin"]) or out["duc"]["standin"] or bool(out.get("qmsum", {}).get("standin"))
    out["seconds"] = round(time.perf_counter() - t0, 2)
    write_json(outputs["result"], out)
    return out


# --------------------------------------------------------------------------- the table


def _duc_cells(res: Mapping, mode: str, years: Sequence[int]) -> dict[str, Any]:
    per_year = res["modes"].get(mode, {})
    row: dict[str, Any] = {}
    for y in years:
        rec = per_year.get(str(y))
        for m, short in zip(DUC_MEASURES, ("R-1", "R-2", "R-SU4")):
            row[f"DUC {y} {short}"] = None if rec is None else float(rec["recall"][m])
        row[duc_r2_ci(y)] = None if rec is None else [float(x) for x in rec["recall_ci"]["ROUGE-2"]]
    return row


def duc_r2_ci(year: int) -> str:
    """The row field of a year's bootstrap 95% interval of R-2 recall (not a printed column)."""
    return f"duc_{year}_r2_recall_ci"


def _qmsum_cells(res: Mapping, mode: str, setting: str) -> dict[str, Any]:
    rec = res["modes"].get(mode, {}).get(setting)
    out: dict[str, Any] = {
        f"QMSum {short}": None if rec is None else float(rec["rouge"][m]["f1"])
        for m, short in zip(QMSUM_METRICS, ("R-1", "R-2", "R-L"))
    }
    # The bootstrap 95% interval of R-2 F1 (official scorer): the findings say when the runner-up is inside it.
    out[QMSUM_R2_CI] = None if rec is None else [float(x) for x in rec["rouge"]["rouge2"]["f1_ci"]]
    return out


def assemble(params: Mapping, results: Mapping[str, Mapping[str, Mapping]], baselines: Mapping) -> dict:
    """The comparison: rows (one per cell x mode, then the baselines), per-benchmark rankings and the
    findings. ``results``: kind (pretrain / duc / qmsum) -> cell id -> its JSON; ``baselines``: ``duc``
    (duc_baselines.json) and ``qmsum`` (qmsum_baselines.json)."""
    years = sorted(int(y) for y in params["duc"]["years"])
    setting = params["compare"]["qmsum"]["settings"][0] if params["compare"]["qmsum"]["settings"] else None
    rows: list[dict] = []
    for c in cells(params):
        pre = results["pretrain"].get(c.id, {})
        for mode in MODES:
            d = results["duc"][c.id]
            qm = results["qmsum"][c.id]
            if mode not in d["modes"] and mode not in qm["modes"]:
                continue
            rows.append(
                {
                    "Model": EXTRACTIVE_LABEL,
                    "model": EXTRACTIVE,
                    "Source": c.label,
                    "source": c.source,
                    "Budget": c.budget,
                    "Mode": MODE_LABELS[mode],
                    "mode": mode,
                    "Examples": pre.get("examples", 0),
                    "Steps": pre.get("optimizer_steps", 0),
                    **_duc_cells(d, mode, years),
                    **(_qmsum_cells(qm, mode, setting) if setting else {}),
                    "standin": bool(pre.get("standin")) or bool(d.get("standin")) or bool(qm.get("standin")),
                }
            )
    for c in abstractive_cells(params):
        res = results.get("abstractive", {}).get(c.id)
        if res is None:
            raise CompareError(f"no result of abstractive cell {c.id}")
        qm = res.get("qmsum")
        rows.append(
            {
                "Model": res["label"],
                "model": c.model,
                "Source": SOURCE_LABELS[c.source],
                "source": c.source,
                "Budget": c.budget,
                "Mode": MODE_LABELS[ABSTRACTIVE_MODE],
                "mode": ABSTRACTIVE_MODE,
                "Examples": res["examples"],
                "Steps": res["optimizer_steps"],
                **_duc_cells({"modes": {ABSTRACTIVE_MODE: res["duc"]["years"]}}, ABSTRACTIVE_MODE, years),
                **(
                    _qmsum_cells(
                        {"modes": {ABSTRACTIVE_MODE: {setting: {"rouge": qm["rouge"]}} if qm else {}}},
                        ABSTRACTIVE_MODE,
                        setting,
                    )
                    if setting
                    else {}
                ),
                "standin": bool(res["standin"]),
            }
        )
    for key, label in (("lead", "LEAD"), ("query_sim", "QUERY-SIM"), ("oracle", "ORACLE")):
        row: dict[str, Any] = {"Model": "-", "model": "baseline", "Source": label, "source": key}
        row.update(Budget="-", Mode="baseline", mode="baseline")
        row.update(Examples=0, Steps=0)
        for y in years:
            rec = baselines.get("duc", {}).get("systems", {}).get(key, {}).get(str(y))
            for m, short in zip(DUC_MEASURES, ("R-1", "R-2", "R-SU4")):
                row[f"DUC {y} {short}"] = None if rec is None else round(100.0 * float(rec[m]["R"]), 4)
        qrec = baselines.get("qmsum", {}).get("systems", {}).get(key, {}).get(setting) if setting else None
        if setting:
            for m, short in zip(QMSUM_METRICS, ("R-1", "R-2", "R-L")):
                row[f"QMSum {short}"] = None if qrec is None else float(qrec[m]["f1"])
        row["standin"] = bool(baselines.get("duc", {}).get("standin")) or bool(
            baselines.get("qmsum", {}).get("standin")
        )
        rows.append(row)
    return {"rows": rows, "findings": findings(rows, years, setting), "qmsum_setting": setting, "years": years}


def _mean(values: Sequence[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if len(vals) == len(values) and vals else None


def findings(rows: Sequence[Mapping], years: Sequence[int], setting: str | None) -> list[dict]:
    """Per benchmark and mode: the sources ranked by the benchmark's main score (DUC: mean R-2 recall over
    the years that mode was tested on; QMSum: R-2 F1), the best one and its margin over the runner-up and
    over the encoder-only row. A row missing one of those years is not ranked (no mean over fewer years);
    a statement is made only from numbers that exist."""
    out = []
    groups = [(mode, None, [r for r in rows if r["mode"] == mode]) for mode in MODES]
    models = dict.fromkeys(r["model"] for r in rows if r["mode"] == ABSTRACTIVE_MODE)
    groups += [(ABSTRACTIVE_MODE, m, [r for r in rows if r["model"] == m]) for m in models]
    for mode, model, mine in groups:
        tested = [y for y in years if any(r.get(f"DUC {y} R-2") is not None for r in mine)]
        benchmarks = []
        intervals: dict = {}
        if tested:
            benchmarks.append(
                (
                    "DUC",
                    "mean R-2 recall over " + "/".join(str(y) for y in tested),
                    lambda r, t=tested: _mean([r.get(f"DUC {y} R-2") for y in t]),
                )
            )
            if len(tested) == 1:  # one year: its interval applies to the ranked score (a mean has none here)
                intervals["DUC"] = lambda r, y=tested[0]: r.get(duc_r2_ci(y))
        if setting:
            benchmarks.append(("QMSum", f"R-2 F1 ({setting})", lambda r: r.get("QMSum R-2")))
        intervals["QMSum"] = lambda r: r.get(QMSUM_R2_CI)
        for bench, measure, key in benchmarks:
            cand = [(key(r), r) for r in mine if r["source"] != NONE and key(r) is not None]
            if not cand:
                continue
            cand.sort(key=lambda t: (-t[0], t[1]["Source"], t[1]["Budget"]))
            best_v, best = cand[0]
            item: dict[str, Any] = {
                "benchmark": bench,
                "mode": mode,
                **({"model": model} if model else {}),
                "measure": measure,
                "ranking": [{"source": r["source"], "budget": r["Budget"], "score": round(v, 4)} for v, r in cand],
                "best": {"source": best["source"], "budget": best["Budget"], "score": round(best_v, 4)},
            }
            if len(cand) > 1:
                item["margin_over_next"] = round(best_v - cand[1][0], 4)
                ci = intervals.get(bench, lambda r: None)(best)
                if ci:
                    item["best_ci95"] = [round(x, 4) for x in ci]
                    item["next_inside_ci95"] = bool(ci[0] <= cand[1][0] <= ci[1])
            none = [key(r) for r in mine if r["source"] == NONE and key(r) is not None]
            if none:
                item["margin_over_no_augmentation"] = round(best_v - none[0], 4)
            item["text"] = finding_text(item)
            out.append(item)
    order = {"DUC": 0, "QMSum": 1}
    modes = (*MODES, ABSTRACTIVE_MODE)
    return sorted(out, key=lambda f: (order[f["benchmark"]], modes.index(f["mode"]), f.get("model", "")))


def finding_text(item: Mapping) -> str:
    """One sentence that says what the numbers show (ties and negative margins said as such)."""
    best = item["best"]
    label = f"{SOURCE_LABELS.get(best['source'], best['source'])} ({best['budget']} budget)"
    model = f" {item['model']}" if item.get("model") else ""
    head = f"{item['benchmark']}, {MODE_LABELS[item['mode']]}{model}, {item['measure']}: "
    if len(item["ranking"]) == 1:
        text = head + f"only {label} was run ({best['score']:.2f})"
    elif item["margin_over_next"] <= 0:
        text = head + f"no single best source; {label} ties the next at {best['score']:.2f}"
    else:
        nxt = item["ranking"][1]
        text = head + (
            f"{label} scores highest ({best['score']:.2f}), {item['margin_over_next']:.2f} above "
            f"{SOURCE_LABELS.get(nxt['source'], nxt['source'])} ({nxt['budget']})"
        )
        if item.get("next_inside_ci95"):
            lo, hi = item["best_ci95"]
            text += f", inside its 95% bootstrap interval [{lo:.2f}, {hi:.2f}]: not a clear difference"
    if "margin_over_no_augmentation" in item:
        m = item["margin_over_no_augmentation"]
        text += (
            f"; {m:.2f} {'above' if m > 0 else 'below' if m < 0 else 'equal to'} the encoder without augmentation"
            if m
            else "; equal to the encoder without augmentation"
        )
    return text + "."


def table(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The comparison table and metrics. inputs: ``pretrain`` / ``duc`` / ``qmsum`` (cell result files,
    :func:`result_files` order), ``duc_baselines``, ``qmsum_baselines``; outputs: ``table`` (stem),
    ``metrics`` (``results/metrics/compare.json``). Returns the metrics."""
    from wikiref.files import read_json, write_json
    from wikiref.tables import write_table

    results: dict[str, dict[str, Mapping]] = {}
    for kind in ("pretrain", "duc", "qmsum"):
        results[kind] = {}
        for path in inputs[kind]:
            if not Path(path).exists():
                raise CompareError(f"missing cell result {path}: run its compare job first")
            rec = read_json(path)
            results[kind][rec["cell"]] = rec
    results["abstractive"] = {}
    for path in inputs.get("abstractive", []):
        if not Path(path).exists():
            raise CompareError(f"missing abstractive cell result {path}: run its compare job first")
        rec = read_json(path)
        results["abstractive"][rec["cell"]] = rec
    baselines = {k: read_json(inputs[f"{k}_baselines"]) for k in ("duc", "qmsum") if inputs.get(f"{k}_baselines")}
    assembled = assemble(params, results, baselines)
    standin = any(r["standin"] for r in assembled["rows"])
    df = pd.DataFrame(assembled["rows"])
    hidden = {"model", "source", "mode", "standin", QMSUM_R2_CI, *(duc_r2_ci(y) for y in assembled["years"])}
    shown = df[[c for c in df.columns if c not in hidden]].astype(object)
    shown = shown.where(shown.notna(), "-")  # a cell that was not run (e.g. no transfer of the encoder)
    write_table(
        # The label comes from the data each row used (examples, DUC notice, QMSum file), row by row.
        shown.assign(Data=["STAND-IN" if s else "real" for s in df["standin"]]),
        outputs["table"],
        title="Augmentation sources compared: DUC ROUGE recall and QMSum ROUGE F1 (x 100)",
        profile=params["profile"],
        encoder=params["model"]["encoder"],
        notes=table_notes(params, assembled),
    )
    metrics = {
        "profile": params["profile"]["name"],
        "standin": standin,
        "encoder": params["model"]["encoder"],
        "cells": [c.id for c in cells(params)],
        "abstractive_cells": [c.id for c in abstractive_cells(params)],
        "rows": assembled["rows"],
        "findings": assembled["findings"],
        "qmsum_setting": assembled["qmsum_setting"],
        "years": assembled["years"],
        "pretrain": {
            cid: {
                k: r.get(k)
                for k in ("examples", "examples_by_source", "optimizer_steps", "train_windows", "dev_rouge2", "seconds")
            }
            for cid, r in results["pretrain"].items()
        },
        "seconds": {
            cid: round(
                float(results["pretrain"].get(cid, {}).get("seconds", 0.0))
                + float(results["duc"][cid]["seconds"])
                + float(results["qmsum"][cid]["seconds"]),
                2,
            )
            for cid in results["duc"]
        }
        | {cid: float(r["seconds"]) for cid, r in results["abstractive"].items()},
    }
    write_json(outputs["metrics"], metrics)
    return metrics


def table_notes(params: Mapping, assembled: Mapping) -> str:
    cmp = effective_params(params)["compare"]
    eq = cmp["equal"]
    b = cmp["budget"]
    return (
        f"Equal budget: the same examples ({'the smallest training split' if eq['examples'] is None else eq['examples']}) "
        f"and {eq['steps']} optimizer steps per source; natural: every training example, "
        f"{cmp['natural']['epochs']} epoch(s). Union: {', '.join(cmp['union'])} (equal shares). Windows "
        f"{b['max_length']} tokens; training documents: first {b['max_documents']} documents x "
        f"{b['document_sentences']} sentences (null = all). DUC: ROUGE recall, official flags "
        f"{params['duc']['rouge_flags']!r}, fine-tuned on the other years (held-out year) or transferred "
        f"without fine-tuning. QMSum ({assembled['qmsum_setting']}): ROUGE F1, official flags "
        f"{params['qmsum']['rouge_flags']!r}, {params['qmsum']['summary_words']}-word extracts."
    )


def _mean6(values) -> float:
    return round(float(np.mean(values)), 6) if len(values) else 0.0
