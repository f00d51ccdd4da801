"""QMSum (Zhong et al., NAACL 2021, MIT licence): query-based meeting summarization. Modules:
:mod:`~wikiref.stages.qmsum.reader` (the published JSON-lines files -> meetings, counted drops -> rows of
:data:`wikiref.schemas.QMSUM`, the seeded meeting re-split of the sample), :mod:`~wikiref.stages.qmsum.standin`
(a STAND-IN file of synthetic meetings in the published format) and :mod:`~wikiref.extractive.meetings`
(LEAD, QUERY-SIM and ORACLE over a query's turns under a word budget)."""
