"""The DUC stage: the NIST DUC 2005-2007 reader (:mod:`.reader`), its offline STAND-IN (:mod:`.standin`),
the DUC summary assembly rule (:mod:`.selection`), the DUC baselines (:mod:`.baselines`) and the
stage's jobs ``standin``, ``prepare`` and ``baselines`` (:mod:`.stage`)."""
