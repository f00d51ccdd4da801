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
  (:func:`wikiref.supervised.labels.example_oracle_table`), ``data/compare/oracle/<source>/<split>.parquet``;
* :func:`pretrain` - per cell: extractive pre-training (the ``pretrain`` section's training settings,
  ``compare.head`` / ``compare.pooling``, documents packed with their boundaries), epoch chosen on the
  source's dev ROUGE-2 (threshold searched);
* :func:`duc` - per cell: DA PRE-TRAINED transfer (no fine-tuning) on every DUC year, and held-out-year
  fine-tuning (:func:`wikiref.supervised.duc_finetune.train_and_test`, the ``finetune`` section): DUC ROUGE-1/2/SU4
  recall with the official flags (``duc.rouge_flags``);
* :func:`qmsum` - per cell: transfer and fine-tuning on QMSum (``qmsum`` section: word budget, official
  ROUGE-1/2/L F1 with ``qmsum.rouge_flags``), for each of ``compare.qmsum.settings``;
* :func:`table` - every cell -> the comparison table, ``results/metrics/compare.json`` and the
  "which source for which benchmark" findings (computed from the numbers; the report shows them).

``compare.budget`` shrinks windows, document sizes and DUC/QMSum training for these runs only
(null = the ``model`` / ``finetune`` value, or no cap), so the sample grid fits its time budget.

The package, by responsibility (every public name is re-exported here, the CLI, the rules file and the
registry use this module):

* :mod:`.plan`: the names, the cells (extractive and abstractive), the grids and every job's files (light);
* :mod:`.runparams`: the parameters a job runs with (``compare.budget`` overrides, the cell's own variant and
  fine-tuning setting, an abstractive cell's model);
* :mod:`.data`: the oracle job and a cell's training rows under its budget;
* :mod:`.extractive`: the extractive cells' jobs ``pretrain``, ``duc``, ``qmsum``;
* :mod:`.abstractive_job`: the abstractive cells' job ``abstractive``;
* :mod:`.assembly`: the ``table`` job (rows from the cell results), with the findings of :mod:`.ranking`.
"""

from __future__ import annotations

from wikiref.stages.compare.abstractive_job import abstractive, oracle_item, qmsum_items
from wikiref.stages.compare.assembly import assemble, table, table_notes
from wikiref.stages.compare.data import (
    cap_documents,
    equal_examples,
    oracle,
    read_oracle,
    seeded_subset,
    shares,
    training_data,
)
from wikiref.stages.compare.extractive import duc, duc_years, pretrain, qmsum
from wikiref.stages.compare.plan import (
    ABSTRACTIVE_CELL_REGEX,
    ABSTRACTIVE_COLUMNS,
    ABSTRACTIVE_MODE,
    BUDGETS,
    CELL_COLUMNS,
    CELL_REGEX,
    DUC_MEASURES,
    EXTRACTIVE,
    EXTRACTIVE_LABEL,
    MODE_LABELS,
    MODES,
    NO_AUGMENTATION,
    NONE,
    QMSUM_METRICS,
    QMSUM_R2_CI,
    SOURCE_LABELS,
    SOURCES,
    UNION,
    AbstractiveCell,
    Cell,
    CompareError,
    abstractive_cells,
    abstractive_grid,
    abstractive_input_keys,
    abstractive_inputs,
    abstractive_models,
    abstractive_result_files,
    cells,
    compared_sources,
    duc_r2_ci,
    grid,
    members,
    model_dir,
    model_dir_of,
    oracle_files,
    parse_abstractive_cell,
    parse_cell,
    pretrain_input_keys,
    pretrain_inputs,
    result_files,
    start_files,
    start_inputs,
    training_cells,
    union_members,
)
from wikiref.stages.compare.ranking import finding_text, findings
from wikiref.stages.compare.runparams import (
    abstractive_only,
    effective_params,
    start_setting,
    variant_spec,
)

__all__ = [
    "ABSTRACTIVE_CELL_REGEX",
    "ABSTRACTIVE_COLUMNS",
    "ABSTRACTIVE_MODE",
    "BUDGETS",
    "CELL_COLUMNS",
    "CELL_REGEX",
    "DUC_MEASURES",
    "EXTRACTIVE",
    "EXTRACTIVE_LABEL",
    "MODE_LABELS",
    "MODES",
    "NO_AUGMENTATION",
    "NONE",
    "QMSUM_METRICS",
    "QMSUM_R2_CI",
    "SOURCE_LABELS",
    "SOURCES",
    "UNION",
    "AbstractiveCell",
    "Cell",
    "CompareError",
    "abstractive_cells",
    "abstractive_grid",
    "abstractive_input_keys",
    "abstractive_inputs",
    "abstractive_models",
    "abstractive_result_files",
    "cells",
    "compared_sources",
    "duc_r2_ci",
    "grid",
    "members",
    "model_dir",
    "model_dir_of",
    "oracle_files",
    "parse_abstractive_cell",
    "parse_cell",
    "pretrain_input_keys",
    "pretrain_inputs",
    "result_files",
    "start_inputs",
    "start_files",
    "training_cells",
    "union_members",
    "abstractive_only",
    "effective_params",
    "start_setting",
    "variant_spec",
    "cap_documents",
    "equal_examples",
    "oracle",
    "read_oracle",
    "seeded_subset",
    "shares",
    "training_data",
    "duc",
    "duc_years",
    "pretrain",
    "qmsum",
    "abstractive",
    "oracle_item",
    "qmsum_items",
    "assemble",
    "table",
    "table_notes",
    "finding_text",
    "findings",
]
