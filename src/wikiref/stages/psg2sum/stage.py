"""The Psg2Sum stage's jobs (Zhou, Wei, Zhou: passage-summary pairs from Wikipedia revision histories).

* :func:`standin` (``psg2sum.standin``): the sample dump -> STAND-IN page-history parts
  (:mod:`wikiref.stages.psg2sum.standin`);
* :func:`part` (one job per history dump part): stream the part's pages and revisions
  (:mod:`~.history`), mine every (parent, child) edit (:mod:`~.mining`) and keep the candidate pairs
  scoring at least the smallest λ of ``overlap_grid``; checkpointed every ``pages_per_chunk`` pages, so a
  killed job resumes and writes the same bytes;
* :func:`merge`: every part -> duplicates removed, Table 3 (size at each λ), pairs at ``min_overlap``,
  passages split into sentences, a seeded random split -> the common example files, Table 2;
* :func:`baselines`: LEAD1, TEXTRANK and the package's BERT scorer (NN-SE's row) scored with the official
  ROUGE -> Table 4 beside the paper's (:mod:`~.baselines`).
"""

from __future__ import annotations

import json
import logging
import random
import shutil
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from wikiref.wiki.dump import part_path

log = logging.getLogger(__name__)

SOURCE = "psg2sum"
SUFFIXES = ("", ".xml.bz2", ".bz2", ".xml.7z", ".7z", ".xml.gz", ".gz", ".xml")
PAPER_TABLE3 = {0.5: ("117,026", "27 (54%)"), 0.6: ("100,118", "33 (66%)"), 0.7: ("68,070", "34 (68%)")}
PAPER_TABLE2 = {
    "examples": "100,118",
    "input_sentences": 4.83,
    "input_words": 118.26,
    "output_sentences": 1,
    "output_words": 22.20,
}


class Psg2SumError(RuntimeError):
    """A Psg2Sum input that cannot be used as a whole (no part file, no pair, a split left empty...)."""


def resolve_part(dump_dir: str | Path, part: str) -> Path:
    """The file of history part ``part`` in ``dump_dir`` (``<part>``, ``.xml.bz2``, ``.bz2``, ``.7z``, ...)."""
    for suffix in SUFFIXES:
        cand = Path(dump_dir) / f"{part}{suffix}"
        if cand.is_file():
            return cand
    raise FileNotFoundError(
        f"history part {part!r} not found in {dump_dir} (tried {', '.join(part + s for s in SUFFIXES if s)})"
    )


def part_inputs(config: Mapping, part: str) -> list[str]:
    """What a part job reads (the rules' input): the STAND-IN folder, or the part's file."""
    from wikiref import layout

    p = config["psg2sum"]
    return [layout.PSG2SUM_STANDIN] if p["standin"] else [part_path(p["dump"]["dir"], part)]


def is_standin_dir(folder: str | Path) -> bool:
    notice = Path(folder) / "NOTICE.txt"
    return notice.is_file() and notice.read_text(encoding="utf-8", errors="replace").lstrip().startswith("STAND-IN")


# -------------------------------------------------------------------------------------------- standin
def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """``inputs["dump"]`` (the sample's dump) -> ``outputs["dir"]`` (replaced as a whole): one STAND-IN
    history file per part named in ``psg2sum.dump.parts``. Params: seed, collect, psg2sum."""
    from wikiref.files import atomic_dir
    from wikiref.stages.psg2sum import standin as builder

    dump = Path(inputs["dump"])
    if not dump.is_file():
        raise FileNotFoundError(f"{dump}: the sample dump is missing (run `wikiref sample` first)")
    p = params["psg2sum"]
    with atomic_dir(outputs["dir"]) as tmp:
        return builder.build(
            dump,
            tmp,
            parts=p["dump"]["parts"],
            seed=int(params["seed"]),
            collect=params["collect"],
            max_articles=int(p["standin_articles"]),
        )


# ----------------------------------------------------------------------------------------------- part
def _fingerprint(params: Mapping, path: Path) -> str:
    from wikiref.files import stable_id

    st = path.stat()
    return stable_id(json.dumps(params, sort_keys=True), str(path.resolve()), str(st.st_size), str(int(st.st_mtime)))


def _pair_row(edit, pair, standin: bool) -> dict:
    return {
        "page_id": int(edit.page_id),
        "title": edit.title,
        "rev_id": int(edit.child.rev_id),
        "parent_rev_id": int(edit.parent.rev_id),
        "timestamp": edit.child.timestamp,
        "summary": pair.summary,
        "passage": pair.passage.text,
        "section": list(pair.passage.section),
        "score": float(pair.score),
        "candidates": int(pair.candidates),
        "standin": standin,
    }


def _mine_edits(miner, edits, min_score: float, tally, standin: bool) -> list[dict]:
    """The pair rows of a page's edits scoring at least ``min_score``."""
    rows = []
    for edit in edits:
        # Miner.parse caches by the text's hash: an edit's parent is mostly the previous edit's child
        parent, child = miner.parse(edit.parent.text), miner.parse(edit.child.text)
        tally.counts["edits"] += 1
        for pair in miner.mine(parent, child, min_score=min_score, tally=tally):
            rows.append(_pair_row(edit, pair, standin))
    return rows


def part(params: Mapping, inputs: Mapping, outputs: Mapping, *, part_name: str) -> dict:
    """The part job. ``inputs["dump"]``: the history file (default: ``psg2sum.dump.dir`` / part);
    ``outputs``: ``pairs`` (parquet :data:`wikiref.schemas.PSG2SUM_PAIRS`, every candidate pair scoring >=
    ``min(overlap_grid)``, sorted by page, revision and summary) and ``stats`` (JSON: the reader's and the
    miner's counts). Checkpoints (``.<part>.work/`` beside the output): every ``pages_per_chunk`` pages the
    pairs and the counts so far are written atomically with the last page id; a rerun with the same params
    and input resumes after it (``WIKIREF_PSG2SUM_KILL_AFTER=N`` kills the job after N checkpoints, for
    tests)."""
    import os

    import pyarrow as pa

    from wikiref.examples import Tally
    from wikiref.files import write_json, write_parquet
    from wikiref.schemas import PSG2SUM_PAIRS
    from wikiref.stages.psg2sum import history

    p = params["psg2sum"]
    path = Path(inputs.get("dump") or resolve_part(p["dump"]["dir"], part_name))
    if not path.is_file():
        raise FileNotFoundError(f"{path}: history part not found")
    standin_flag = is_standin_dir(path.parent)
    out = Path(outputs["pairs"])
    work = out.parent / f".{out.stem}.work"
    fp = _fingerprint(
        {"psg2sum": p, "text": params["text"], "skip": params["collect"]["statements"]["skip_sections"]}, path
    )
    tally = Tally()
    rows, start_after, n_chunks = _resume(work, fp, tally, part_name)
    miner = _miner(params)
    min_score = min(float(x) for x in p["overlap_grid"])
    kill_after = int(os.environ.get("WIKIREF_PSG2SUM_KILL_AFTER", "0") or 0)
    t0 = time.perf_counter()
    chunk_rows: list[dict] = []
    pages_in_chunk = 0

    def flush(last_page: int) -> None:
        nonlocal chunk_rows, pages_in_chunk, n_chunks
        name = work / f"chunk-{n_chunks:06d}"
        write_parquet(name.with_suffix(".parquet"), pa.Table.from_pylist(chunk_rows, schema=PSG2SUM_PAIRS))
        write_json(name.with_suffix(".json"), {"fingerprint": fp, "last_page": last_page, **tally.to_json()})
        rows.extend(chunk_rows)
        chunk_rows, pages_in_chunk = [], 0
        n_chunks += 1
        if kill_after and n_chunks >= kill_after:
            os._exit(137)  # a simulated SIGKILL after a checkpoint (tests only)

    last_page = start_after
    max_edit = p["max_edit_chars"]
    for page_id, title, revisions in history.iter_pages(
        path, tally, namespaces=tuple(p["namespaces"]), start_after_page=start_after
    ):
        edits = history.page_edits(page_id, title, revisions, tally, max_edit_chars=max_edit)
        chunk_rows.extend(_mine_edits(miner, edits, min_score, tally, standin_flag))
        last_page = page_id
        pages_in_chunk += 1
        if pages_in_chunk >= int(p["pages_per_chunk"]):
            flush(page_id)
    # Pages a resumed run passed over were counted by the run that checkpointed them, not again.
    passed_over = tally.counts.pop("pages:before_start", 0)
    if passed_over:
        tally.counts["pages:read"] -= passed_over
    if pages_in_chunk or chunk_rows or n_chunks == 0:
        flush(last_page if last_page is not None else -1)
    rows.sort(key=lambda r: (r["page_id"], r["rev_id"], r["summary"], r["passage"]))
    write_parquet(out, pa.Table.from_pylist(rows, schema=PSG2SUM_PAIRS))
    stats = {
        **tally.to_json(),
        "part": part_name,
        "file": str(path),
        "pairs": len(rows),
        "min_score_kept": min_score,
        "standin": standin_flag,
        "seconds_this_run": round(time.perf_counter() - t0, 3),
    }
    if start_after is not None:
        log.info("psg2sum part %s: resumed after page %s, %d pages passed over", part_name, start_after, passed_over)
    write_json(outputs["stats"], stats)
    shutil.rmtree(work)
    return stats


def _resume(work: Path, fp: str, tally, part_name: str) -> tuple[list[dict], int | None, int]:
    """(pairs of the checkpoints so far, the page they end after or None, their number): a run with the
    same fingerprint resumes from ``work`` (counts and locations back in ``tally``), any other starts
    afresh in an emptied ``work``."""
    from wikiref.files import read_json

    rows: list[dict] = []
    start_after = None
    chunks = sorted(work.glob("chunk-*.json")) if work.is_dir() else []
    if chunks and read_json(chunks[-1]).get("fingerprint") == fp:
        for c in chunks:
            rows.extend(_read_rows(c.with_suffix(".parquet")))
        last = read_json(chunks[-1])
        tally.counts.update(last["counts"])
        for k, v in last["locations"].items():
            tally.locations[k] = list(v)
        start_after = last["last_page"]
        log.info(
            "psg2sum part %s: resuming after page %s (%d chunks, %d pairs)",
            part_name,
            start_after,
            len(chunks),
            len(rows),
        )
    else:
        if work.exists():
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    return rows, start_after, len(chunks) if start_after is not None else 0


def _miner(params: Mapping):
    """The pair miner with the run's spaCy pipeline and thresholds."""
    from wikiref.stages.psg2sum.mining import Miner
    from wikiref.text import from_params

    p = params["psg2sum"]
    nlp = from_params(params["text"])
    return Miner(
        nlp,
        skip_sections=params["collect"]["statements"]["skip_sections"],
        min_sentence_tokens=int(p["min_sentence_tokens"]),
        min_passage_tokens=int(p["min_passage_tokens"]),
    )


def _read_rows(path: Path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(str(path)).to_pylist()


# ---------------------------------------------------------------------------------------------- merge
def split_ids(ids: list[str], dev: float, test: float, seed: int) -> dict[str, str]:
    """id -> split: a seeded shuffle of the sorted ids; the first round(test x n) (at least 1) to test, the
    next round(dev x n) (at least 1) to dev, the rest train."""
    order = sorted(ids)
    random.Random(f"{seed}:psg2sum-split").shuffle(order)
    n = len(order)
    if n < 3:
        raise Psg2SumError(f"{n} pairs: a train/dev/test split needs 3 or more")
    n_test = max(1, round(test * n))
    n_dev = max(1, round(dev * n))
    if n_test + n_dev >= n:
        n_test, n_dev = 1, 1
    out = {i: "test" for i in order[:n_test]}
    out.update({i: "dev" for i in order[n_test : n_test + n_dev]})
    out.update({i: "train" for i in order[n_test + n_dev :]})
    return out


def _unique_pairs(paths, tally) -> list[dict]:
    """Every part's candidate pairs, in (page, revision, summary, passage) order, the first of each
    (summary, passage) text kept (the others counted as ``duplicate_pair``)."""
    candidates = []
    for path in paths:
        candidates.extend(_read_rows(Path(path)))
    tally.counts["candidates_read"] = len(candidates)
    seen: dict[tuple[str, str], dict] = {}
    for r in sorted(candidates, key=lambda r: (r["page_id"], r["rev_id"], r["summary"], r["passage"])):
        key = (" ".join(r["summary"].split()), " ".join(r["passage"].split()))
        if key in seen:
            tally.drop("duplicate_pair", f"{r['title']}@{r['rev_id']}")
            continue
        seen[key] = r
    return list(seen.values())


def _example_rows(params: Mapping, kept: list[dict], tally) -> list[dict]:
    """The kept pairs as common examples: passages split into sentences (one spaCy pass), ids, a seeded
    train/dev/test split (:func:`split_ids`); a passage without sentences is counted as ``empty_passage``."""
    from wikiref import examples as ex
    from wikiref.files import stable_id
    from wikiref.text import from_params, split_sentences

    p = params["psg2sum"]
    nlp = from_params(params["text"])
    sentences = list(split_sentences(nlp, (r["passage"] for r in kept), 64))
    ids = [stable_id(str(r["page_id"]), str(r["rev_id"]), r["summary"], r["passage"]) for r in kept]
    split_of = split_ids(ids, float(p["split"]["dev"]), float(p["split"]["test"]), int(params["seed"]))
    rows = []
    for r, sents, sid in zip(kept, sentences, ids):
        if not sents:
            tally.drop("empty_passage", f"{r['title']}@{r['rev_id']}")
            continue
        meta = {
            "page_id": r["page_id"],
            "rev_id": r["rev_id"],
            "parent_rev_id": r["parent_rev_id"],
            "timestamp": r["timestamp"],
            "score": r["score"],
            "candidates": r["candidates"],
        }
        rows.append(
            ex.example(
                SOURCE,
                sid,
                split=split_of[sid],
                query=[r["title"], *r["section"]],
                documents=[ex.document(f"p{sid}", sents, title=r["title"], origin="original")],
                summary=[r["summary"]],
                query_origin="wikipedia_headings",
                standin=bool(r["standin"]),
                input_file=f"{r['title']}@{r['rev_id']}",
                meta=meta,
            )
        )
        tally.counts[f"kept:{split_of[sid]}"] += 1
    return rows


def merge(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The merge job. ``inputs``: ``pairs`` (every part's parquet), ``stats`` (their JSON). ``outputs``:
    ``splits`` (split -> common example file), ``table2``, ``table3`` (stems), ``metrics``."""
    from wikiref import examples as ex
    from wikiref.files import read_json, write_json
    from wikiref.stages.psg2sum import report as rep
    from wikiref.tables import STANDIN_NOTE

    p = params["psg2sum"]
    t0 = time.perf_counter()
    tally = ex.Tally()
    unique = _unique_pairs(inputs["pairs"], tally)
    grid = sorted(float(x) for x in p["overlap_grid"])
    sizes = {lam: sum(r["score"] >= lam for r in unique) for lam in grid}
    lam = float(p["min_overlap"])
    kept = [r for r in unique if r["score"] >= lam]
    for r in unique:
        if r["score"] < lam:
            tally.drop("below_min_overlap", f"{r['title']}@{r['rev_id']}")
    if not kept:
        raise Psg2SumError(f"no pair scores >= {lam} ({len(unique)} candidates)")
    rows = _example_rows(params, kept, tally)
    standin_flag = any(r["standin"] for r in rows)
    profile = dict(params["profile"], standin=standin_flag)
    sizes_out = ex.write_splits(rows, outputs["splits"])
    t2 = rep.table2(rows, outputs["table2"], profile=profile, paper=PAPER_TABLE2)
    t3 = rep.table3(sizes, outputs["table3"], profile=profile, paper=PAPER_TABLE3, chosen=lam)
    upstream = {Path(s).name: read_json(s) for s in inputs.get("stats", [])}
    reader = Counter()
    for s in upstream.values():
        reader.update(s.get("counts", {}))
    metrics = {
        "source": SOURCE,
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "min_overlap": lam,
        "sizes": sizes_out,
        "size_at_overlap": {str(k): v for k, v in sizes.items()},
        "counts": dict(sorted(tally.counts.items())),
        "drop_locations": tally.to_json()["locations"],
        "parts": dict(sorted(reader.items())),
        "table2": t2,
        "table3": t3,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["metrics"], metrics)
    return metrics


# ------------------------------------------------------------------------------------------ baselines
def baselines(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The baselines job. ``inputs["splits"]``: split -> common example file. ``outputs``: ``table4`` (stem),
    ``summaries`` (JSON: every system's test summaries), ``model_dir`` (the BERT scorer), ``metrics``."""
    from wikiref import examples as ex
    from wikiref.extractive import official
    from wikiref.files import write_json
    from wikiref.stages.psg2sum import baselines as bl
    from wikiref.tables import STANDIN_NOTE

    p = params["psg2sum"]
    t0 = time.perf_counter()
    rows = {s: ex.split_rows(ex.read(inputs["splits"][s])).get(s, []) for s in ex.SPLITS}
    test = rows["test"]
    if not test:
        raise Psg2SumError("the test split is empty")
    references = {r["id"]: list(r["summary"]) for r in test}
    seed = int(params["seed"])
    systems = {
        "lead1": {r["id"]: bl.lead1(list(r["documents"][0]["sentences"])) for r in test},
        "textrank": {
            r["id"]: bl.textrank(list(r["documents"][0]["sentences"]), example_id=r["id"], seed=seed) for r in test
        },
    }
    training = None
    Path(outputs["model_dir"]).mkdir(parents=True, exist_ok=True)
    if p["supervised"]["enabled"]:
        training = bl.train_bert(params, rows["train"], rows["dev"], outputs["model_dir"], p["supervised"])
        systems["bert"] = bl.bert_summaries(outputs["model_dir"], test, params)
    results = {name: official.score(summ, references, flags=p["rouge_flags"]) for name, summ in systems.items()}
    standin_flag = any(r["standin"] for s in rows.values() for r in s)
    profile = dict(params["profile"], standin=standin_flag)
    table = bl.table4(results, outputs["table4"], profile=profile, n_test=len(test))
    write_json(outputs["summaries"], {"standin": standin_flag, "systems": systems})
    metrics = {
        "standin": standin_flag,
        **({"label": STANDIN_NOTE} if standin_flag else {}),
        "test_examples": len(test),
        "rouge_flags": p["rouge_flags"],
        "results": results,
        "table4": table,
        "training": training,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    write_json(outputs["metrics"], metrics)
    return metrics
