"""Seeded, stratified samples of the five studies, read from other stages' declared files.

Each sampler returns ``(items, key, info)``: ``items`` is what a rater sees (an id and labelled text
fields, never a system's name), ``key`` maps an item id to its stratum, its source record and, for the
A/B studies, which hidden system is A and which is B (drawn per item), and ``info`` holds the counts,
any shortfall (a stratum with fewer records than asked for) and ``standin`` (derived from the data read).
Same params and seed -> the same sample.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path


class SampleError(ValueError):
    """An input a study reads is missing, lacks a system or a year, or has no record to sample."""


def rng_for(seed: int, *parts) -> random.Random:
    """A generator seeded by the run's seed and a label (study, stratum): samples never share draws."""
    return random.Random(":".join(str(p) for p in (seed, *parts)))


def draw(records: Sequence, n: int | None, rng: random.Random) -> list:
    """``n`` records without replacement (all of them, shuffled, when ``n`` is None or exceeds them)."""
    pool = list(records)
    return rng.sample(pool, len(pool) if n is None else min(int(n), len(pool)))


def _field(label: str, text) -> dict:
    return {"label": label, "text": "\n".join(text) if isinstance(text, (list, tuple)) else str(text)}


def _read(path, columns=None) -> list[dict]:
    import pyarrow.parquet as pq

    if not Path(path).exists():
        raise SampleError(f"{path} is missing (run the stage that writes it first)")
    return pq.read_table(str(path), columns=columns).to_pylist()


def _numbered(prefix: str, entries: list[tuple[dict, dict]]) -> tuple[list[dict], dict]:
    """Give the drawn (item, key entry) pairs ids ``<prefix>-001`` ... in draw order."""
    items, key = [], {}
    for i, (item, k) in enumerate(entries, 1):
        iid = f"{prefix}-{i:03d}"
        items.append({"id": iid, **item})
        key[iid] = k
    return items, key


def _two_systems(cfg: Mapping, study: str) -> list[str]:
    systems = [str(s) for s in cfg["systems"]]
    if len(set(systems)) != 2:
        raise SampleError(f"{study}: systems must name two different systems, got {systems}")
    return systems


def _assign_ab(systems: Sequence[str], rng: random.Random) -> dict[str, str]:
    first = rng.random() < 0.5
    return {"A": systems[0], "B": systems[1]} if first else {"A": systems[1], "B": systems[0]}


# ------------------------------------------------------------------------------------ WikiRef Table III
def bin_label(lo: float, hi: float) -> str:
    return f"{round(100 * lo):g}~{round(100 * hi):g}"


def wikiref_table3(cfg: Mapping, inputs: Mapping, seed: int):
    """Per oracle-score bin [lo, hi) (the last bin closed), ``per_bin`` examples of the oracle split."""
    rows = _read(inputs["oracle"], ["id", "query", "doc_sentences", "statement", "oracle_score", "standin"])
    bins = [tuple(float(x) for x in b) for b in cfg["bins"]]
    entries, info = [], {"per_bin": {}, "shortfall": {}, "records": len(rows)}
    for i, (lo, hi) in enumerate(bins):
        last = i == len(bins) - 1
        pool = sorted(
            (r for r in rows if lo <= r["oracle_score"] < hi or (last and r["oracle_score"] == hi)),
            key=lambda r: r["id"],
        )
        label = bin_label(lo, hi)
        got = draw(pool, cfg["per_bin"], rng_for(seed, "wikiref_table3", label))
        info["per_bin"][label] = len(got)
        if len(got) < cfg["per_bin"]:
            info["shortfall"][label] = f"{len(got)} of {cfg['per_bin']} (the bin holds {len(pool)} examples)"
        for r in got:
            item = {
                "fields": [
                    _field("Query", " > ".join(r["query"])),
                    _field("Document", r["doc_sentences"]),
                    _field("Summary (statement)", r["statement"]),
                ]
            }
            entries.append((item, {"stratum": label, "record": r["id"], "standin": bool(r["standin"])}))
    order = rng_for(seed, "wikiref_table3", "order")
    order.shuffle(entries)  # bins interleaved: a rater cannot tell an item's bin from its position
    items, key = _numbered("t3", entries)
    info["standin"] = any(k["standin"] for k in key.values())
    return items, key, info


# ------------------------------------------------------------------------------------------------- DUC
def duc_topics(path) -> dict[str, dict]:
    """Topic -> {query, references} of a prepared DUC year (``data/duc/<year>.parquet``)."""
    out: dict[str, dict] = {}
    for r in _read(path, ["topic", "query", "references"]):
        out.setdefault(str(r["topic"]), {"query": list(r["query"]), "references": list(r["references"])})
    return out


def _summaries(path, where: str) -> dict:
    from wikiref.files import read_json

    if not Path(path).exists():
        raise SampleError(f"{path} is missing ({where}; run the stage that writes it first)")
    return read_json(path)


def wikiref_table7(cfg: Mapping, inputs: Mapping, seed: int):
    """``topics`` DUC topics of ``year`` summarised by both ``systems`` (finetune settings), A/B per item."""
    systems, year = _two_systems(cfg, "wikiref_table7"), int(cfg["year"])
    summ = {s: _summaries(inputs["summaries"][s], f"finetune setting {s}, year {year}") for s in systems}
    topics = duc_topics(inputs["duc"])
    common = sorted(set(topics).intersection(*(set(v) for v in summ.values())))
    if not common:
        raise SampleError(f"no DUC {year} topic has summaries of every system {systems}")
    rng = rng_for(seed, "wikiref_table7")
    entries = []
    for t in draw(common, cfg["topics"], rng):
        ab = _assign_ab(systems, rng)
        item = {
            "fields": [_field("Query", topics[t]["query"])] + [_field(f"Summary {s}", summ[ab[s]][t]) for s in "AB"]
        }
        entries.append((item, {"stratum": str(year), "record": t, "systems": ab}))
    items, key = _numbered("t7", entries)
    info = {"topics": len(items), "common_topics": len(common), "standin": bool(inputs.get("standin"))}
    if cfg["topics"] is not None and len(items) < cfg["topics"]:
        info["shortfall"] = {str(year): f"{len(items)} of {cfg['topics']} topics"}
    return items, key, info


def qmdscnnir_table6(cfg: Mapping, inputs: Mapping, seed: int):
    """Per DUC year, ``topics`` topics (None: all) with both ``systems``' summaries (abstractive runs), a gold
    summary drawn among the references, A/B per item."""
    systems = _two_systems(cfg, "qmdscnnir_table6")
    runs = {s: _summaries(inputs["summaries"][s], f"abstractive run {s}") for s in systems}
    entries, info = [], {"per_year": {}, "standin": bool(inputs.get("standin"))}
    for year in cfg["years"]:
        per = {}
        for s in systems:
            if str(year) not in runs[s].get("duc", {}):
                raise SampleError(
                    f"abstractive run {s} has no DUC {year} summaries (its duc: true, abstractive.duc.years)"
                )
            per[s] = runs[s]["duc"][str(year)]
        info["standin"] = info["standin"] or any(bool(runs[s].get("standin")) for s in systems)
        topics = duc_topics(inputs["duc"][year] if year in inputs["duc"] else inputs["duc"][str(year)])
        common = sorted(set(topics).intersection(*(set(v) for v in per.values())))
        rng = rng_for(seed, "qmdscnnir_table6", year)
        got = draw(common, cfg["topics"], rng)
        info["per_year"][str(year)] = len(got)
        for t in got:
            ab = _assign_ab(systems, rng)
            refs = topics[t]["references"]
            gold = refs[rng.randrange(len(refs))] if refs else ""
            item = {
                "fields": [_field("Query", topics[t]["query"]), _field("Gold summary", gold)]
                + [_field(f"Summary {s}", per[ab[s]][t]) for s in "AB"]
            }
            entries.append((item, {"stratum": str(year), "record": t, "systems": ab}))
    items, key = _numbered("t6", entries)
    return items, key, info


# ------------------------------------------------------------------------------------------ Psg2Sum
def psg2sum_table3(cfg: Mapping, inputs: Mapping, seed: int):
    """Per overlap threshold λ, ``per_threshold`` random pairs among the mined candidates scoring >= λ (the
    same pair drawn at two thresholds is one item counted at both)."""
    seen: dict[tuple[str, str], dict] = {}
    for path in inputs["pairs"]:
        for r in _read(path, ["page_id", "title", "rev_id", "summary", "passage", "section", "score", "standin"]):
            seen.setdefault((" ".join(r["summary"].split()), " ".join(r["passage"].split())), r)
    pairs = sorted(seen.values(), key=lambda r: (r["page_id"], r["rev_id"], r["summary"], r["passage"]))
    drawn: dict[int, dict] = {}  # position in pairs -> key entry
    info = {"candidates": len(pairs), "per_threshold": {}, "shortfall": {}}
    for lam in sorted(float(x) for x in cfg["thresholds"]):
        pool = [i for i, r in enumerate(pairs) if r["score"] >= lam]
        got = draw(pool, cfg["per_threshold"], rng_for(seed, "psg2sum_table3", lam))
        info["per_threshold"][f"{lam:g}"] = len(got)
        if len(got) < cfg["per_threshold"]:
            info["shortfall"][f"{lam:g}"] = f"{len(got)} of {cfg['per_threshold']} ({len(pool)} pairs score >= {lam:g})"
        for i in got:
            r = pairs[i]
            entry = drawn.setdefault(
                i, {"strata": [], "record": f"{r['title']}@{r['rev_id']}", "score": r["score"], "standin": r["standin"]}
            )
            entry["strata"].append(f"{lam:g}")
    entries = []
    for i, k in drawn.items():
        r = pairs[i]
        item = {
            "fields": [
                _field("Article", " > ".join([r["title"], *r["section"]])),
                _field("Passage", r["passage"]),
                _field("Sentence added to the lead", r["summary"]),
            ]
        }
        entries.append((item, {**k, "stratum": k["strata"][0]}))
    rng_for(seed, "psg2sum_table3", "order").shuffle(entries)
    items, key = _numbered("p3", entries)
    info["standin"] = any(bool(k["standin"]) for k in key.values())
    return items, key, info


# --------------------------------------------------------------------------------------------- WCEP
def wcep_ccnews(cfg: Mapping, inputs: Mapping, seed: int):
    """``articles`` random CC-NEWS articles the classifier added to a cluster (WCEP-total's documents of
    origin ``retrieved``): the event summary beside the article's title and first ``sentences`` sentences."""
    pool = []
    for path in inputs["total"]:
        for r in _read(path, ["id", "summary", "documents", "standin"]):
            for d in r["documents"]:
                if d["origin"] == "retrieved":
                    pool.append((r["id"], d["id"], r["summary"], d, bool(r["standin"])))
    pool.sort(key=lambda x: (x[0], x[1]))
    got = draw(pool, cfg["articles"], rng_for(seed, "wcep_ccnews"))
    entries = []
    for event, article, summary, doc, standin in got:
        item = {
            "fields": [
                _field("Event summary", summary),
                _field("Article title", doc["title"] or "(no title)"),
                _field(
                    f"Article (first {cfg['sentences']} sentences)", list(doc["sentences"])[: int(cfg["sentences"])]
                ),
            ]
        }
        entries.append(
            (item, {"stratum": "all", "record": f"{event}/{article}", "probability": doc["score"], "standin": standin})
        )
    items, key = _numbered("w3", entries)
    info = {"added_articles": len(pool), "standin": any(k["standin"] for k in key.values())}
    if len(items) < cfg["articles"]:
        info["shortfall"] = {"all": f"{len(items)} of {cfg['articles']} ({len(pool)} added articles)"}
    return items, key, info


SAMPLERS = {
    "wikiref_table3": wikiref_table3,
    "wikiref_table7": wikiref_table7,
    "qmdscnnir_table6": qmdscnnir_table6,
    "psg2sum_table3": psg2sum_table3,
    "wcep_ccnews": wcep_ccnews,
}
