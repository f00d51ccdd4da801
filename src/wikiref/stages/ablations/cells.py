"""The ablation grids: the two kinds of cells, :func:`plan` (the cells each analysis needs), every cell's
files and the parameters a cell job runs with (``ablations.budget`` overrides, placeholders, the variant of a
cell's model). Light (no torch): the rules file and the registry import it through
:mod:`wikiref.stages.ablations`.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from wikiref import layout
from wikiref.config import grid_cell_fields, job_params
from wikiref.registry import job_keys

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


def start_files(aug: str | AugCell, pretrain_root: str | Path) -> list[str]:
    """The checkpoint files an augmentation cell starts from, in ``pretrain_root``/<cell>/: the DA model of
    its pooling (start~da); none for a cell that starts from the encoder."""
    cell = parse_aug(aug) if isinstance(aug, str) else aug
    if cell.start != "da":
        return []
    return layout.checkpoint_files(f"{pretrain_root}/{AugCell(cell.pooling, 'size', 1.0).id}")


def model_files(aug: str | AugCell, pretrain_root: str | Path) -> list[str]:
    """The checkpoint files of an augmentation cell's model in ``pretrain_root``/<cell>/ (what its DUC cells
    start from), with the masks and pruning record of a pruned cell; none for data~none."""
    cell = parse_aug(aug) if isinstance(aug, str) else aug
    if not cell.trains:
        return []
    names = layout.CHECKPOINT_FILES + (layout.PRUNED_FILES if cell.prune == "iterative" else ())
    return layout.checkpoint_files(f"{pretrain_root}/{cell.id}", names)


def pretrain_inputs(params: Mapping, aug: str) -> dict[str, str | list[str]]:
    """Snakemake inputs of an augmentation job: the oracle splits (+ the DA model it starts from)."""
    cell = parse_aug(aug)
    out: dict[str, str | list[str]] = {s: layout.ORACLE_FILE.format(split=s) for s in layout.SPLITS}
    if cell.start == "da":
        out["start"] = start_files(cell, layout.ABLATIONS_PRETRAIN_DIR)
    return out


def finetune_inputs(params: Mapping, aug: str, duc: str) -> dict[str, Any]:
    """Snakemake inputs of a DUC job: every DUC year (+ the augmentation model unless data~none)."""
    cell = parse_aug(aug)
    parse_duc(duc)
    out: dict[str, Any] = {"duc": [layout.DUC_YEAR.format(year=y) for y in sorted(params["duc"]["years"])]}
    if cell.trains:
        out["model"] = model_files(cell, layout.ABLATIONS_PRETRAIN_DIR)
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
