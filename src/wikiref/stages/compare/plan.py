"""The comparison's plan: its names, its cells and the files each job reads and writes.

The extractive cells :class:`Cell` (``source~S_budget~B``) and the abstractive cells :class:`AbstractiveCell`
(``model~M_source~S_budget~B``), parsed from and written as Snakemake ``Paramspace`` ids; the grids the rules
file expands; every job's input and output paths. Light (no torch, no model): the rules file and the registry
import it through :mod:`wikiref.stages.compare`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from wikiref import layout
from wikiref.config import grid_cell_fields
from wikiref.schemas import SOURCE_NAMES

UNION = "union"
NONE = "none"
SOURCES = (*SOURCE_NAMES, UNION)
BUDGETS = ("equal", "natural")
CELL_COLUMNS = ("source", "budget")
CELL_REGEX = r"source~[a-z0-9]+_budget~[a-z]+"
MODES = ("finetuned", "ltr", "transfer")  # each benchmark's switches: compare.duc / compare.qmsum
QMSUM_R2_CI = "qmsum_r2_f1_ci"  # a row field, not a printed column
MODE_LABELS = {
    "finetuned": "fine-tuned",
    "ltr": "learning to rank, the scorer's scores a signal",
    "transfer": "DA PRE-TRAINED (no fine-tuning)",
}
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


def duc_r2_ci(year: int) -> str:
    """The row field of a year's bootstrap 95% interval of R-2 recall (not a printed column)."""
    return f"duc_{year}_r2_recall_ci"


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


def oracle_files(source: str, root: str | Path) -> dict[str, str]:
    """A source's oracle splits in ``root`` (the workflow's: :data:`wikiref.layout.COMPARE_ORACLE_DIR`)."""
    template = layout.COMPARE_ORACLE_FILE.replace(layout.COMPARE_ORACLE_DIR, str(root), 1)
    return {s: template.format(source=source, split=s) for s in layout.SPLITS}


def pretrain_input_keys(params: Mapping, cell: str) -> dict[str, list[str]]:
    """The sources whose oracle files a pre-training cell reads, by role: ``train`` and ``dev`` (its members);
    ``sizes`` (an equal-budget cell with ``examples: null`` also reads every other compared source's train
    file: the smallest sets N)."""
    c = parse_cell(cell)
    srcs = members(params, c)
    size_from = (
        compared_sources(params) if c.budget == "equal" and params["compare"]["equal"]["examples"] is None else []
    )
    return {"train": list(srcs), "dev": list(srcs), "sizes": [s for s in size_from if s not in srcs]}


def pretrain_inputs(params: Mapping, cell: str, root: str | Path) -> dict[str, list[str]]:
    """Inputs of a pre-training cell (:func:`pretrain_input_keys`): the sources' oracle files in ``root``
    (:func:`oracle_files`)."""
    split = {"train": "train", "dev": "dev", "sizes": "train"}
    return {
        role: [oracle_files(s, root)[split[role]] for s in srcs]
        for role, srcs in pretrain_input_keys(params, cell).items()
    }


def model_dir(cell: str | Cell) -> str:
    return layout.COMPARE_MODEL_DIR.format(cell=_cell(cell).id)


def model_dir_of(cell_id: str) -> str:
    """The checkpoint folder of any cell id (extractive or abstractive)."""
    return layout.COMPARE_MODEL_DIR.format(cell=cell_id)


def start_inputs(cell: str) -> list[str]:
    """The checkpoint a DUC / QMSum job starts from (none for the encoder-only row)."""
    c = parse_cell(cell)
    if not c.trains:
        return []
    return [*start_files(c, layout.COMPARE_MODELS_DIR), layout.COMPARE_PRETRAIN_RESULT.format(cell=c.id)]


def start_files(cell: str | Cell, models_root: str | Path) -> list[str]:
    """The checkpoint files of a cell's model in ``models_root``/<cell>/ (none for the encoder-only row)."""
    c = _cell(cell)
    return layout.checkpoint_files(f"{models_root}/{c.id}") if c.trains else []


def result_files(params: Mapping) -> dict[str, list[str]]:
    """Every cell result, by kind (the inputs of ``wikiref compare table``)."""
    train = training_cells(params)
    return {
        "pretrain": [layout.COMPARE_PRETRAIN_RESULT.format(cell=c.id) for c in train],
        "duc": [layout.COMPARE_DUC_RESULT.format(cell=c.id) for c in cells(params)],
        "qmsum": [layout.COMPARE_QMSUM_RESULT.format(cell=c.id) for c in cells(params)],
        "abstractive": abstractive_result_files(params),
    }


# --------------------------------------------------------------------------- the abstractive model axis
# An abstractive cell trains one of ``compare.abstractive.models`` (an ``abstractive.runs``-shaped entry:
# family, config overrides, decode overrides; sizes and training settings from the ``abstractive`` section) on
# exactly the training examples of the extractive cell with the same source and budget (the same oracle rows,
# seeded subset and document caps of :func:`wikiref.stages.compare.data.training_data`; the summary = the
# oracle's reference statement), and is tested without fine-tuning (transfer) on DUC and on QMSum
# (:mod:`wikiref.stages.compare.abstractive_job`).

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


def abstractive_input_keys(params: Mapping, cell: str) -> dict[str, list]:
    """The keys of an abstractive cell's inputs by role: its extractive cell's (:func:`pretrain_input_keys`),
    the DUC years (``years``) and the QMSum test split (``qmsum_test``)."""
    c = parse_abstractive_cell(cell)
    return {
        **pretrain_input_keys(params, c.cell.id),
        "years": sorted(int(y) for y in params["duc"]["years"]),
        "qmsum_test": ["test"],
    }


def abstractive_inputs(params: Mapping, cell: str, root: str | Path) -> dict[str, list[str]]:
    """The extractive cell's training inputs (:func:`pretrain_inputs`, oracle splits in ``root``), the DUC years
    and the QMSum test split (:func:`abstractive_input_keys`)."""
    c = parse_abstractive_cell(cell)
    keys = abstractive_input_keys(params, cell)
    return {
        **pretrain_inputs(params, c.cell.id, root),
        "years": [layout.DUC_YEAR.format(year=y) for y in keys["years"]],
        "qmsum_test": [layout.QMSUM_SPLIT.format(split=s) for s in keys["qmsum_test"]],
    }
