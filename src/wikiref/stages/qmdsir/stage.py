"""The QmdsIr stage's jobs (Pasunuru et al., AAAI 2021, §3.2; MS MARCO QnA for the private Bing logs).

* :func:`standin` (``wikiref qmdsir standin``, when ``qmdsir.standin``): the Wikipedia sample dump ->
  STAND-IN MS MARCO QnA v2.1 files (:mod:`wikiref.stages.qmdsir.standin`);
* :func:`part` (``wikiref qmdsir part --shard k``): the MS MARCO files under ``qmdsir.dir`` -> the
  shard's examples on the common schema (:data:`wikiref.schemas.EXAMPLE`, all splits) + its counts
  (:mod:`wikiref.stages.qmdsir.reader`, :mod:`wikiref.stages.qmdsir.build`);
* :func:`merge` (``wikiref qmdsir merge``): the parts -> one file per split, the statistics table
  (the paper's Table 1 columns) and the metrics (:func:`wikiref.examples.finish`).
"""

from __future__ import annotations

import logging
import os
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from pathlib import Path

from wikiref.layout import SPLITS
from wikiref.stages.qmdsir.reader import QmdsIrError

log = logging.getLogger(__name__)

SOURCE = "qmdsir"
TITLE = "QmdsIr statistics (Pasunuru et al. 2021, Table 1; MS MARCO QnA substitute for the Bing logs)"
MSMARCO_DOWNLOAD = (
    "MS MARCO QnA v2.1 from https://microsoft.github.io/msmarco/ (accept the terms of use; the files were "
    "published as https://msmarco.blob.core.windows.net/msmarco/train_v2.1.json.gz and dev_v2.1.json.gz). "
    "List them in qmdsir.files as downloaded (.json.gz) or decompressed (.json); v1.1 JSON lines "
    "(train_v1.1.json, dev_v1.1.json) are read too"
)
PROGRESS_SECONDS = 30.0


# ---------------------------------------------------------------------------------------------- files
def layout_help(folder: str | os.PathLike, q: Mapping) -> str:
    """The expected input layout for ``qmdsir.dir`` = ``folder`` and ``qmdsir.files`` (an error's hint)."""
    lines = ["Expected layout (qmdsir.dir, qmdsir.files: split -> files under the folder):", f"  {folder}/"]
    for split in SPLITS:
        names = list(q["files"].get(split) or [])
        for name in names:
            lines.append(f"    {name:<24} ({split})")
        if not names:
            if split == "test" and float(q["test_from_dev"]) > 0:
                lines.append(f"    (test: {float(q['test_from_dev']):.0%} of the dev queries, qmdsir.test_from_dev)")
            else:
                lines.append(f"    (no {split} file)")
    lines.append(f"The real files: {MSMARCO_DOWNLOAD}.")
    if q["standin"]:
        lines.append(
            "qmdsir.standin is true: the STAND-IN files are built from the Wikipedia sample by "
            "`wikiref qmdsir standin` (the Snakemake rule qmdsir_standin)."
        )
    return "\n".join(lines)


def input_files(folder: str | os.PathLike, q: Mapping) -> list[tuple[str, Path]]:
    """``(split, path)`` of every file of ``qmdsir.files`` under ``folder``, in split order. Raises
    :class:`QmdsIrError` (with :func:`layout_help`) for a missing folder or file, an unknown split, a
    file listed twice, or no file at all."""
    unknown = sorted(set(q["files"]) - set(SPLITS))
    if unknown:
        raise QmdsIrError(f"qmdsir.files: unknown split(s) {unknown}; the splits are {list(SPLITS)}")
    out: list[tuple[str, Path]] = []
    for split in SPLITS:
        for name in q["files"].get(split) or []:
            out.append((split, Path(folder) / name))
    names = [p.name for _, p in out]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise QmdsIrError(f"qmdsir.files lists {repeated} more than once (a file belongs to one split)")
    if not out:
        raise QmdsIrError(f"qmdsir.files lists no file\n{layout_help(folder, q)}")
    if not Path(folder).is_dir():
        raise QmdsIrError(f"the MS MARCO folder {folder} does not exist\n{layout_help(folder, q)}")
    missing = [str(p) for _, p in out if not p.is_file()]
    if missing:
        raise QmdsIrError(f"missing MS MARCO file(s) {missing}\n{layout_help(folder, q)}")
    return out


# --------------------------------------------------------------------------------------------- standin
def standin(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The standin job: STAND-IN MS MARCO QnA v2.1 files from the Wikipedia sample dump.

    ``params``: ``seed``, ``text`` (the spaCy pipeline), ``collect`` (how articles are parsed into
    sections) and ``qmdsir`` (``standin_queries``: at most this many queries, 0 = all);
    ``inputs["dump"]``: the dump (``<sample.out_dir>/dump/enwiki-sample.xml.bz2``);
    ``outputs["dir"]``: the folder, replaced as a whole once complete (``train_v2.1.json``,
    ``dev_v2.1.json``, ``NOTICE.txt``, ``MANIFEST.json``). Refuses (:class:`QmdsIrError`) to replace a
    non-empty folder that is not a stand-in (no MANIFEST.json with ``standin: true``), e.g. the real
    MS MARCO files. Returns the manifest."""
    from wikiref import text
    from wikiref.files import atomic_dir
    from wikiref.stages.qmdsir import standin as builder

    q = params["qmdsir"]
    out = Path(outputs["dir"])
    dump = Path(inputs["dump"])
    if out.exists() and any(out.iterdir()) and not (builder.read_manifest(out) or {}).get("standin"):
        raise QmdsIrError(
            f"{out} exists and is not a STAND-IN folder (no MANIFEST.json with standin: true); "
            "refusing to replace it (is it the real MS MARCO folder?)"
        )
    if not dump.is_file():
        raise QmdsIrError(f"the Wikipedia sample dump {dump} does not exist (built by `wikiref sample`)")
    t0 = time.monotonic()
    nlp = text.from_params(params["text"])
    queries, stats = builder.build_queries(
        dump, nlp=nlp, collect=params["collect"], seed=int(params["seed"]), max_queries=int(q["standin_queries"])
    )
    if not queries:
        raise QmdsIrError(f"{dump}: no article section with >= {builder.MIN_SENTENCES} sentences")
    with atomic_dir(out) as tmp:
        manifest = builder.write_standin(
            tmp, queries, stats, seed=int(params["seed"]), dump=dump, max_queries=int(q["standin_queries"])
        )
    log.info(
        "STAND-IN MS MARCO: %d queries (%s) from %d articles in %.1fs -> %s",
        len(queries),
        ", ".join(f"{k} {v}" for k, v in manifest["counts"]["by_kind"].items()),
        stats["articles"],
        time.monotonic() - t0,
        out,
    )
    return manifest


# ------------------------------------------------------------------------------------------------ part
class _Progress:
    """Logs records read, kept and records/s every :data:`PROGRESS_SECONDS`."""

    def __init__(self, tally, label: str):
        self.tally, self.label = tally, label
        self.t0 = self.last = time.monotonic()

    def kept(self) -> int:
        return sum(v for k, v in self.tally.counts.items() if k.startswith("kept:"))

    def rate(self) -> float:
        return self.tally.counts["records_read"] / max(time.monotonic() - self.t0, 1e-9)

    def tick(self) -> None:
        now = time.monotonic()
        if now - self.last >= PROGRESS_SECONDS:
            self.last = now
            log.info(
                "%s: %d records read, %d kept, %.0f records/s",
                self.label,
                self.tally.counts["records_read"],
                self.kept(),
                self.rate(),
            )


def part(params: Mapping, inputs: Mapping, outputs: Mapping, *, shard: int) -> dict:
    """The part job: one shard of the MS MARCO records -> QmdsIr examples.

    ``params``: ``seed`` (test carving), ``text`` (spaCy pipeline, ``batch_size``) and ``qmdsir``;
    ``inputs["dir"]`` (optional): the MS MARCO folder, by default ``qmdsir.dir``; ``shard``: this job's
    shard, ``0 <= shard < qmdsir.shards`` (a record's shard: :func:`wikiref.stages.qmdsir.reader.shard_of`);
    ``outputs``: ``examples`` (the shard's examples of every split, :data:`wikiref.schemas.EXAMPLE`,
    sorted by id) and ``stats`` (JSON: the shard, the files, ``counts`` = ``records_read``,
    ``kept:<split>``, every ``dropped:<reason>``, ``source_document_passages``, ``empty_passages``,
    and ``locations``: the first few places of each drop). Raises :class:`QmdsIrError` for a bad
    shard, a missing folder or file (the message shows the expected layout), a truncated v2.1 file, or
    a STAND-IN folder (MANIFEST.json) read with ``qmdsir.standin`` false. Returns the stats."""
    from wikiref import examples, text
    from wikiref.files import write_json, write_parquet
    from wikiref.stages.qmdsir import build, reader
    from wikiref.stages.qmdsir import standin as standin_builder

    q = params["qmdsir"]
    shards = int(q["shards"])
    if not 0 <= int(shard) < shards:
        raise QmdsIrError(f"shard {shard} is not in 0..{shards - 1} (qmdsir.shards = {shards})")
    folder = str(inputs.get("dir") or q["dir"])
    files = input_files(folder, q)
    manifest_standin = bool((standin_builder.read_manifest(folder) or {}).get("standin"))
    if manifest_standin and not q["standin"]:
        raise QmdsIrError(
            f"{folder} holds STAND-IN files (MANIFEST.json) but qmdsir.standin is false: its examples would "
            "not be labelled STAND-IN; set qmdsir.standin or point qmdsir.dir at the real MS MARCO files"
        )
    if q["standin"] and not manifest_standin:
        log.warning(
            "qmdsir.standin is true but %s has no stand-in MANIFEST.json; examples are labelled STAND-IN", folder
        )
    nlp = text.from_params(params["text"])
    builder = build.Builder(nlp, build.Config.from_params(params))
    tally = examples.Tally(max_locations=reader.MAX_LOCATIONS)
    seen: set[str] = set()
    keep = None if shards == 1 else (lambda key: reader.shard_of(key, shards) == int(shard))
    progress = _Progress(tally, f"qmdsir part {shard}/{shards}")

    def items() -> Iterator[tuple[reader.Record, str]]:
        for split, path in files:
            log.info("reading %s (%s, %s)", path, split, reader.detect_layout(path))
            for record in reader.iter_records(path, tally, keep=keep, seen=seen):
                yield record, split
                progress.tick()

    rows = list(builder.build(items(), tally))
    write_parquet(outputs["examples"], examples.to_table(rows))
    stats = {
        "shard": int(shard),
        "shards": shards,
        "standin": bool(q["standin"]),
        "dir": folder,
        "files": {s: [p.name for split, p in files if split == s] for s in SPLITS},
        **tally.to_json(),
    }
    write_json(outputs["stats"], stats)
    seconds = time.monotonic() - progress.t0
    log.info(
        "qmdsir part %d/%d: %d records read, %d examples (%s), %d dropped in %.1fs (%.0f records/s)",
        shard,
        shards,
        tally.counts["records_read"],
        len(rows),
        ", ".join(f"{s} {tally.counts[f'kept:{s}']}" for s in SPLITS),
        sum(examples.drop_counts(tally.counts).values()),
        seconds,
        progress.rate(),
    )
    return stats


# ----------------------------------------------------------------------------------------------- merge
def _notes(q: Mapping, counts: Mapping, standin: bool) -> str:
    from wikiref.examples import drop_counts

    test = (
        f"test = {float(q['test_from_dev']):.0%} of the dev queries (seeded hash of query_id)"
        if not (q["files"].get("test") or [])
        else "test = the qmdsir.files test file(s)"
    )
    drops = ", ".join(f"{k} {v}" for k, v in drop_counts(counts).items()) or "none"
    notes = (
        "MS MARCO QnA stands in for the paper's private Bing logs: query = the Bing search query; summary = the "
        "first selected (is_selected = 1) passage in spaCy sentences; documents = the other passages minus those "
        f"from the summary passage's URL (the answer's source document; {counts.get('source_document_passages', 0)} "
        f"omitted) and empty ones. Kept when the summary has >= {q['min_summary_sentences']} sentences, "
        f">= {q['min_documents']} documents remain and every summary sentence has ROUGE-1 recall >= "
        f"{q['min_coverage_recall']} in some document (rouge-score tokens, Porter stemming). {test}. "
        f"Records read {counts.get('records_read', 0)}; dropped: {drops}. Documents are MS MARCO passages "
        "(a few sentences), not the paper's whole web pages: document lengths are not comparable."
    )
    if standin:
        notes += " STAND-IN: the MS MARCO-format files were built from the Wikipedia sample, not MS MARCO."
    return notes


def merge(params: Mapping, inputs: Mapping, outputs: Mapping) -> dict:
    """The merge job: the shards' examples -> the QmdsIr split files, statistics table and metrics.

    ``params``: ``profile`` and ``qmdsir``; ``inputs``: ``parts`` (the part Parquet files) and ``stats``
    (their stats JSON); ``outputs``: ``splits`` (split -> path), ``table`` (stem: .csv/.md/.tex) and
    ``metrics`` (JSON). Checks that the stats cover every shard exactly once, that no example id is in
    two parts and that the parts hold as many examples as the stats kept (else :class:`QmdsIrError`);
    sums the counts. Returns the metrics of :func:`wikiref.examples.finish`."""
    from wikiref import examples
    from wikiref.files import read_json

    q = params["qmdsir"]
    stats = [read_json(p) for p in inputs["stats"]]
    shards = sorted(int(s["shard"]) for s in stats)
    expected = {int(s["shards"]) for s in stats}
    if len(expected) > 1 or shards != list(range(next(iter(expected), 0))) or not stats:
        raise QmdsIrError(
            f"the stats files cover shards {shards} of {sorted(expected)}: every shard of one qmdsir.shards "
            f"must be given exactly once ({list(inputs['stats'])})"
        )
    counts: Counter = Counter()
    for s in stats:
        counts.update(s["counts"])
        for reason, where in s.get("locations", {}).items():
            log.info("dropped:%s, e.g. %s (shard %s)", reason, ", ".join(where), s["shard"])
    rows: list[dict] = []
    owner: dict[str, str] = {}
    duplicates: list[str] = []
    for path in inputs["parts"]:
        for row in examples.read(path).to_pylist():
            if row["id"] in owner:
                duplicates.append(f"{row['id']} ({owner[row['id']]}, {path})")
            owner[row["id"]] = str(path)
            rows.append(row)
    if duplicates:
        raise QmdsIrError(f"{len(duplicates)} example id(s) in two parts, e.g. {duplicates[:5]}")
    kept = sum(v for k, v in counts.items() if k.startswith("kept:"))
    if kept != len(rows):
        raise QmdsIrError(f"the parts hold {len(rows)} examples but their stats count {kept} kept: mismatched files")
    standin = any(r["standin"] for r in rows) or bool(q["standin"])
    metrics = examples.finish(
        SOURCE,
        rows,
        outputs,
        profile=params["profile"],
        title=TITLE,
        counts=dict(counts),
        notes=_notes(q, counts, standin),
    )
    log.info(
        "qmdsir merge: %d examples (%s) from %d parts -> %s",
        len(rows),
        ", ".join(f"{k} {v}" for k, v in metrics["sizes"].items()),
        len(inputs["parts"]),
        outputs["metrics"],
    )
    return metrics
