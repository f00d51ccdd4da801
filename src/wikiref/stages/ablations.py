"""The analyses of journal §VI as grids of small experiments (Figs. 4-6, Tables VIII-IX).

Every experiment is a *cell* of one of two grids; the Snakemake rule family
(``workflow/rules/ablations.smk``) has one rule per grid, and the wildcard of a job *is* its cell, in
Snakemake's ``Paramspace`` notation (``column~value`` joined by ``_``):

* **augmentation cells** (``{aug}``, rule ``ablations_pretrain``): a WikiRef pre-training run
  ``pooling~P_data~D_amount~A_prune~R_start~S``:

  - ``data``: ``size`` (a seeded ``amount`` fraction of the training pool; the subsets are nested),
    ``quality`` (the pool sorted by oracle score, ascending; the ``quality.window`` share starting at
    the ``amount`` quantile: the paper's overlapping halves "Poor" ... "Excellent"), or ``none`` (no
    augmentation: the encoder alone, nothing to train; used by the fine-tuning cells without DA);
  - ``pooling``: ``cls`` (BERT) | ``max`` | ``mean`` | ``attention`` | ``query`` (Q-BERT);
  - ``prune``: ``none``, or ``iterative`` = gradual magnitude pruning while training on WikiRef
    (:func:`wikiref.glue.duc.prune`), from ``start`` = ``encoder`` (BERT) or ``da`` (the
    full-data augmentation model, Table IX).

  It writes the checkpoint (``models/ablations/pretrain/{aug}/``) and WikiRef dev/test ROUGE F1.
* **DUC cells** (``{aug}/{duc}``, rule ``ablations_finetune``): fine-tune the augmentation model (or
  the encoder) on DUC and test on ``ablations.test_year``; ``duc`` = ``train~T_percent~P_method~M``:
  ``train`` = ``all`` (the other years) or one year; ``percent`` of each training year's clusters;
  ``method`` = ``full`` | ``subnet`` (one-step ST) | ``iterative`` (the pruned subnetwork) | ``none``
  (DA PRE-TRAINED: no fine-tuning). :func:`wikiref.glue.duc.train_and_test` does the work.

:func:`plan` lists the cells each analysis needs (shared cells run once: the full-data Q-BERT
augmentation model is the Fig. 5 100% point, the Fig. 6 full-data line, a Table VIII row, the Table IX
"None" row and the Fig. 4 +DA 100% point). :func:`assemble` puts the cells' results together into
``results/metrics/ablations.json``, which ``wikiref report`` turns into the tables and figures.

The jobs of the stage (``wikiref ablations <job>``), each ``job(params, inputs, outputs, **options) ->
dict`` writing its outputs itself: :func:`pretrain_cell`, :func:`finetune_cell` and :func:`collect`.

The ``ablations.budget`` parameters shrink windows, epochs, example counts and training-document
lengths for these runs only (null = the ``model`` / ``pretrain`` / ``finetune`` value, or no cap), so
the sample grids finish in minutes.
"""

from __future__ import annotations

import copy
import logging
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from wikiref import layout
from wikiref.config import grid_cell_fields, job_params
from wikiref.glue.duc import MEASURES  # DUC cells are fine-tuning jobs: the same measures
from wikiref.registry import job_keys

log = logging.getLogger(__name__)

AUG_COLUMNS = ("pooling", "data", "amount", "prune", "start")
DUC_COLUMNS = ("train", "percent", "method")
POOLINGS = ("cls", "max", "mean", "attention", "query")
DATA_KINDS = ("size", "quality", "none")
SUBNETWORKS = ("none", "iterative_encoder", "iterative_da", "one_step_da")
# Labels as in the paper's tables.
POOLING_LABELS = {
    "cls": "BERT",
    "max": "+MAX POOLING",
    "mean": "+MEAN POOLING",
    "attention": "+ATTENTION POOLING",
    "query": "Q-BERT",
}
SUBNET_ROWS = {  # Table IX: (method, init) labels and the DUC cell that produces the row
    "none": ("NONE", "DA PRE-TRAINED"),
    "iterative_encoder": ("ITERATIVE", "BERT"),
    "iterative_da": ("ITERATIVE", "DA PRE-TRAINED"),
    "one_step_da": ("ONE-STEP", "DA PRE-TRAINED"),
}
AUG_REGEX = r"pooling~[a-z]+_data~[a-z]+_amount~[0-9.]+_prune~[a-z]+_start~[a-z]+"
DUC_REGEX = r"train~[a-z0-9]+_percent~[0-9]+_method~[a-z]+"


class AblationError(ValueError):
    """A cell name or the ablations parameters do not make sense."""


# --------------------------------------------------------------------------- cells


def _fmt_amount(x: float) -> str:
    # The way pandas/Snakemake's Paramspace prints a float column value (repr of a Python float).
    return str(float(x))


@dataclass(frozen=True, order=True)
class AugCell:
    pooling: str
    data: str
    amount: float
    prune: str = "none"
    start: str = "encoder"

    def __post_init__(self) -> None:
        if self.pooling not in POOLINGS:
            raise AblationError(f"pooling {self.pooling!r} not in {POOLINGS}")
        if self.data not in DATA_KINDS:
            raise AblationError(f"data {self.data!r} not in {DATA_KINDS}")
        if self.prune not in ("none", "iterative"):
            raise AblationError(f"prune {self.prune!r} must be none or iterative")
        if self.start not in ("encoder", "da"):
            raise AblationError(f"start {self.start!r} must be encoder or da")
        if not 0.0 <= float(self.amount) <= 1.0:
            raise AblationError(f"amount {self.amount} is not in [0, 1]")
        if self.data == "none" and (self.prune != "none" or self.start != "encoder"):
            raise AblationError("data none (no augmentation) cannot be pruned or start from the DA model")
        if self.prune == "none" and self.start != "encoder":
            raise AblationError("start da is only used by iterative pruning (prune iterative)")

    @property
    def id(self) -> str:
        return "_".join(f"{k}~{_fmt_amount(v) if k == 'amount' else v}" for k, v in zip(AUG_COLUMNS, self.row()))

    def row(self) -> tuple:
        return (self.pooling, self.data, float(self.amount), self.prune, self.start)

    @property
    def trains(self) -> bool:
        """Whether the cell has a WikiRef training job (data none: the encoder itself)."""
        return self.data != "none"


@dataclass(frozen=True, order=True)
class DucCell:
    train: str  # "all" or a year
    percent: int
    method: str

    def __post_init__(self) -> None:
        if self.method not in ("full", "subnet", "iterative", "none"):
            raise AblationError(f"method {self.method!r} not in full/subnet/iterative/none")
        if not (self.train == "all" or self.train == "none" or re.fullmatch(r"\d{4}", self.train)):
            raise AblationError(f"train {self.train!r} must be all, none or a year")
        if not 0 <= int(self.percent) <= 100:
            raise AblationError(f"percent {self.percent} is not in [0, 100]")
        if (self.method == "none") != (self.train == "none"):
            raise AblationError("method none (no fine-tuning) goes with train none, and only with it")

    @property
    def id(self) -> str:
        return "_".join(f"{k}~{v}" for k, v in zip(DUC_COLUMNS, self.row()))

    def row(self) -> tuple:
        return (self.train, int(self.percent), self.method)


def parse_aug(text: str) -> AugCell:
    f = grid_cell_fields(text, AUG_COLUMNS, AblationError)
    try:
        amount = float(f["amount"])
    except ValueError as exc:
        raise AblationError(f"cell {text!r}: amount {f['amount']!r} is not a number") from exc
    cell = AugCell(f["pooling"], f["data"], amount, f["prune"], f["start"])
    if cell.id != text:
        raise AblationError(f"cell {text!r} is not in canonical form ({cell.id})")
    return cell


def parse_duc(text: str) -> DucCell:
    f = grid_cell_fields(text, DUC_COLUMNS, AblationError)
    if not f["percent"].isdigit():
        raise AblationError(f"cell {text!r}: percent {f['percent']!r} is not an integer")
    cell = DucCell(f["train"], int(f["percent"]), f["method"])
    if cell.id != text:
        raise AblationError(f"cell {text!r} is not in canonical form ({cell.id})")
    return cell


# --------------------------------------------------------------------------- the plan


@dataclass
class Plan:
    """The cells of every analysis; ``aug_cells`` / ``duc_cells`` are deduplicated and sorted."""

    base: AugCell  # the full-data augmentation model (paper: Q-BERT + DA)
    no_aug: AugCell  # the encoder without augmentation
    test_year: int
    train_years: list[int]
    data_size: list[tuple[float, AugCell, DucCell]]
    quality: list[tuple[str, float, AugCell, DucCell]]
    pooling: list[tuple[str, AugCell, DucCell]]
    subnetwork: list[tuple[str, AugCell, DucCell]]
    duc_size: dict[str, list[tuple[int, AugCell, DucCell]]]  # "da" / "bert" curves
    duc_lines: dict[str, tuple[AugCell, DucCell]]  # horizontal reference lines of Fig. 4

    def pairs(self) -> list[tuple[AugCell, DucCell]]:
        out = [(a, d) for _, a, d in self.data_size]
        out += [(a, d) for _, _, a, d in self.quality]
        out += [(a, d) for _, a, d in self.pooling]
        out += [(a, d) for _, a, d in self.subnetwork]
        out += [(a, d) for cells in self.duc_size.values() for _, a, d in cells]
        out += list(self.duc_lines.values())
        if self.quality:  # Fig. 6's full-data line
            out.append((self.base, DucCell("all", 100, "full")))
        return sorted(set(out))

    @property
    def aug_cells(self) -> list[AugCell]:
        """Augmentation cells with a WikiRef job (incl. the start models of the iterative ones)."""
        cells = {a for a, _ in self.pairs() if a.trains}
        if any(a.start == "da" for a in cells):
            cells.add(self.base)
        return sorted(cells)

    @property
    def wikiref_cells(self) -> list[AugCell]:
        """Cells whose WikiRef scores are reported (Figs. 5-6, Table VIII)."""
        cells = {a for _, a, _ in self.data_size} | {a for _, _, a, _ in self.quality} | {a for _, a, _ in self.pooling}
        if self.quality:
            cells.add(self.base)
        return sorted(cells)


def _year_label(y: int) -> str:
    return str(int(y))


def plan(params: Mapping) -> Plan:
    """The cells for the ``ablations`` section (and ``duc.years``); raises AblationError on nonsense."""
    ab = params["ablations"]
    years = sorted(int(y) for y in params["duc"]["years"])
    test_year = int(ab["test_year"])
    if test_year not in years:
        raise AblationError(f"ablations.test_year {test_year} is not in duc.years {years}")
    train_years = [y for y in years if y != test_year]
    if not train_years:
        raise AblationError("the DUC ablations need at least one training year besides ablations.test_year")
    pool = ab["pooling"]
    base = AugCell(pool, "size", 1.0)
    no_aug = AugCell(pool, "none", 0.0)
    full = DucCell("all", 100, "full")

    data_size = [(float(f), AugCell(pool, "size", float(f)), full) for f in sorted(set(ab["data_fractions"]))]
    q = ab["quality"]
    if len(q["names"]) != len(q["starts"]):
        raise AblationError(f"ablations.quality: {len(q['starts'])} starts but {len(q['names'])} names")
    if any(s + q["window"] > 1.0 + 1e-9 for s in q["starts"]):
        raise AblationError("ablations.quality: every start + window must be <= 1")
    quality = [(str(n), float(s), AugCell(pool, "quality", float(s)), full) for s, n in zip(q["starts"], q["names"])]
    pooling = [(POOLING_LABELS[p], AugCell(p, "size", 1.0), full) for p in ab["poolings"]]
    subnetwork = []
    for s in ab["subnetworks"]:
        if s == "none":
            subnetwork.append((s, base, full))
        elif s == "one_step_da":
            subnetwork.append((s, base, DucCell("all", 100, "subnet")))
        else:
            start = "encoder" if s == "iterative_encoder" else "da"
            subnetwork.append((s, AugCell(pool, "size", 1.0, "iterative", start), DucCell("all", 100, "iterative")))
    duc_size: dict[str, list] = {"da": [], "bert": []}
    for p in sorted(set(int(x) for x in ab["duc_percents"])):
        duc_size["da"].append((p, base, DucCell("all", p, "full")))
        duc_size["bert"].append((p, no_aug, DucCell("all", p, "full")))
    lines: dict[str, tuple[AugCell, DucCell]] = {}
    if ab["duc_single_years"] and len(train_years) > 1:
        for y in train_years:
            lines[f"{_year_label(y)} only"] = (no_aug, DucCell(_year_label(y), 100, "full"))
    if ab["duc_percents"]:
        lines["DA pre-trained"] = (base, DucCell("none", 0, "none"))
    return Plan(
        base=base,
        no_aug=no_aug,
        test_year=test_year,
        train_years=train_years,
        data_size=data_size,
        quality=quality,
        pooling=pooling,
        subnetwork=subnetwork,
        duc_size=duc_size,
        duc_lines=lines,
    )


def grids(params: Mapping) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two grids as DataFrames (one row per job) for Snakemake's ``Paramspace``:
    augmentation cells with a WikiRef job, and the (augmentation, DUC) pairs."""
    p = plan(params)
    aug = pd.DataFrame([a.row() for a in p.aug_cells], columns=list(AUG_COLUMNS))
    duc = pd.DataFrame([(a.id, *d.row()) for a, d in p.pairs()], columns=["aug", *DUC_COLUMNS])
    return aug, duc


def aug_path(cell: AugCell) -> str:
    """The folder of an augmentation cell's checkpoint."""
    return f"{layout.ABLATIONS_PRETRAIN_DIR}/{cell.id}"


def wikiref_metrics_path(cell: AugCell) -> str:
    return layout.ABLATIONS_WIKIREF_RESULT.format(aug=cell.id)


def duc_metrics_path(aug: AugCell, duc: DucCell) -> str:
    return layout.ABLATIONS_DUC_RESULT.format(aug=aug.id, duc=duc.id)


def pretrain_inputs(params: Mapping, aug: str) -> dict[str, str]:
    """Snakemake inputs of an augmentation job: the oracle splits (+ the DA model it starts from)."""
    cell = parse_aug(aug)
    out = {s: layout.ORACLE_FILE.format(split=s) for s in layout.SPLITS}
    if cell.start == "da":
        out["start"] = layout.ABLATIONS_MODEL.format(aug=AugCell(cell.pooling, "size", 1.0).id)
    return out


def finetune_inputs(params: Mapping, aug: str, duc: str) -> dict[str, Any]:
    """Snakemake inputs of a DUC job: every DUC year (+ the augmentation model unless data~none)."""
    cell = parse_aug(aug)
    parse_duc(duc)
    out: dict[str, Any] = {"duc": [layout.DUC_YEAR.format(year=y) for y in sorted(params["duc"]["years"])]}
    if cell.trains:
        out["model"] = layout.ABLATIONS_MODEL.format(aug=cell.id)
    return out


def all_outputs(params: Mapping) -> list[str]:
    """Every per-cell result file (the inputs of ``wikiref ablations collect``)."""
    p = plan(params)
    return sorted([wikiref_metrics_path(a) for a in p.aug_cells] + [duc_metrics_path(a, d) for a, d in p.pairs()])


# --------------------------------------------------------------------------- per-run parameters


def effective_params(params: Mapping) -> dict:
    """``params`` with the ``ablations.budget`` overrides applied to model / pretrain / finetune
    (null = keep) and the pre-training head/caps of the ablations; the input of every cell job."""
    p = copy.deepcopy(dict(params))
    b = p["ablations"]["budget"]
    for key in ("max_length", "stride", "max_query_tokens"):
        if b[key] is not None:
            p["model"][key] = b[key]
    if b["pretrain_epochs"] is not None:
        p["pretrain"]["epochs"] = b["pretrain_epochs"]
    if b["finetune_epochs"] is not None:
        p["finetune"]["epochs"] = b["finetune_epochs"]
    if b["duc_doc_sentences"] is not None:
        p["finetune"]["max_doc_sentences"] = b["duc_doc_sentences"]
    if b["duc_train_clusters"] is not None:  # the clusters per training year that make 100% (Fig. 4)
        p["finetune"]["max_train_clusters"] = b["duc_train_clusters"]
    # The pool the grids draw from and the WikiRef dev/test examples scored (null = all).
    p["pretrain"]["max_train_examples"] = b["train_pool"]
    p["pretrain"]["max_eval_examples"] = b["eval_examples"]
    # Dozens of fine-tuned copies are never needed again: only their scores are kept.
    if "keep_models" in p["finetune"]:
        p["finetune"]["keep_models"] = False
    if p["model"]["stride"] > p["model"]["max_length"]:
        raise AblationError(f"ablations: stride {p['model']['stride']} > max_length {p['model']['max_length']}")
    return p


# What a cell job receives in place of the Table IV variants / Table VI settings (it replaces them with
# its own), so that editing those lists does not rerun every ablation cell.
_PLACEHOLDER_VARIANT = {
    "name": "ablation",
    "label": "ablation",
    "head": "regression",
    "pooling": "query",
    "query": True,
    "init": "pretrained",
}
_PLACEHOLDER_SETTING = {
    "name": "ablation",
    "label": "ablation",
    "init": "encoder",
    "pooling": "query",
    "method": "full",
}


def cell_param_replacements() -> dict[str, Any]:
    """What the cell rules pass in place of the configured values (``replace=`` of
    :func:`wikiref.config.job_params`): only what a cell's result depends on stays.

    The grid lists of ``ablations`` (which cells exist), ``pretrain.variants`` and ``finetune.settings``
    (replaced inside each job) are emptied or replaced by a placeholder, so adding a grid point or a
    Table IV/VI system reruns only the new cells (Snakemake's params trigger) - not every finished one."""
    return {
        "ablations.data_fractions": [],
        "ablations.poolings": [],
        "ablations.subnetworks": [],
        "ablations.duc_percents": [],
        "ablations.duc_single_years": False,
        "ablations.quality.starts": [],
        "ablations.quality.names": [],
        "pretrain.variants": [dict(_PLACEHOLDER_VARIANT)],
        "finetune.settings": [dict(_PLACEHOLDER_SETTING)],
    }


def cell_params_json(params: Mapping) -> str:
    """``--params-json`` of the cell jobs (what the rules pass): the keys of the registry's
    ``("ablations", "cell")`` job with :func:`cell_param_replacements`."""
    return job_params(params, *job_keys("ablations", "cell"), replace=cell_param_replacements())


def variant_spec(cell: AugCell, head: str) -> dict:
    """A ``pretrain.variants`` entry for an augmentation cell (its name is the cell id)."""
    return {
        "name": cell.id,
        "label": POOLING_LABELS[cell.pooling],
        "head": head,
        "pooling": cell.pooling,
        "query": True,
        "init": "pretrained",
    }


# --------------------------------------------------------------------------- WikiRef subsets


def training_subset(pool: pd.DataFrame, cell: AugCell, window: float, seed: int) -> tuple[pd.DataFrame, dict]:
    """The rows of the training pool an augmentation cell trains on, and a description.

    ``size``: the first round(amount x n) rows of a seeded permutation of the pool (so 25% is inside
    50% is inside 100%); ``quality``: the pool sorted by ``oracle_score`` ascending (ties by id), the
    round(window x n) rows starting at floor(amount x n) - the paper's "half of the data with a step
    of 10%". Rows come back in id order.
    """
    pool = pool.sort_values("id", kind="stable").reset_index(drop=True)
    n = len(pool)
    if n == 0:
        raise AblationError("the WikiRef training pool is empty")
    if cell.data == "size":
        k = max(1, int(math.floor(cell.amount * n + 0.5)))
        order = np.random.default_rng(seed).permutation(n)
        chosen = np.sort(order[:k])
        info = {"kind": "size", "fraction": cell.amount}
    elif cell.data == "quality":
        k = max(1, int(math.floor(window * n + 0.5)))
        ranked = pool.assign(_pos=np.arange(n)).sort_values(["oracle_score", "id"], kind="stable")
        by_quality = ranked["_pos"].to_numpy()
        start = min(int(math.floor(cell.amount * n + 1e-9)), n - k)
        chosen = np.sort(by_quality[start : start + k])
        scores = pool["oracle_score"].to_numpy(dtype=float)[chosen]
        info = {
            "kind": "quality",
            "start": cell.amount,
            "window": window,
            "start_row": start,
            "oracle_score_min": float(scores.min()),
            "oracle_score_max": float(scores.max()),
            "oracle_score_mean": float(scores.mean()),
        }
    else:
        raise AblationError(f"cell {cell.id} has no WikiRef training data")
    sub = pool.iloc[chosen].reset_index(drop=True)
    info.update(pool=n, examples=len(sub))
    return sub, info


def cap_doc_sentences(df: pd.DataFrame, n: int | None) -> tuple[pd.DataFrame, int]:
    """Training documents cut to their first ``n`` sentences (labels, scores and oracle indices with
    them); returns the frame and the number of sentences cut. ``None`` = unchanged."""
    if n is None:
        return df, 0
    df = df.copy()
    cut = int(sum(max(0, len(d) - n) for d in df["doc_sentences"]))
    for col in ("doc_sentences", "oracle_labels", "oracle_scores"):
        df[col] = [list(v)[:n] for v in df[col]]
    df["oracle_indices"] = [[int(i) for i in v if int(i) < n] for v in df["oracle_indices"]]
    return df, cut


# --------------------------------------------------------------------------- jobs


def _cell(parse: Callable[[str], Any], cell: Any) -> Any:
    return parse(cell) if isinstance(cell, str) else cell


def pretrain_cell(
    params: Mapping, inputs: Mapping, outputs: Mapping, *, aug: str | AugCell, progress: bool = False
) -> dict:
    """One augmentation cell: train on its WikiRef subset and score it on WikiRef dev/test; or, for
    ``prune: iterative``, run :func:`wikiref.glue.duc.prune` from the encoder / DA model.

    inputs: ``train``, ``dev``, ``test`` (oracle splits), ``pretrain_root`` (the folder of the
    augmentation checkpoints: a cell that starts from the DA model finds it there); outputs:
    ``model_dir`` (the checkpoint), ``result`` (the cell's JSON). Returns the result."""
    import torch

    from wikiref.files import write_json
    from wikiref.glue import oracle as pretrain
    from wikiref.model import build_scorer
    from wikiref.model.training import TrainSettings, train

    cell = _cell(parse_aug, aug)
    model_dir = outputs["model_dir"]
    run_params = effective_params(params)
    ablation_params, seed = run_params["ablations"], run_params["seed"]
    spec = variant_spec(cell, ablation_params["head"])
    run_params["pretrain"]["variants"] = [spec]
    out: dict[str, Any] = {
        "cell": cell.id,
        "pooling": cell.pooling,
        "data": cell.data,
        "amount": cell.amount,
        "prune": cell.prune,
        "start": cell.start,
        "head": ablation_params["head"],
        "encoder": run_params["model"]["encoder"],
    }
    if not cell.trains:
        raise AblationError(f"{cell.id}: no augmentation, nothing to train")
    if cell.prune == "iterative":
        from wikiref.glue import duc as finetune

        setting = {"name": "ablation", "label": "iterative", "method": "iterative"}
        if cell.start == "encoder":
            setting.update(init="encoder", pooling=cell.pooling)
        else:
            base = AugCell(cell.pooling, "size", 1.0)
            setting.update(init="pretrained", variant=base.id)
            run_params["pretrain"]["variants"] = [variant_spec(base, ablation_params["head"])]
        run_params["finetune"]["settings"] = [setting]
        root = inputs.get("pretrain_root", layout.ABLATIONS_PRETRAIN_DIR)
        prune_inputs = {
            "train": inputs["train"],
            "dev": inputs["dev"],
            "pretrain_dir": root,
            "pretrain_metrics_dir": root,
        }
        out["pruning"] = finetune.prune(
            run_params, prune_inputs, {"dir": model_dir}, setting="ablation", progress=progress
        )
        write_json(outputs["result"], out)
        return out
    train_all, counts = pretrain.read_split(inputs["train"], None, seed)
    pool = pretrain.cap_rows(train_all, run_params["pretrain"]["max_train_examples"], seed)
    train_df, subset = training_subset(pool, cell, ablation_params["quality"]["window"], seed)
    train_df, subset["sentences_cut"] = cap_doc_sentences(train_df, ablation_params["budget"]["wikiref_doc_sentences"])
    dev_df, _ = pretrain.read_split(inputs["dev"], run_params["pretrain"]["max_eval_examples"], seed)
    torch.manual_seed(seed)
    model, tok = build_scorer(pretrain.scorer_config(run_params["model"], spec))
    log.info("%s: training on %d WikiRef examples (%s)", cell.id, len(train_df), subset)
    result = train(
        model,
        tok,
        pretrain.to_examples(train_df, spec["head"]),
        pretrain.to_examples(dev_df, spec["head"]),
        TrainSettings.from_params(seed, run_params["model"], run_params["pretrain"], progress),
        model_dir,
        select_fn=pretrain.dev_rouge2_fn(dev_df, run_params["pretrain"]),
    )
    # The best epoch's dev scores are reused (scoring dev again would cost as much as the training).
    metrics = pretrain.evaluate_variant(run_params, cell.id, model_dir, inputs, dev_scores=result.best_dev_scores)
    out.update(
        subset=subset,
        train_rows=counts,
        wikiref={
            split: {k: metrics[split][k] for k in ("rouge1", "rouge2", "rougeL", "examples", "mean_sentences")}
            for split in ("dev", "test")
        },
        threshold=metrics["threshold"],
        training={
            "best_epoch": result.best_epoch,
            "train_seconds": result.train_seconds,
            "windows": result.pack_stats.get("windows"),
            "windows_per_second": result.windows_per_second,
        },
    )
    write_json(outputs["result"], out)
    return out


def duc_setting(aug: AugCell, duc: DucCell) -> dict:
    """The ``finetune.settings`` entry of a DUC cell."""
    if not aug.trains:
        if duc.method != "full":
            raise AblationError(f"{aug.id}/{duc.id}: without augmentation only full fine-tuning is defined")
        da, start = "(no DA)", {"init": "encoder", "pooling": aug.pooling}
    else:
        if duc.method == "iterative" and aug.prune != "iterative":
            raise AblationError(f"{aug.id}/{duc.id}: method iterative needs a pruned augmentation cell")
        if aug.prune == "iterative" and duc.method != "iterative":
            raise AblationError(f"{aug.id}/{duc.id}: a pruned augmentation cell is fine-tuned with method iterative")
        da, start = "+ DA", {"init": "pretrained", "variant": aug.id}
    return {"name": "ablation", "label": f"{POOLING_LABELS[aug.pooling]} {da}", **start, "method": duc.method}


def clusters_for_percent(n_clusters: Mapping[int, int], percent: int, cap: int | None) -> int | None:
    """``finetune.max_train_clusters`` for a percentage of each training year's clusters (at least 1;
    None = all). ``cap`` is the fine-tuning section's own cap (the 100% point)."""
    if percent >= 100:
        return cap
    most = max(n_clusters.values())
    base = most if cap is None else min(cap, most)
    return max(1, int(math.floor(percent / 100.0 * base + 0.5)))


def finetune_cell(
    params: Mapping,
    inputs: Mapping,
    outputs: Mapping,
    *,
    aug: str | AugCell,
    duc: str | DucCell,
    progress: bool = False,
) -> dict:
    """One DUC cell: fine-tune (or just apply) the augmentation model with
    :func:`wikiref.glue.duc.train_and_test` and test on the held-out year.

    inputs: ``years`` (DUC year -> its ``data/duc/<year>.parquet``; the cell reads the ones it needs),
    ``pretrain_root`` (the folder of the augmentation checkpoints); outputs: ``work_dir`` (the
    fine-tuning folder; the weights are not kept), ``result`` (the cell's JSON: ROUGE recall x 100).
    Returns the result."""
    from wikiref.files import write_json
    from wikiref.glue import duc as finetune

    aug, duc = _cell(parse_aug, aug), _cell(parse_duc, duc)
    pretrain_root = inputs.get("pretrain_root", layout.ABLATIONS_PRETRAIN_DIR)
    run_params = effective_params(params)
    ablation_params = run_params["ablations"]
    planned = plan(run_params)
    setting = duc_setting(aug, duc)
    run_params["finetune"]["settings"] = [setting]
    if aug.trains:
        run_params["pretrain"]["variants"] = [variant_spec(aug, ablation_params["head"])]
    if duc.train == "all":
        train_years = planned.train_years
    elif duc.train == "none":
        train_years = []
    else:
        train_years = [int(duc.train)]
        if train_years[0] not in planned.train_years:
            raise AblationError(f"{duc.id}: {duc.train} is not a training year ({planned.train_years})")
    years = sorted((train_years or planned.train_years) + [planned.test_year])
    paths = {y: inputs["years"].get(y) for y in years}
    missing = [str(path or y) for y, path in paths.items() if path is None or not Path(path).exists()]
    if missing:
        raise AblationError(f"missing DUC files {missing}: run `wikiref duc prepare` first")
    n_clusters = {y: int(finetune.load_year(paths[y])["topic"].nunique()) for y in train_years}
    cap = run_params["finetune"]["max_train_clusters"]
    if train_years:
        run_params["finetune"]["max_train_clusters"] = clusters_for_percent(n_clusters, duc.percent, cap)
    prune_dir = Path(pretrain_root) / aug.id if duc.method == "iterative" else None
    metrics, _, _ = finetune.train_and_test(
        run_params,
        "ablation",
        planned.test_year,
        paths,
        outputs["work_dir"],
        pretrain_dir=pretrain_root,
        metrics_dir=pretrain_root,
        prune_dir=prune_dir,
        progress=progress,
    )
    test = metrics["test"]
    result = {
        "aug": aug.id,
        "duc_cell": duc.id,
        "train": duc.train,
        "percent": duc.percent,
        "method": duc.method,
        "test_year": planned.test_year,
        "train_years": train_years,
        "train_clusters": len(metrics.get("train_clusters", [])),
        "dev_clusters": len(metrics.get("dev_clusters", [])),
        "clusters_per_year_cap": run_params["finetune"]["max_train_clusters"] if train_years else None,
        "duc": finetune.recall_x100(test),
        "duc_ci": {m: [round(100.0 * float(x), 4) for x in test[m]["R_ci"]] for m in MEASURES},
        "test_topics": metrics["test_topics"],
        "standin": metrics["standin"],
        "seconds": metrics["seconds"],
        "subnet": metrics.get("subnet") or {},
        "start": metrics.get("start", {}),
        "best_epoch": (metrics.get("training") or {}).get("best_epoch"),
    }
    write_json(outputs["result"], result)
    return result


# --------------------------------------------------------------------------- collect


def assemble(params: Mapping, read: Callable[[str], Mapping]) -> dict:
    """All cells -> the ``results/metrics/ablations.json`` structure (``read(path)`` -> the cell JSON).

    ``wikiref`` metrics are WikiRef *test* ROUGE F1 x 100 (dev threshold); ``duc`` metrics are DUC
    ``test_year`` ROUGE recall x 100 (official scorer)."""
    run_params = effective_params(params)
    planned = plan(run_params)
    ablation_params = run_params["ablations"]

    def wiki(cell: AugCell) -> dict:
        m = read(wikiref_metrics_path(cell))
        return {
            "rouge1": m["wikiref"]["test"]["rouge1"],
            "rouge2": m["wikiref"]["test"]["rouge2"],
            "rougeL": m["wikiref"]["test"]["rougeL"],
            "train_examples": m["subset"]["examples"],
            **(
                {"oracle_score_range": [m["subset"]["oracle_score_min"], m["subset"]["oracle_score_max"]]}
                if m["subset"]["kind"] == "quality"
                else {}
            ),
        }

    def duc(a: AugCell, d: DucCell) -> dict:
        m = read(duc_metrics_path(a, d))
        return {"duc": m["duc"], "train_clusters": m["train_clusters"], "seconds": m["seconds"]}

    model, pre, tuning = run_params["model"], run_params["pretrain"], run_params["finetune"]
    out: dict[str, Any] = {
        "profile": run_params["profile"]["name"],
        "standin": bool(run_params["profile"].get("standin")),
        "duc_standin": bool(run_params["duc"]["standin"]),
        "encoder": model["encoder"],
        "head": ablation_params["head"],
        "base_pooling": ablation_params["pooling"],
        "test_year": planned.test_year,
        "train_years": planned.train_years,
        "budget": {
            "max_length": model["max_length"],
            "stride": model["stride"],
            "max_query_tokens": model["max_query_tokens"],
            "pretrain_epochs": pre["epochs"],
            "finetune_epochs": tuning["epochs"],
            "train_pool": pre["max_train_examples"],
            "eval_examples": pre["max_eval_examples"],
            "wikiref_doc_sentences": ablation_params["budget"]["wikiref_doc_sentences"],
            "duc_doc_sentences": tuning.get("max_doc_sentences"),
            "duc_train_clusters": tuning.get("max_train_clusters"),
        },
    }
    out["data_size"] = {"points": [{"fraction": f, "wikiref": wiki(a), **duc(a, d)} for f, a, d in planned.data_size]}
    out["quality"] = {
        "window": ablation_params["quality"]["window"],
        "points": [{"name": n, "start": s, "wikiref": wiki(a), **duc(a, d)} for n, s, a, d in planned.quality],
        "full": (
            {"wikiref": wiki(planned.base), **duc(planned.base, DucCell("all", 100, "full"))}
            if planned.quality
            else None
        ),
    }
    out["pooling"] = {
        "rows": [{"pooling": a.pooling, "label": lab, "wikiref": wiki(a), **duc(a, d)} for lab, a, d in planned.pooling]
    }
    rows = []
    for key, a, d in planned.subnetwork:
        m = read(duc_metrics_path(a, d))
        rows.append(
            {
                "method": "one_step" if key == "one_step_da" else key.split("_")[0],
                "key": key,
                "method_label": SUBNET_ROWS[key][0],
                "init_label": SUBNET_ROWS[key][1],
                "duc": m["duc"],
                "subnet": m.get("subnet") or {},
                "seconds": m["seconds"],
            }
        )
    out["subnetwork"] = {"rows": rows}
    out["duc_size"] = {
        "curves": {k: [{"percent": pc, **duc(a, d)} for pc, a, d in v] for k, v in planned.duc_size.items()},
        "lines": {k: duc(a, d) for k, (a, d) in planned.duc_lines.items()},
    }
    seconds = [read(duc_metrics_path(a, d))["seconds"] for a, d in planned.pairs()]
    out["cells"] = {
        "augmentation": len(planned.aug_cells),
        "duc": len(planned.pairs()),
        "duc_seconds_total": round(float(sum(seconds)), 1),
    }
    return out


def collect(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """Every cell's result -> ``results/metrics/ablations.json`` (:func:`assemble`). inputs:
    ``results_root`` (the folder the cell result paths are relative to); outputs: ``metrics``. Returns
    the collected structure."""
    from wikiref.files import read_json, write_json

    root = Path(inputs["results_root"])

    def read(path: str) -> Mapping:
        if not (root / path).exists():
            raise AblationError(f"missing cell result {root / path}: run its ablations job first")
        return read_json(root / path)

    out = assemble(params, read)
    write_json(outputs["metrics"], out)
    return out


def plan_lines(params: Mapping) -> list[str]:
    """The jobs of the current parameters, one line each: ``pretrain <aug>`` / ``finetune <aug>/<duc>``."""
    pl = plan(params)
    return [f"pretrain {cell.id}" for cell in pl.aug_cells] + [f"finetune {a.id}/{d.id}" for a, d in pl.pairs()]
