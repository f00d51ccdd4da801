"""QmdsIr (Pasunuru et al., AAAI 2021, §3.2): query-focused multi-document summarisation examples from
search results, built from MS MARCO QnA (the open substitute for the paper's private Bing logs) on the
common example schema. Modules: :mod:`~wikiref.stages.qmdsir.reader` (streaming MS MARCO v2.1 / v1.1
files), :mod:`~wikiref.stages.qmdsir.build` (record -> example or a counted drop),
:mod:`~wikiref.stages.qmdsir.standin` (STAND-IN MS MARCO files from the Wikipedia sample) and
:mod:`~wikiref.stages.qmdsir.stage` (the standin / part / merge jobs)."""
