"""Supervised training and evaluation of the models on the stages' tables: the oracle labels of examples
(:mod:`.labels`), pre-training the sentence scorer on oracle tables (:mod:`.pretraining`), fine-tuning and
testing it on held-out DUC years (:mod:`.duc_finetune`) and on QMSum (:mod:`.qmsum_finetune`), and what an
abstractive run takes from params and tables (:mod:`.abstractive_runs`). A shared layer: stages import it,
it imports no stage.
"""
