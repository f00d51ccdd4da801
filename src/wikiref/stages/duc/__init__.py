"""Evaluation benchmarks: the NIST DUC 2005-2007 reader (:mod:`.duc`), its offline STAND-IN
(:mod:`.duc_standin`), the DUC summary assembly rule (:mod:`.duc_select`) and the DUC baselines
(:mod:`.duc_baselines`)."""
