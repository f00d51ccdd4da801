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
    (:func:`wikiref.supervised.duc_finetune.prune`), from ``start`` = ``encoder`` (BERT) or ``da`` (the
    full-data augmentation model, Table IX).

  It writes the checkpoint (``models/ablations/pretrain/{aug}/``) and WikiRef dev/test ROUGE F1.
* **DUC cells** (``{aug}/{duc}``, rule ``ablations_finetune``): fine-tune the augmentation model (or
  the encoder) on DUC and test on ``ablations.test_year``; ``duc`` = ``train~T_percent~P_method~M``:
  ``train`` = ``all`` (the other years) or one year; ``percent`` of each training year's clusters;
  ``method`` = ``full`` | ``subnet`` (one-step ST) | ``iterative`` (the pruned subnetwork) | ``none``
  (DA PRE-TRAINED: no fine-tuning). :func:`wikiref.supervised.duc_finetune.train_and_test` does the work.

:func:`plan` lists the cells each analysis needs (shared cells run once: the full-data Q-BERT
augmentation model is the Fig. 5 100% point, the Fig. 6 full-data line, a Table VIII row, the Table IX
"None" row and the Fig. 4 +DA 100% point). :func:`assemble` puts the cells' results together into
``results/metrics/ablations.json``, which ``wikiref report`` turns into the tables and figures.

The jobs of the stage (``wikiref ablations <job>``), each ``job(params, inputs, outputs, **options) ->
dict`` writing its outputs itself: :func:`pretrain_cell`, :func:`finetune_cell` and :func:`collect`.

The ``ablations.budget`` parameters shrink windows, epochs, example counts and training-document
lengths for these runs only (null = the ``model`` / ``pretrain`` / ``finetune`` value, or no cap), so
the sample grids finish in minutes.

The package: :mod:`.cells` (the cells, the plan, their files and per-run parameters; light) and :mod:`.jobs`
(the WikiRef subsets, the jobs, the collection); every public name is re-exported here.
"""

from __future__ import annotations

from wikiref.stages.ablations.cells import (
    AUG_COLUMNS,
    AUG_REGEX,
    DATA_KINDS,
    DUC_COLUMNS,
    DUC_REGEX,
    POOLING_LABELS,
    POOLINGS,
    SUBNET_ROWS,
    SUBNETWORKS,
    AblationError,
    AugCell,
    DucCell,
    Plan,
    all_outputs,
    aug_path,
    cell_param_replacements,
    cell_params_json,
    duc_metrics_path,
    effective_params,
    finetune_inputs,
    grids,
    model_files,
    parse_aug,
    parse_duc,
    plan,
    pretrain_inputs,
    start_files,
    variant_spec,
    wikiref_metrics_path,
)
from wikiref.stages.ablations.jobs import (
    assemble,
    cap_doc_sentences,
    clusters_for_percent,
    collect,
    duc_setting,
    finetune_cell,
    plan_lines,
    pretrain_cell,
    training_subset,
)
from wikiref.supervised.duc_finetune import MEASURES  # DUC cells are fine-tuning jobs: the same measures

__all__ = [
    "MEASURES",
    "AUG_COLUMNS",
    "DUC_COLUMNS",
    "POOLINGS",
    "DATA_KINDS",
    "SUBNETWORKS",
    "POOLING_LABELS",
    "SUBNET_ROWS",
    "AUG_REGEX",
    "DUC_REGEX",
    "AblationError",
    "AugCell",
    "DucCell",
    "parse_aug",
    "parse_duc",
    "Plan",
    "plan",
    "grids",
    "aug_path",
    "wikiref_metrics_path",
    "duc_metrics_path",
    "pretrain_inputs",
    "finetune_inputs",
    "start_files",
    "model_files",
    "all_outputs",
    "effective_params",
    "cell_param_replacements",
    "cell_params_json",
    "variant_spec",
    "training_subset",
    "cap_doc_sentences",
    "pretrain_cell",
    "duc_setting",
    "clusters_for_percent",
    "finetune_cell",
    "assemble",
    "collect",
    "plan_lines",
]
