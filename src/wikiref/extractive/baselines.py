"""DUC baselines of Table VI: LEAD, QUERY-SIM and ORACLE, scored like NIST scores DUC, plus two labelled
variants of LEAD and QUERY-SIM.

* LEAD (NIST's DUC 2005-2007 baseline): the leading sentences of the most recent document of the
  cluster, up to ``max_words`` words; the sentence that crosses the budget is cut to fill it exactly
  (NIST's baseline is "the first 250 words"; ROUGE ``-l 250`` would cut it the same way).
* QUERY-SIM: every sentence of the cluster ranked by the TF-IDF cosine similarity to the query
  (title and narrative), scikit-learn ``TfidfVectorizer`` fitted on the cluster's sentences (English
  stop words removed, sublinear tf), then :func:`wikiref.extractive.selection.select`
  (250 words, bigram redundancy).
* ORACLE: greedy on ROUGE-2 recall against the cluster's references (pooled,
  :mod:`wikiref.rouge.fast`): repeatedly add the sentence that raises the summary's recall most
  among those that still fit in ``max_words``; stop when nothing fits or nothing improves it.

The variants (``lead_each``, ``query_sim_plain``) are other readings of the one-line definitions of the
LEAD and QUERY-SIM rows that the journal copies from its reference [12] (CRSum): "selects the leading
sentences" and "ranks sentences according to its TF-IDF cosine similarity to the query". Neither
definition is verified against those papers' code or output.

* LEAD-EACH: the first sentence of each document in cluster order (oldest first), then the second sentence of
  each, and so on, up to ``max_words`` words, the sentence that crosses the budget cut to fill it (NIST's DUC 2002
  multi-document "coverage baseline").
* QUERY-SIM (no redundancy rule): the :func:`query_sim_scores` ranking taken in rank order up to ``max_words``
  words, the sentence that crosses the budget cut to fill it; no sentence is skipped as redundant.

All summaries are evaluated with :mod:`wikiref.rouge.official` and the DUC flags
(``duc.rouge_flags``: ``-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0 -l 250``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from wikiref.extractive.selection import choose_mmr, fit_tfidf, flatten, ranking, select, words

SYSTEMS = {
    "lead": "LEAD",
    "query_sim": "QUERY-SIM",
    "oracle": "ORACLE",
    "lead_each": "LEAD-EACH",
    "query_sim_plain": "QUERY-SIM (no redundancy rule)",
}
# The systems that read the journal's LEAD / QUERY-SIM definitions otherwise than ours (see the module docstring).
VARIANTS = ("lead_each", "query_sim_plain")
# One sentence per system for table notes.
DESCRIPTIONS = {
    "lead": "LEAD: leading sentences of the most recent document (NIST's DUC baseline)",
    "query_sim": "QUERY-SIM: TF-IDF cosine to the query + 250-word selection with bigram redundancy",
    "oracle": "ORACLE: greedy ROUGE-2 recall against the references",
    "lead_each": (
        "LEAD-EACH: the first sentence of each document in turn (then the second ones, ...) up to the budget "
        "(NIST's DUC 2002 coverage baseline)"
    ),
    "query_sim_plain": "QUERY-SIM (no redundancy rule): the same TF-IDF ranking taken in rank order up to the budget",
}
VARIANT_NOTE = (
    "LEAD-EACH and QUERY-SIM (no redundancy rule) are other readings of the one-line LEAD / QUERY-SIM definitions "
    "of the rows the journal copies from [12] (CRSum); not verified against [12]'s (or AttSum's) code or output."
)


def _fill(sentences: Iterable[str], max_words: int) -> list[str]:
    """``sentences`` in the order given up to ``max_words`` words; the sentence that crosses the budget is cut
    to fill it exactly; sentences without words are passed over."""
    out: list[str] = []
    used = 0
    for s in sentences:
        toks = s.split()
        if not toks:
            continue
        if used + len(toks) <= max_words:
            out.append(s)
            used += len(toks)
        else:
            if max_words - used > 0:
                out.append(" ".join(toks[: max_words - used]))
            break
        if used == max_words:
            break
    return out


def lead(documents: Sequence[Mapping], *, max_words: int = 250) -> list[str]:
    """``documents`` oldest first (each ``{"doc_date", "doc_id", "sentences"}``); the most recent
    one is the last by (date, id)."""
    if not documents:
        return []
    recent = max(documents, key=lambda d: (d.get("doc_date") or "", d.get("doc_id") or ""))
    return _fill(recent["sentences"], max_words)


def lead_each(documents: Sequence[Mapping], *, max_words: int = 250) -> list[str]:
    """The first sentence of each document in the order given (cluster order, oldest first), then the second
    sentence of each, ... up to ``max_words`` words (the crossing sentence cut); a document without more
    sentences is passed over."""
    longest = max((len(d["sentences"]) for d in documents), default=0)
    return _fill((d["sentences"][k] for k in range(longest) for d in documents if k < len(d["sentences"])), max_words)


def query_sim_scores(query: Sequence[str], sentences: Sequence[str]) -> list[float]:
    """TF-IDF cosine similarity (:func:`wikiref.extractive.selection.fit_tfidf`) of each sentence to the query (all
    query levels joined)."""
    from sklearn.metrics.pairwise import linear_kernel

    fitted = fit_tfidf(sentences)
    if fitted is None:  # no sentences, or no content word
        return [0.0] * len(sentences)
    vec, m = fitted
    q = vec.transform([" ".join(query)])
    return [float(x) for x in linear_kernel(m, q).ravel()]


def query_sim(query: Sequence[str], documents: Sequence[Mapping], **select_options) -> list[str]:
    """The cluster's sentences by :func:`query_sim_scores`, chosen by :func:`wikiref.extractive.selection.select`
    with ``select_options`` (``max_words``, ``max_bigram_overlap``, ``fill``, ``mmr``; its defaults otherwise)."""
    sents, _ = flatten([d["sentences"] for d in documents])
    scores = query_sim_scores(query, sents)
    idx = select(scores, sents, **select_options)
    return [sents[i] for i in idx]


def query_sim_plain(query: Sequence[str], documents: Sequence[Mapping], *, max_words: int = 250) -> list[str]:
    """The cluster's sentences in :func:`query_sim_scores` rank order (ties: cluster order) up to ``max_words``
    words, the crossing sentence cut; no redundancy rule."""
    sents, _ = flatten([d["sentences"] for d in documents])
    scores = query_sim_scores(query, sents)
    return _fill((sents[i] for i in ranking(scores)), max_words)


def oracle(documents: Sequence[Mapping], references: Sequence[str], *, max_words: int = 250) -> list[str]:
    """Greedy ROUGE-2 recall (pooled references) under the word budget; sentences in the order added."""
    from wikiref.rouge.fast import SentenceSetRouge

    sents, _ = flatten([d["sentences"] for d in documents])
    keep = [i for i, s in enumerate(sents) if words(s) > 0]
    if not keep or not references:
        return []
    cand = [sents[i] for i in keep]
    rouge = SentenceSetRouge(cand, list(references), "rouge2")
    n_words = [words(s) for s in cand]
    chosen: list[int] = []
    used = 0
    best = 0.0
    while True:
        best_i, best_val = -1, best
        for i in range(len(cand)):
            if i in chosen or used + n_words[i] > max_words:
                continue
            val = rouge.score(chosen + [i]).recall
            if val > best_val:
                best_i, best_val = i, val
        if best_i < 0:
            break
        chosen.append(best_i)
        used += n_words[best_i]
        best = best_val
    return [cand[i] for i in chosen]


def summarize(system: str, topic: Mapping, *, max_words: int = 250, **select_options) -> list[str]:
    """One baseline summary for a topic as given by :func:`wikiref.extractive.baselines.rows_to_topics`
    (``select_options``, :func:`wikiref.extractive.selection.select`'s, apply to ``query_sim`` only)."""
    if system == "lead":
        return lead(topic["documents"], max_words=max_words)
    if system == "query_sim":
        return query_sim(topic["query"], topic["documents"], max_words=max_words, **select_options)
    if system == "oracle":
        refs = ["\n".join(r) for r in topic["references"]]
        return oracle(topic["documents"], refs, max_words=max_words)
    if system == "lead_each":
        return lead_each(topic["documents"], max_words=max_words)
    if system == "query_sim_plain":
        return query_sim_plain(topic["query"], topic["documents"], max_words=max_words)
    raise ValueError(f"unknown baseline {system!r}; known: {sorted(SYSTEMS)}")


def summarize_topics(system: str, topics: Sequence[Mapping], *, max_words: int = 250, **select_options) -> dict:
    """:func:`summarize` of every topic: ``{topic id: sentences}`` (what :func:`evaluate` reads)."""
    return {t["topic"]: summarize(system, t, max_words=max_words, **select_options) for t in topics}


def query_sim_rule(duc: Mapping, held_out: Sequence[Mapping]) -> tuple[dict, dict | None]:
    """``duc`` (``summary_words``, ``select``, ``rouge_flags``) with QUERY-SIM's selection rule fixed: for a rule with
    several MMR weights, the one QUERY-SIM's summaries of the ``held_out`` topics score best with (official R-2
    recall x 100; :func:`wikiref.extractive.selection.choose_mmr`), and the choice's record; a fixed rule as it is."""

    def value(select_options: Mapping) -> float:
        summaries = summarize_topics("query_sim", held_out, max_words=duc["summary_words"], **select_options)
        return 100 * evaluate(summaries, held_out, duc["rouge_flags"])["ROUGE-2"]["R"]

    select_options, record = choose_mmr(duc["select"], value)
    return {**duc, "select": select_options}, record


def evaluate(summaries: Mapping[str, Sequence[str]], topics: Sequence[Mapping], flags: str) -> dict:
    """Official ROUGE of one system's summaries (``{topic id: sentences}``) on ``topics``:
    ``{measure: {"R", "P", "F", "R_ci", "P_ci", "F_ci", "topics"}}`` plus per-topic recall."""
    from wikiref.rouge import official

    opts = official.Options.from_flags(flags)
    items = [(t["topic"], summaries[t["topic"]], t["references"]) for t in topics]
    res = official.evaluate_summaries(items, opts)
    out: dict = {}
    for measure, mr in res.items():
        av = mr.averages
        out[measure] = {
            "R": float(av.r),
            "P": float(av.p),
            "F": float(av.f),
            "R_ci": [float(x) for x in av.r_ci],
            "P_ci": [float(x) for x in av.p_ci],
            "F_ci": [float(x) for x in av.f_ci],
            "topics": len(mr.per_eval),
            "per_topic_R": {k.rsplit(".", 1)[0]: float(v.r) for k, v in sorted(mr.per_eval.items())},
        }
    return out


def rows_to_topics(rows: Sequence[Mapping]) -> list[dict]:
    """Inverse view for evaluation: per topic (sorted by topic id) its query, references and its
    documents' sentences in cluster order (oldest first)."""
    by: dict[str, dict] = {}
    for r in rows:
        t = by.setdefault(
            r["topic"],
            {
                "year": int(r["year"]),
                "topic": r["topic"],
                "query": list(r["query"]),
                "references": [list(x.split("\n")) for x in r["references"]],
                "reference_ids": list(r["reference_ids"]),
                "documents": [],
            },
        )
        t["documents"].append((int(r["doc_position"]), r["doc_id"], r["doc_date"], list(r["doc_sentences"])))
    out = []
    for key in sorted(by):
        t = by[key]
        t["documents"] = [{"doc_id": d, "doc_date": dt, "sentences": s} for _, d, dt, s in sorted(t["documents"])]
        out.append(t)
    return out
