"""What a dataset card says about each source that the data files cannot: who built it (stage, metrics file,
table), what an example is, the paper, and the terms of its inputs, real and STAND-IN."""

from __future__ import annotations

from dataclasses import dataclass

from wikiref import layout

WIKIPEDIA_TERMS = (
    "English Wikipedia text: CC BY-SA 4.0 (revisions from before mid-2023 were published under CC BY-SA 3.0 and "
    "the GFDL); reuse needs attribution to the articles' contributors and derived text under the same licence."
)
STANDIN_TERMS = (
    "The STAND-IN inputs of the {n} STAND-IN examples: built offline from an English Wikipedia sample (a dump "
    "fragment shipped in the gensim wheel), so their text is Wikipedia text: CC BY-SA 4.0, with attribution to the "
    "articles' contributors and derived text under the same licence."
)


@dataclass(frozen=True)
class SourceInfo:
    title: str
    stage: str  # the `wikiref` subcommand (and stage) that writes data/sources/<source>/
    metrics: str  # the stage's metrics JSON (sizes, counts, statistics, the STAND-IN flag)
    table: str  # stem of the stage's statistics table (its .md caption names the profile)
    about: str  # what one example is
    paper: str
    terms: tuple[str, ...]  # the terms of the real inputs
    wikipedia_only: bool = False  # the real inputs are Wikipedia text alone (licence: cc-by-sa-4.0)


# source: (title, stage, metrics, table): SourceInfo's first fields, one row each
BUILDS = {
    "wikiref": ("WikiRef", "split", layout.SPLIT_METRICS, layout.TABLE1),
    "qmdscnn": ("QmdsCnn", "qmdscnn", layout.QMDSCNN_METRICS, layout.QMDSCNN_TABLE),
    "qmdsir": ("QmdsIr", "qmdsir", layout.QMDSIR_METRICS, layout.QMDSIR_TABLE),
    "wcep": ("WCEP", "wcep", layout.WCEP_METRICS, layout.WCEP_TABLE3),
    "psg2sum": ("Psg2Sum", "psg2sum", layout.PSG2SUM_METRICS, layout.PSG2SUM_TABLE2),
}
# source: what one example is
ABOUT = {
    "wikiref": "One Wikipedia statement that cites a web page: the query is the article title and the section "
    "headings above the statement (one level each), the one `original` document is the cited page (its "
    "sentences), the summary is the statement's sentences.",
    "qmdscnn": "One CNN/DailyMail story: the query is its title, the documents are chunks of the story (`original`) "
    "and BM25-retrieved chunks of other stories (`retrieved`, with their BM25 score), the summary is its "
    "highlights.",
    "qmdsir": "One MS MARCO QnA query (the open substitute for the paper's Bing logs): the query is the search "
    "query, the documents are the other passages of its results, the summary is the passage that answers it.",
    "wcep": "One event of the Wikipedia Current Events Portal: the query is its category and story path, the "
    "summary is the event's portal text, the documents are the news articles it cites (`original`) and "
    "CC-NEWS articles the classifier assigned to it (`retrieved`, score = the classifier's probability).",
    "psg2sum": "One Wikipedia revision that added a lead sentence together with a body passage: the query is the "
    "article title and section, the one `original` document is the passage, the summary is the lead sentence.",
}
PAPERS = {
    "wikiref": "Zhu, Dong, Wei, Qin, Liu: *Transforming Wikipedia into Augmented Data for Query-Focused "
    "Summarization* (conference and journal versions)",
    "qmdscnn": "Pasunuru, Celikyilmaz, Galley, Xiong, Zhang, Bansal, Gao: *Data Augmentation for Abstractive "
    "Query-Focused Multi-Document Summarization* (AAAI 2021; QmdsCnnIr)",
    "qmdsir": "Pasunuru et al.: *Data Augmentation for Abstractive Query-Focused Multi-Document Summarization* "
    "(AAAI 2021; QmdsCnnIr)",
    "wcep": "Gholipour Ghalandari, Hokamp, Pham, Glover, Ifrim: *A Large-Scale Multi-Document Summarization "
    "Dataset from the Wikipedia Current Events Portal* (ACL 2020)",
    "psg2sum": "Zhou, Wei, Zhou: *Learning to Summarize Passages: Mining Passage-Summary Pairs from Wikipedia "
    "Revision Histories*",
}
# source: the terms of its real inputs
TERMS = {
    "wikiref": (
        f"Queries and summaries: {WIKIPEDIA_TERMS}",
        "Documents: the cited web pages, each under its publisher's own terms (most are copyrighted, not "
        "openly licensed): check the terms before redistributing them.",
    ),
    "qmdscnn": (
        "CNN/DailyMail stories (Hermann et al., 2015): news articles copyrighted by their publishers, "
        "distributed as a corpus for research: check the terms before redistributing them.",
    ),
    "qmdsir": (
        "MS MARCO QnA v2.1 (Microsoft): released for non-commercial research under the MS MARCO terms, which "
        "restrict redistribution; its passages come from web pages with their own terms: check the terms.",
    ),
    "wcep": (
        f"Queries and summaries (the portal): {WIKIPEDIA_TERMS}",
        "Documents: news articles (archived source pages; CC-NEWS from Common Crawl, whose terms of use "
        "apply too), each under its publisher's own terms: check the terms before redistributing them.",
    ),
    "psg2sum": (f"Queries, documents and summaries (page histories): {WIKIPEDIA_TERMS}",),
}
WIKIPEDIA_ONLY = frozenset({"psg2sum"})  # the sources whose real inputs are Wikipedia text alone

SOURCES: dict[str, SourceInfo] = {
    source: SourceInfo(*build, ABOUT[source], PAPERS[source], TERMS[source], source in WIKIPEDIA_ONLY)
    for source, build in BUILDS.items()
}

# What each column of the common example schema (wikiref.schemas.EXAMPLE) holds.
COLUMNS = {
    "id": "the example's id, `<source>:<source_id>` (unique; rows sorted by it)",
    "source": "the source's name",
    "split": "the split (train, dev or test)",
    "query": "the query: one string per level (e.g. article title, section headings)",
    "documents": "the input documents, in order: each an id, title, sentences, URL, origin (`original`: the "
    "example's own input; `retrieved`: added by retrieval) and score (retrieval score; null for the others)",
    "summary": "the reference summary, one string per sentence",
    "source_id": "the record's id in its corpus",
    "query_origin": "where the query comes from (wikipedia_headings, archived_title, url_path, search_query, "
    "portal_story)",
    "standin": "true when the example was built (partly) from stand-in inputs instead of the real corpus",
    "input_file": "the corpus file (and line or record) the example comes from",
    "meta": "a JSON object of source-specific provenance (citation type, revision ids, query type, ...)",
}
