"""WikiRef journal Table V: the statistics of the DUC benchmarks (clusters, documents, sentences per year).

The ``table5`` job (``wikiref duc table5``) reads what ``prepare`` counted (``data/duc/<year>.stats.json``:
``topics``, ``documents``, ``sentences``, ``standin``) and writes one row per year with the paper's counts
beside it. Each row's ``Data`` column (``real`` / ``STAND-IN``) and the caption come from those stats files,
never from the profile: a STAND-IN year under a profile that says the data is real is an error
(:func:`wikiref.tables.standin_flag`).

The sentence counts depend on the sentence splitter: on the real DUC 2006 / 2007 the package's spaCy
splitter counts 40,649 and 28,710 sentences, about 17% more than the paper's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

# Journal Table V ("Statistics of DUC benchmarks"), as printed: year -> (clusters, documents, sentences).
PAPER_TABLE5 = {
    2005: (50, 1593, 46033),
    2006: (50, 1250, 34585),
    2007: (45, 1125, 24176),
}
# This package's spaCy splitter on the real DUC years (measured on NIST's data, which this repository cannot ship):
# what `duc prepare` counts there; scripts/duc-cost-probe sizes its cost probe by them.
MEASURED_SENTENCES = {2006: 40649, 2007: 28710}
STATS_KEYS = ("year", "topics", "documents", "sentences", "standin")


class Table5Error(ValueError):
    """A stats file without the counts Table V needs, or two files of one year."""


def table_rows(stats: Sequence[Mapping]) -> list[dict]:
    """One row per year (sorted): measured counts, the paper's counts beside them (None for a year the
    paper does not report) and ``Data`` (``STAND-IN`` when the year's stats say so, else ``real``)."""
    rows, seen = [], set()
    for s in sorted(stats, key=lambda s: int(s.get("year", 0))):
        missing = [k for k in STATS_KEYS if k not in s]
        if missing:
            raise Table5Error(
                f"DUC stats of year {s.get('year', '?')} lack {missing} (written by `wikiref duc prepare`)"
            )
        year = int(s["year"])
        if year in seen:
            raise Table5Error(f"two stats files for DUC year {year}")
        seen.add(year)
        paper = PAPER_TABLE5.get(year, (None, None, None))
        rows.append(
            {
                "Year": year,
                "Clusters": int(s["topics"]),
                "Clusters (paper)": paper[0],
                "Documents": int(s["documents"]),
                "Documents (paper)": paper[1],
                "Sentences": int(s["sentences"]),
                "Sentences (paper)": paper[2],
                "Data": "STAND-IN" if s["standin"] else "real",
            }
        )
    return rows


def caption(rows: Sequence[Mapping]) -> str:
    """The title, from the rows: which years are real DUC and which are STAND-IN pseudo-years."""
    real = [str(r["Year"]) for r in rows if r["Data"] == "real"]
    fake = [str(r["Year"]) for r in rows if r["Data"] != "real"]
    parts = ([f"DUC {', '.join(real)}"] if real else []) + (
        [f"STAND-IN pseudo-years {', '.join(fake)}, built from Wikipedia, not NIST DUC"] if fake else []
    )
    return f"Table V: statistics of the DUC benchmarks beside the paper's counts ({'; '.join(parts) or 'no years'})"


def run(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The table5 job. ``params``: ``profile``; ``inputs["stats"]``: the ``<year>.stats.json`` files;
    ``outputs["table"]``: the table stem (+ .csv / .md / .tex). Returns ``{"rows": [...], "standin": bool}``."""
    import pandas as pd

    from wikiref.files import read_json
    from wikiref.tables import write_table

    rows = table_rows([read_json(p) for p in inputs["stats"]])
    standin = any(r["Data"] != "real" for r in rows)
    notes = (
        "Clusters = topics, documents = (topic, document) pairs, sentences = the `text` pipeline's sentences "
        "(spaCy; the paper's splitter is not named, so sentence counts differ: about 17% more on real DUC "
        "2006/2007). Paper counts: journal Table V; empty for a year the paper does not report."
    )
    df = pd.DataFrame([{k: "" if v is None else v for k, v in r.items()} for r in rows])
    write_table(df, outputs["table"], title=caption(rows), profile=params["profile"], notes=notes, standin=standin)
    return {"rows": rows, "standin": standin}
