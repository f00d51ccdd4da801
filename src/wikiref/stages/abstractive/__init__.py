"""Stage ``abstractive``: the abstractive models of Psg2Sum Table 4 (s2s, s2s+copy, PGN) and of QmdsCnnIr
Tables 3-5 (the Liu & Lapata hierarchical transformer and the HEROSumm ablations, DUC transfer), trained on the
common example files (``data/sources/<source>/<split>.parquet``) with :mod:`wikiref.model.abstractive`.

* :mod:`.runs`: one ``abstractive.runs`` entry -> its job's parameters, inputs, model and decoding settings
  (light: the rules file and the registry import it);
* :mod:`.stage`: the jobs, :func:`~.stage.run_train` (one per run) and :func:`~.stage.run_table`;
* :mod:`.tables`: the tables beside the papers' numbers.
"""
