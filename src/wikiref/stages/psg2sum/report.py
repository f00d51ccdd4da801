"""Psg2Sum's Table 2 (statistics beside the paper's row) and Table 3 (corpus size at each overlap threshold
λ beside the paper's), through :func:`wikiref.tables.write_table`; a ``Data`` column says STAND-IN on every
row when the pairs come from the STAND-IN history."""

from __future__ import annotations

import statistics as st
from collections.abc import Mapping, Sequence
from pathlib import Path


def table2(rows: Sequence[Mapping], stem: str | Path, *, profile: Mapping, paper: Mapping) -> list[dict]:
    """Corpus size, mean input (passage) sentences and words, output (summary) sentences and words; words
    are :func:`wikiref.examples.n_tokens` tokens (the paper tokenised with spaCy)."""
    import pandas as pd

    from wikiref.examples import n_tokens
    from wikiref.tables import write_table

    def mean(values):
        return round(st.mean(values), 2) if values else float("nan")

    ins = [list(r["documents"][0]["sentences"]) for r in rows]
    outs = [list(r["summary"]) for r in rows]
    ours = {
        "Dataset": "Psg2Sum (this run)",
        "Corpus size": str(len(rows)),
        "Input sentences": mean([len(s) for s in ins]),
        "Input words": mean([sum(n_tokens(x) for x in s) for s in ins]),
        "Output sentences": mean([len(s) for s in outs]),
        "Output words": mean([sum(n_tokens(x) for x in s) for s in outs]),
        "References": 1,
    }
    theirs = {
        "Dataset": "Psg2Sum (paper, Table 2)",
        "Corpus size": paper["examples"],
        "Input sentences": paper["input_sentences"],
        "Input words": paper["input_words"],
        "Output sentences": float(paper["output_sentences"]),
        "Output words": paper["output_words"],
        "References": 1,
    }
    # the paper's row is the paper's printed numbers; only this run's row can be STAND-IN
    records = [dict(ours, Data="STAND-IN" if profile.get("standin") else "real"), dict(theirs, Data="paper")]
    write_table(
        pd.DataFrame(records),
        stem,
        title="Psg2Sum Table 2: passage-summary pairs, mean input (passage) and output (summary) length",
        profile=profile,
        notes="Words: word and punctuation tokens. Paper row: Zhou, Wei, Zhou, Table 2.",
    )
    return records


def table3(
    sizes: Mapping[float, int], stem: str | Path, *, profile: Mapping, paper: Mapping, chosen: float
) -> list[dict]:
    """Pairs kept at each λ (after duplicates are removed), beside the paper's sizes and Good rates (the
    paper's manual quality labels are not reproduced)."""
    import pandas as pd

    from wikiref.tables import stand_in_rows, write_table

    records = []
    for lam, n in sorted(sizes.items()):
        size, good = paper.get(lam, ("", ""))
        records.append(
            {
                "Threshold λ": lam,
                "Size": n,
                "Chosen": "yes" if abs(lam - chosen) < 1e-12 else "",
                "Paper size": size,
                "Paper Good (of 50)": good,
            }
        )
    df = stand_in_rows(pd.DataFrame(records), profile)
    write_table(
        df,
        stem,
        title="Psg2Sum Table 3: corpus size at each minimum overlap rate λ",
        profile=profile,
        notes="Paper columns: Zhou, Wei, Zhou, Table 3 (Good = manually judged, 50 random pairs; not reproduced here).",
    )
    return df.to_dict("records")
