"""Benchmark: the Psg2Sum history miner's throughput (revisions/s, MB/s of history XML) beside plain
decompression of the same file, its peak memory on a very large page, and an estimate for the full English
page-history dump.

    python bench/psg2sum.py            # every sample article + synthetic long histories (~3-4 min)
    python bench/psg2sum.py --quick    # smaller inputs (< 1 min)
    python bench/psg2sum.py --xml-tb 20 --parts 700 --article-share 0.6   # other assumptions for the estimate

Inputs (built in a scratch folder, labelled STAND-IN: nothing here is Wikipedia's real history):

``standin``
    ``psg2sum.standin`` (the stage's own job, params.yaml's parameters) over every article of the sample
    dump (``--quick``: 12): 7-9 revisions a page (the edits the miner must handle: lead sentence + passage
    added together, vandalism and its revert, body-only, copyedit and bot-sized edits).
``synthetic``
    Long histories for a realistic revisions-per-page ratio: pages of the stand-in (evenly spread over its
    size range; 6, ``--quick`` 2) replayed over ``--revs`` revisions each (50-200, ``--quick`` 20-40;
    seeded): copyedits (one word), body paragraphs added or removed, lead sentence + body passage added
    together, a lead sentence alone, null edits, vandalism and bot-sized pastes each reverted by the next
    revision. Written with
    ``collect.dump.export_xml`` and bz2 (level 9), as the stand-in is.

For each input, side by side in one run on the same file (JSON lines ``{"bench": "psg2sum_stage", ...}``):

  (a) ``decompress``   ``history.open_history`` read to the end (1 MiB blocks), nothing else
  (b) ``reader``       ``history.iter_pages`` + every revision of every page exhausted
  (c) ``parse``        (b) + ``history.page_edits`` + ``Miner.parse`` of both sides of every kept edit (as
                       the part job does: the child's parse reused as the next parent's)
  (d) ``part``         the whole part job ``stage.part`` (mining, checkpoints, parquet + stats written;
                       the spaCy pipeline is already loaded in this process)

with revisions/s (revisions read), MB/s of XML and each stage as a multiple of (a). (a) and (b) are the
fastest of ``--repeat`` passes; (c) and (d) run once (the machine may be shared). A line
``psg2sum_mwparserfromhell`` gives the share of ``Miner.parse`` (without its caches) spent in
``mwparserfromhell.parse`` (the parser the paper prescribes) on a sample of the kept revisions.

Correctness (``{"bench": "psg2sum_compare", ...}``, exit 1 on any difference): the part job's pairs (the
parquet it wrote) against a straightforward re-implementation of the same rules over fully materialised
page histories (:func:`reference_pairs`): each ``<page>`` element parsed whole with
``xml.etree.ElementTree.iterparse``, its revisions listed (deleted text and non-wikitext models left
out, sha1 from the dump or recomputed here), then for each revision against the previous listed one:
no change, revert (sha1 of any earlier revision of the page), redirect on either side, length difference
above ``max_edit_chars``, else ``Miner.mine`` on the two parses. Pairs are compared as multisets of
(page, title, revision, parent, timestamp, summary, passage, section, score, candidates), and the
rule counters (first, no_change, revert, redirect, large_edit, edits, pairs) must agree too. The wikitext
parser and the pairing are the shared ``Miner.parse``/``Miner.mine`` by design (what is checked is the
streaming reader, the edit rules and the job's bookkeeping); the reference's parses are memoised from (c)
by text to save time.

Memory (``{"bench": "psg2sum_rss", ...}``): files with very large pages (``--rss-revs`` revisions of
``--rss-kb`` KB each: 2,000 x 100 KB, ``--quick`` 200 x 100 KB; one page, then 10 such pages; .xml.gz
level 1, so that writing them is fast), each read in a fresh subprocess that reports its own peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``): ``decompress`` (same imports, the file only
decompressed), ``reader`` (``iter_pages``, every revision exhausted) and, for contrast, ``materialise``
(the reference's reader, which holds a whole page). The reader's peak must not grow by a page's size from
1 page to 10 pages (exit 1 otherwise). This section runs first, before this process loads spaCy: on Linux
a child's ru_maxrss starts from its parent's RSS at the fork, so it is only meaningful from a small parent
(``parent_maxrss_mb_at_spawn``); ``*_vmhwm_mb`` is the child's own high-water mark (``VmHWM``, reset by
exec), as a cross-check.

Estimate (``{"bench": "psg2sum_estimate", ...}``): CPU hours for the full English page-history dump, in
total and per part job. Cost model, per byte of XML (a revision's cost grows with its text, and the
stand-in's revisions are whole current articles, larger than the average historical revision, so bytes,
not revisions, are the unit): every byte is read (b) and the bytes of mined pages (namespace 0, not
redirects) also cost (d) - (b). Figures used, each with its source or marked as an assumption:

* XML size: about 5.87e12 bytes (5.34 TiB) for en.wikipedia's January 2010 full-history dump (Meta-Wiki,
  "Data dumps/Dump format"); later dumps are larger, so this is a floor (``--xml-tb`` for another size).
* Share of those bytes in mined pages: ASSUMED 0.5 (no source at hand; ``--article-share``); the
  estimate is also given at 0 (read only) and 1 (everything mined).
* Part files: ASSUMED 600 (the dump is published as numbered groups split into page-range files such as
  ``enwiki-20190101-pages-meta-history1.xml-p10p2062``; their count varies with the dump date and is not
  taken from a source here; ``--parts``).
* Revisions per page, for the synthetic input's ``--revs``: English Wikipedia had 60,533,450 pages on
  26 April 2024 (Wikipedia:Size of Wikipedia) and its revision ids passed 1,000,000,000 around
  15 January 2021 (The Signpost, "Counting to a billion", reprinted 2024-07-04): ~17 revisions per page
  over all namespaces (figures three years apart; ids also count deleted revisions). Articles are edited
  more than the average page (talk, user, redirect pages): the synthetic pages get more (ASSUMED range,
  as are the mix of edits: half copyedits, a tenth vandalism, a tenth lead + passage additions...).

A last line ``{"bench": "psg2sum_summary", "ok": ...}``. Human-readable lines go to stderr. Everything runs
on one core (``7z`` dumps would decompress in a second process; bz2 is decompressed in-process here).
"""

from __future__ import annotations

import argparse
import bz2
import datetime as dt
import gc
import gzip
import hashlib
import json
import platform
import random
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from xml.etree.ElementTree import iterparse
from xml.sax.saxutils import escape

from wikiref.benchmarks import best_of, stage_params

REPO = Path(__file__).resolve().parents[1]

CITED = {
    "xml_bytes_jan2010": 5.87e12,
    "xml_bytes_jan2010_source": (
        "meta.wikimedia.org/wiki/Data_dumps/Dump_format: en.wikipedia.org's January 2010 full-history dump "
        "is about 5.87e12 bytes (5.34 TiB) raw"
    ),
    "pages_2024": 60_533_450,
    "articles_2024": 6_816_939,
    "pages_source": "en.wikipedia.org/wiki/Wikipedia:Size_of_Wikipedia, as of 26 April 2024",
    "revision_ids_2021": 1_000_000_000,
    "revision_ids_source": (
        "The Signpost, 'Counting to a billion' (reprinted 2024-07-04): revision id 1,000,000,000 around "
        "15 January 2021 (ids count every namespace and deleted revisions)"
    ),
}
ASSUMED = {
    "article_share": 0.5,
    "parts": 600,
    "note": "assumptions, not measured and not taken from a source: see the module docstring",
}
RULE_COUNTERS = (
    "revisions:first",
    "skipped:no_change",
    "skipped:revert",
    "skipped:redirect",
    "skipped:large_edit",
    "edits:yielded",
    "pairs_kept",
)
ROW_FIELDS = (
    "page_id",
    "title",
    "rev_id",
    "parent_rev_id",
    "timestamp",
    "summary",
    "passage",
    "section",
    "score",
    "candidates",
)
SYNTH_NOTICE = (
    "STAND-IN: synthetic page histories made by bench/psg2sum.py from the psg2sum STAND-IN (itself built "
    "from the offline sample's current article text); NOT Wikipedia's history.\n"
)
START = dt.datetime(2020, 1, 1)
_B36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_REDIRECT = re.compile(r"\s*#\s*redirect\s*:?\s*\[\[", re.IGNORECASE)
_HEADING_LINE = re.compile(r"(?m)^=+[^=\n].*?=+\s*$")
_NOT_PROSE = ("{{", "{|", "|", "!", "*", "#", ":", ";", "[[File:", "[[Image:", "[[Category:", "<!--", "__", "=")


def say(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def make_miner(p: dict, nlp=None, **kw):
    """A Miner configured as the part job configures it (params of the ``part`` job)."""
    from wikiref.stages.psg2sum.mining import Miner
    from wikiref.text import from_params

    return Miner(
        nlp if nlp is not None else from_params(p["text"]),
        skip_sections=p["collect"]["statements"]["skip_sections"],
        min_sentence_tokens=int(p["psg2sum"]["min_sentence_tokens"]),
        min_passage_tokens=int(p["psg2sum"]["min_passage_tokens"]),
        **kw,
    )


# ------------------------------------------------------------------------------------ the reference


def sha1_base36(text: str) -> str:
    """A revision's sha1 as MediaWiki writes it (SHA-1 of the UTF-8 text, base 36, 31 digits)."""
    n = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    out = ""
    while n:
        n, r = divmod(n, 36)
        out = _B36[r] + out
    return out.rjust(31, "0")


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def _child(el, name: str):
    for c in el:
        if _local(c.tag) == name:
            return c
    return None


def materialised_pages(path) -> Iterator[dict]:
    """Every page of a history file with its whole revision list (the ``<page>`` element parsed at once):
    {page_id, title, ns, redirect, revisions: [{rev_id, timestamp, sha1, text (None: no usable text)}]}."""
    from wikiref.stages.psg2sum.history import open_history

    ns_names: dict[str, int] = {}
    with open_history(path) as fh:
        root = None
        for event, el in iterparse(fh, events=("start", "end")):
            if event == "start":
                if root is None:
                    root = el
                continue
            tag = _local(el.tag)
            if tag == "siteinfo":
                ns_names = {
                    (n.text or "").strip(): int(n.get("key", "0"))
                    for n in el.iter()
                    if _local(n.tag) == "namespace" and (n.text or "").strip()
                }
                root.clear()
            elif tag == "page":
                title = _child(el, "title").text or ""
                ns_el = _child(el, "ns")
                if ns_el is not None:
                    ns = int(ns_el.text)
                else:  # export 0.3: from the title's prefix
                    prefix, sep, _ = title.partition(":")
                    ns = ns_names.get(prefix, 0) if sep else 0
                revisions = []
                for rev in el:
                    if _local(rev.tag) != "revision":
                        continue
                    text_el, model_el, sha_el = _child(rev, "text"), _child(rev, "model"), _child(rev, "sha1")
                    model = (model_el.text or "").strip() if model_el is not None else ""
                    usable = text_el is not None and text_el.get("deleted") is None and model in ("", "wikitext")
                    text = (text_el.text or "") if usable else None
                    sha1 = (sha_el.text or "").strip() if sha_el is not None else ""
                    stamp = _child(rev, "timestamp")
                    revisions.append(
                        {
                            "rev_id": int(_child(rev, "id").text),
                            "timestamp": (stamp.text or "").strip() if stamp is not None else "",
                            "sha1": sha1 or (sha1_base36(text) if text is not None else ""),
                            "text": text,
                        }
                    )
                yield {
                    "page_id": int(_child(el, "id").text),
                    "title": title,
                    "ns": ns,
                    "redirect": _child(el, "redirect") is not None,
                    "revisions": revisions,
                }
                root.clear()  # the page is done: drop it


def reference_edits(revisions: list[dict], max_edit_chars: int | None, counts: Counter) -> list[tuple[dict, dict]]:
    """The (previous, revision) pairs to mine of one page's full revision list, by the stage's rules."""
    listed = [r for r in revisions if r["text"] is not None]
    edits = []
    for i, cur in enumerate(listed):
        if i == 0:
            counts["revisions:first"] += 1
            continue
        prev = listed[i - 1]
        earlier = {r["sha1"] for r in listed[:i]}
        if cur["text"] == prev["text"]:
            counts["skipped:no_change"] += 1
        elif cur["sha1"] in earlier:
            counts["skipped:revert"] += 1
        elif _REDIRECT.match(cur["text"]) or _REDIRECT.match(prev["text"]):
            counts["skipped:redirect"] += 1
        elif max_edit_chars is not None and abs(len(cur["text"]) - len(prev["text"])) > max_edit_chars:
            counts["skipped:large_edit"] += 1
        else:
            counts["edits:yielded"] += 1
            edits.append((prev, cur))
    return edits


def reference_pairs(
    path,
    miner,
    *,
    namespaces=(0,),
    max_edit_chars: int | None = 20000,
    min_score: float = 0.5,
    parse: Callable | None = None,
) -> tuple[list[dict], Counter]:
    """(pair rows, rule counters) of a history file by the straightforward route (module docstring)."""
    parse = parse or miner.parse
    rows: list[dict] = []
    counts: Counter = Counter()
    for page in materialised_pages(path):
        if page["ns"] not in namespaces or page["redirect"]:
            continue
        for prev, cur in reference_edits(page["revisions"], max_edit_chars, counts):
            for pair in miner.mine(parse(prev["text"]), parse(cur["text"]), min_score=min_score):
                counts["pairs_kept"] += 1
                rows.append(
                    {
                        "page_id": page["page_id"],
                        "title": page["title"],
                        "rev_id": cur["rev_id"],
                        "parent_rev_id": prev["rev_id"],
                        "timestamp": cur["timestamp"],
                        "summary": pair.summary,
                        "passage": pair.passage.text,
                        "section": list(pair.passage.section),
                        "score": float(pair.score),
                        "candidates": int(pair.candidates),
                    }
                )
    return rows, counts


def row_key(row: dict) -> tuple:
    return tuple(tuple(row[f]) if f == "section" else row[f] for f in ROW_FIELDS)


def compare_pairs(
    stage_rows: list[dict],
    ref_rows: list[dict],
    stage_counts: dict | None = None,
    ref_counts: dict | None = None,
    limit: int = 3,
) -> dict:
    """The two pair sets (multisets of :data:`ROW_FIELDS`) and, when given, the rule counters compared."""
    ours, theirs = Counter(map(row_key, stage_rows)), Counter(map(row_key, ref_rows))
    only_stage, only_ref = ours - theirs, theirs - ours
    out = {
        "pairs_stage": sum(ours.values()),
        "pairs_reference": sum(theirs.values()),
        "only_stage": sum(only_stage.values()),
        "only_reference": sum(only_ref.values()),
        "examples_only_stage": [dict(zip(ROW_FIELDS, k)) for k in sorted(only_stage, key=repr)[:limit]],
        "examples_only_reference": [dict(zip(ROW_FIELDS, k)) for k in sorted(only_ref, key=repr)[:limit]],
    }
    diffs = {}
    if stage_counts is not None and ref_counts is not None:
        for key in RULE_COUNTERS:
            a, b = int(stage_counts.get(key, 0)), int(ref_counts.get(key, 0))
            if a != b:
                diffs[key] = {"stage": a, "reference": b}
    out["counter_differences"] = diffs
    out["same"] = not only_stage and not only_ref and not diffs
    return out


# ---------------------------------------------------------------------------------------------- inputs


def build_standin(tmp: Path, articles: int) -> Path:
    """The stage's STAND-IN history (one part) from the sample dump."""
    from wikiref.stages.psg2sum import stage
    from wikiref.stages.sample import locate_gensim_dump

    dump = tmp / "dump.xml.bz2"
    shutil.copyfile(locate_gensim_dump(), dump)
    p = stage_params("psg2sum", "standin")
    p["psg2sum"]["standin_articles"] = articles
    p["psg2sum"]["dump"]["parts"] = ["standin"]
    stage.standin(p, {"dump": dump}, {"dir": tmp / "standin"})
    return tmp / "standin" / "standin.xml.bz2"


def _blocks(text: str) -> list[str]:
    return [b for b in re.split(r"\n\s*\n", text.strip("\n")) if b.strip()]


def _is_heading_block(block: str) -> bool:
    return _HEADING_LINE.search(block) is not None


def _is_prose(block: str) -> bool:
    return not block.lstrip().startswith(_NOT_PROSE) and not _is_heading_block(block) and len(block.split()) >= 25


def _first_sentence(block: str) -> str:
    text = re.sub(r"<ref[^>]*/>|<ref[^>]*>.*?</ref>", "", block, flags=re.S)
    m = re.match(r"(.+?[.!?])\s+(?=[A-Z\[])", text, flags=re.S)
    sent = " ".join((m.group(1) if m else text).split())
    return sent if len(sent.split()) >= 8 else ""


SYNTH_OPS = {
    "copyedit": 0.50,
    "add_body": 0.10,
    "add_lead_and_body": 0.10,
    "lead_sentence": 0.05,
    "remove_body": 0.05,
    "vandalism": 0.10,
    "null_edit": 0.04,
    "bot_paste": 0.03,
}
_FILLERS = ("very", "notably", "also", "early", "largely")


def synthetic_revisions(text: str, n: int, rng: random.Random, bot_chars: int = 30000) -> list[tuple[str, str]]:
    """``n`` revisions (text, comment) of a page whose last known text is ``text`` (module docstring)."""
    blocks = _blocks(text)
    first_heading = next((i for i, b in enumerate(blocks) if _is_heading_block(b)), len(blocks))
    body_prose = [i for i, b in enumerate(blocks) if i > first_heading and _is_prose(b)]
    held = set(rng.sample(body_prose, len(body_prose) // 2))
    pool = [blocks[i] for i in sorted(held)]
    blocks = [b for i, b in enumerate(blocks) if i not in held]
    out: list[tuple[str, str]] = [("\n\n".join(blocks) + "\n", "first revision")]
    names, weights = list(SYNTH_OPS), list(SYNTH_OPS.values())

    def lead_end() -> int:
        return next((i for i, b in enumerate(blocks) if _is_heading_block(b)), len(blocks))

    def body_slot() -> int:
        return rng.randint(min(lead_end() + 1, len(blocks)), len(blocks))

    def add_to_lead(sentence: str) -> None:
        lead = [i for i in range(lead_end()) if not blocks[i].lstrip().startswith(_NOT_PROSE)]
        if lead:
            blocks[lead[-1]] = blocks[lead[-1]].rstrip() + " " + sentence
        else:
            blocks.insert(lead_end(), sentence)

    while len(out) < n:
        op = rng.choices(names, weights)[0]
        before = "\n\n".join(blocks) + "\n"
        prose = [i for i, b in enumerate(blocks) if _is_prose(b)]
        body = [i for i in prose if i > lead_end()]
        if op == "copyedit" and prose:
            i = rng.choice(prose)
            words = blocks[i].split(" ")
            j = rng.randrange(1, len(words))
            if words[j] in _FILLERS:
                del words[j]
            else:
                words.insert(j, rng.choice(_FILLERS))
            blocks[i] = " ".join(words)
        elif op in ("add_body", "add_lead_and_body") and pool:
            passage = pool.pop(rng.randrange(len(pool)))
            blocks.insert(body_slot(), passage)
            sentence = _first_sentence(passage)
            if op == "add_lead_and_body" and sentence:
                add_to_lead(sentence)
        elif op == "lead_sentence" and body:
            sentence = _first_sentence(blocks[rng.choice(body)])
            if sentence:
                add_to_lead(sentence)
        elif op == "remove_body" and body:
            pool.append(blocks.pop(rng.choice(body)))
        elif op == "vandalism" and len(out) + 1 < n:
            i = rng.randrange(len(blocks))
            saved = blocks[i]
            blocks[i] = "LOL " * rng.randint(1, 20)
            out.append(("\n\n".join(blocks) + "\n", "vandalism"))
            blocks[i] = saved
            op = "revert"
        elif op == "bot_paste" and len(out) + 1 < n:
            out.append((before + "\n" + ("Imported table row. " * (bot_chars // 20 + 1))[:bot_chars] + "\n", "bot"))
            op = "revert"
        elif op != "null_edit":
            continue  # nothing to do on this page: draw again
        out.append(("\n\n".join(blocks) + "\n", op))
    return out[:n]


def build_synthetic(standin: Path, out_dir: Path, pages: int, revs: tuple[int, int], seed: int) -> Path:
    """``pages`` pages of the stand-in (evenly spread over its size range), each replayed over a seeded
    number of revisions in ``revs`` -> ``out_dir/synthetic.xml.bz2`` (+ NOTICE.txt: STAND-IN)."""
    from wikiref.examples import Tally
    from wikiref.stages.psg2sum.history import iter_pages
    from wikiref.wiki.dump import ExportPage, ExportRevision, export_xml

    finals = []
    for page_id, title, revisions in iter_pages(standin, Tally()):
        text = ""
        for rev in revisions:
            text = rev.text
        finals.append((len(text), page_id, title, text))
    finals.sort()
    step = max(1, len(finals) // max(1, pages))
    chosen = finals[step // 2 :: step][:pages]
    out_pages = []
    for k, (_, page_id, title, text) in enumerate(sorted(chosen, key=lambda c: c[1])):
        rng = random.Random(f"{seed}:psg2sum-bench:{page_id}")
        history = synthetic_revisions(text, rng.randint(*revs), rng)
        new_id = 1_000_000 + k
        revisions = tuple(
            ExportRevision(
                rev_id=new_id * 1000 + j + 1,
                parent_id=new_id * 1000 + j if j else None,
                timestamp=(START + dt.timedelta(days=k, hours=j)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                user=f"Editor-{rng.randint(1, 40)}",
                comment=f"{comment} (STAND-IN synthetic history, bench/psg2sum.py)",
                text=t,
            )
            for j, (t, comment) in enumerate(history)
        )
        out_pages.append(ExportPage(new_id, title, 0, revisions))
    xml = export_xml(out_pages, sitename="Wikipedia (STAND-IN)", generator="bench/psg2sum.py", namespaces={0: ""})
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "NOTICE.txt").write_text(SYNTH_NOTICE, encoding="utf-8")
    path = out_dir / "synthetic.xml.bz2"
    path.write_bytes(bz2.compress(xml.encode("utf-8"), 9))
    return path


def write_big_pages(path: Path, n_pages: int, n_revisions: int, rev_kb: int, seed: int = 0) -> int:
    """A history file of ``n_pages`` pages of ``n_revisions`` revisions of ~``rev_kb`` KB (streamed into
    .xml.gz, level 1); the dump's sha1 are placeholders (the reader does not check them). -> XML bytes."""
    rng = random.Random(seed)
    vocab = [w for w in re.findall(r"[a-z]+", __doc__.lower()) if len(w) > 3]
    para = " ".join(rng.choice(vocab) for _ in range(300)).capitalize() + "."
    base = "\n\n".join([para] * max(1, rev_kb * 1000 // (len(para) + 2))) + "\n"
    esc_base = escape(base)
    written = 0
    with gzip.open(path, "wb", compresslevel=1) as fh:

        def put(s: str) -> None:
            nonlocal written
            b = s.encode("utf-8")
            written += len(b)
            fh.write(b)

        put(
            '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" xml:lang="en">\n'
            '  <siteinfo>\n    <sitename>STAND-IN</sitename>\n    <namespaces>\n      <namespace key="0" />\n'
            "    </namespaces>\n  </siteinfo>\n"
        )
        for p in range(n_pages):
            page_id = p + 1
            put(f"  <page>\n    <title>Large page {page_id}</title>\n    <ns>0</ns>\n    <id>{page_id}</id>\n")
            for r in range(n_revisions):
                rev_id = page_id * 10_000_000 + r + 1
                tail = f"Revision {r} of page {page_id}.\n"
                nbytes = len(base.encode("utf-8")) + len(tail)
                parent = f"      <parentid>{rev_id - 1}</parentid>\n" if r else ""
                put(
                    f"    <revision>\n      <id>{rev_id}</id>\n{parent}"
                    "      <timestamp>2020-01-01T00:00:00Z</timestamp>\n"
                    "      <contributor>\n        <username>Editor</username>\n        <id>1</id>\n"
                    "      </contributor>\n"
                    "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
                    f'      <text bytes="{nbytes}" xml:space="preserve">{esc_base}{tail}</text>\n'
                    f"      <sha1>{page_id:015d}{r:016d}</sha1>\n    </revision>\n"
                )
            put("  </page>\n")
        put("</mediawiki>\n")
    return written


# ---------------------------------------------------------------------------------------------- stages


def run_decompress(path) -> int:
    from wikiref.stages.psg2sum.history import open_history

    n = 0
    with open_history(path) as fh:
        while block := fh.read(1 << 20):
            n += len(block)
    return n


def run_reader(path, namespaces=(0,)) -> dict:
    from wikiref.examples import Tally
    from wikiref.stages.psg2sum.history import iter_pages

    tally = Tally()
    pages = revisions = chars = 0
    for _page_id, _title, revs in iter_pages(path, tally, namespaces=namespaces):
        pages += 1
        for rev in revs:
            revisions += 1
            chars += len(rev.text)
    return {"pages": pages, "revisions": revisions, "chars": chars, "counts": dict(tally.counts)}


def run_parse(path, miner, p: dict, memo: dict | None = None) -> dict:
    """(c): the part job's loop without mining and writing."""
    from wikiref.examples import Tally
    from wikiref.stages.psg2sum import history

    tally = Tally()
    edits = 0
    max_edit = p["psg2sum"]["max_edit_chars"]
    for page_id, title, revisions in history.iter_pages(path, tally, namespaces=tuple(p["psg2sum"]["namespaces"])):
        parsed: dict = {}
        for edit in history.page_edits(page_id, title, revisions, tally, max_edit_chars=max_edit):
            parent = parsed.get(edit.parent.rev_id) or miner.parse(edit.parent.text)
            child = miner.parse(edit.child.text)
            parsed = {edit.child.rev_id: child}
            edits += 1
            if memo is not None:
                memo[edit.parent.text] = parent
                memo[edit.child.text] = child
    return {"edits": edits, "counts": dict(tally.counts)}


def run_part(path, p: dict, out_dir: Path, label: str) -> dict:
    from wikiref.stages.psg2sum import stage

    if out_dir.exists():
        shutil.rmtree(out_dir)
    out_dir.mkdir(parents=True)
    outputs = {"pairs": out_dir / f"{label}.parquet", "stats": out_dir / f"{label}.json"}
    stats = stage.part(p, {"dump": str(path)}, outputs, part_name=label)
    return {"stats": stats, "pairs_path": outputs["pairs"]}


def read_rows(path) -> list[dict]:
    import pyarrow.parquet as pq

    return pq.read_table(str(path)).to_pylist()


def mwparserfromhell_share(texts: list[str], p: dict, nlp) -> dict:
    """Seconds of mwparserfromhell.parse alone vs Miner.parse without its caches over the same texts
    (fastest of 2 passes each)."""
    import mwparserfromhell

    miner = make_miner(p, nlp, parse_cache=0, split_cache=0)  # every text parsed and split

    def ours() -> None:
        for t in texts:
            miner.parse(t)

    def floor() -> None:
        for t in texts:
            mwparserfromhell.parse(t)  # the tree dropped at once, as Miner.parse drops it

    t_parse, _ = best_of(ours, 2)
    t_mwp, _ = best_of(floor, 2)
    return {"texts": len(texts), "mwparserfromhell_seconds": round(t_mwp, 3), "miner_parse_seconds": round(t_parse, 3)}


def bench_file(label: str, path: Path, args, p: dict, nlp, tmp: Path) -> dict:
    compressed = path.stat().st_size
    t_a, xml_bytes = best_of(lambda: run_decompress(path), args.repeat)
    mb = xml_bytes / 1e6
    t_b, read = best_of(lambda: run_reader(path, tuple(p["psg2sum"]["namespaces"])), args.repeat)
    revisions = read["revisions"]
    say(f"[{label}] {read['pages']} pages, {revisions} revisions, {mb:.1f} MB XML ({compressed / 1e6:.1f} MB bz2)")
    emit(
        {
            "bench": "psg2sum_input",
            "input": label,
            "file": str(path),
            "standin": True,
            "pages": read["pages"],
            "revisions": revisions,
            "revisions_per_page": round(revisions / max(1, read["pages"]), 1),
            "xml_mb": round(mb, 2),
            "compressed_mb": round(compressed / 1e6, 2),
            "mean_revision_kb": round(xml_bytes / max(1, revisions) / 1e3, 1),
            "python": platform.python_version(),
            "machine": platform.machine(),
        }
    )
    miner = make_miner(p, nlp)
    memo: dict = {}
    gc.collect()
    t0 = time.perf_counter()
    parsed = run_parse(path, miner, p, memo)
    t_c = time.perf_counter() - t0
    gc.collect()
    t0 = time.perf_counter()
    part = run_part(path, p, tmp / f"out-{label}", label)
    t_d = time.perf_counter() - t0
    times = {"decompress": t_a, "reader": t_b, "parse": t_c, "part": t_d}
    extra = {
        "decompress": {"repeat": args.repeat},
        "reader": {"repeat": args.repeat, "pages": read["pages"]},
        "parse": {"edits_parsed": parsed["edits"]},
        "part": {"pairs": part["stats"]["pairs"], "edits": part["stats"]["counts"].get("edits", 0)},
    }
    for name, t in times.items():
        rec = {
            "bench": "psg2sum_stage",
            "input": label,
            "stage": name,
            "seconds": round(t, 3),
            "revisions": revisions,
            "revisions_per_s": round(revisions / t, 1),
            "xml_mb": round(mb, 2),
            "xml_mb_per_s": round(mb / t, 2),
            "x_decompress": round(t / t_a, 2),
            **extra[name],
        }
        emit(rec)
        say(f"[{label}] {name:10s} {t:8.2f} s  {revisions / t:9.1f} rev/s  {mb / t:7.2f} MB/s  x{t / t_a:.1f} of bz2")

    # the share of the wikitext parser (a sample of the kept revisions, cold)
    texts = list(memo)
    sample = texts[:: max(1, len(texts) // max(1, args.mwp_sample))][: args.mwp_sample]  # spread over the file
    share = mwparserfromhell_share(sample, p, nlp)
    share.update(
        bench="psg2sum_mwparserfromhell",
        input=label,
        mwparserfromhell_share=round(share["mwparserfromhell_seconds"] / share["miner_parse_seconds"], 3),
    )
    emit(share)

    # correctness: the part job's pairs vs the reference over materialised pages
    ref_miner = make_miner(p, nlp)

    def memo_parse(text: str):
        got = memo.get(text)
        return got if got is not None else ref_miner.parse(text)

    ref_rows, ref_counts = reference_pairs(
        path,
        ref_miner,
        namespaces=tuple(p["psg2sum"]["namespaces"]),
        max_edit_chars=p["psg2sum"]["max_edit_chars"],
        min_score=min(float(x) for x in p["psg2sum"]["overlap_grid"]),
        parse=memo_parse,
    )
    cmp = compare_pairs(read_rows(part["pairs_path"]), ref_rows, part["stats"]["counts"], ref_counts)
    emit(
        {
            "bench": "psg2sum_compare",
            "input": label,
            **cmp,
            "rule_counts": {k: int(part["stats"]["counts"].get(k, 0)) for k in RULE_COUNTERS},
        }
    )
    say(
        f"[{label}] pairs: part job {cmp['pairs_stage']}, reference {cmp['pairs_reference']}, "
        f"{'same' if cmp['same'] else 'DIFFERENT'}"
    )
    return {
        "label": label,
        "xml_bytes": xml_bytes,
        "revisions": revisions,
        "times": times,
        "same": cmp["same"],
        "pairs": cmp["pairs_stage"],
    }


# ------------------------------------------------------------------------------------------------- RSS


def vm_hwm_mb() -> float | None:
    """This process image's peak RSS from /proc/self/status (VmHWM; Linux), or None."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return None


def rss_child(mode: str, path: str) -> None:
    """Run in a fresh process: one mode over ``path``, then print its own peak RSS (JSON)."""
    from wikiref import examples  # noqa: F401 (the same imports in every mode)
    from wikiref.stages.psg2sum import history  # noqa: F401

    t0 = time.perf_counter()
    revisions = 0
    if mode == "decompress":
        size = run_decompress(path)
    elif mode == "reader":
        r = run_reader(path)
        revisions, size = r["revisions"], r["chars"]
    elif mode == "materialise":
        size = 0  # characters of text held
        for page in materialised_pages(path):
            revisions += len(page["revisions"])
            size += sum(len(r["text"] or "") for r in page["revisions"])
    else:
        raise SystemExit(f"unknown mode {mode}")
    print(
        json.dumps(
            {
                "mode": mode,
                "maxrss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "vmhwm_mb": vm_hwm_mb(),
                "seconds": round(time.perf_counter() - t0, 3),
                "revisions": revisions,
                "bytes_or_chars": size,
            }
        )
    )


def measure_rss(mode: str, path: Path) -> dict:
    cmd = [sys.executable, str(Path(__file__).resolve()), "--rss-child", mode, str(path)]
    res = subprocess.run(cmd, capture_output=True, text=True, cwd=REPO)
    if res.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed: {res.stderr[-2000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def bench_rss(tmp: Path, args) -> dict:
    out = {}
    for n_pages in (1, 10):
        path = tmp / f"large-{n_pages}.xml.gz"
        t0 = time.perf_counter()
        xml_bytes = write_big_pages(path, n_pages, args.rss_revs, args.rss_kb)
        say(
            f"[rss] {n_pages} page(s) x {args.rss_revs} revisions x {args.rss_kb} KB: {xml_bytes / 1e6:.0f} MB XML "
            f"({path.stat().st_size / 1e6:.0f} MB gz, written in {time.perf_counter() - t0:.1f} s)"
        )
        modes = ("decompress", "reader", "materialise")
        got = {m: measure_rss(m, path) for m in modes}
        rec = {
            "bench": "psg2sum_rss",
            "pages": n_pages,
            "revisions_per_page": args.rss_revs,
            "revision_kb": args.rss_kb,
            "xml_mb": round(xml_bytes / 1e6, 1),
            "page_xml_mb": round(xml_bytes / n_pages / 1e6, 1),
            **{f"{m}_maxrss_mb": got[m]["maxrss_mb"] for m in modes},
            **{f"{m}_vmhwm_mb": got[m]["vmhwm_mb"] for m in modes},
            **{f"{m}_seconds": got[m]["seconds"] for m in modes},
            "revisions_read": got["reader"]["revisions"],
            "parent_maxrss_mb_at_spawn": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "reader_over_decompress_mb": round(got["reader"]["maxrss_mb"] - got["decompress"]["maxrss_mb"], 1),
            "reader_xml_mb_per_s": round(xml_bytes / 1e6 / got["reader"]["seconds"], 1),
        }
        emit(rec)
        say(
            f"[rss] peak RSS: decompress {rec['decompress_maxrss_mb']} MB, reader {rec['reader_maxrss_mb']} MB, "
            f"materialising reference {rec['materialise_maxrss_mb']} MB"
        )
        out[n_pages] = rec
        path.unlink()
    growth = out[10]["reader_maxrss_mb"] - out[1]["reader_maxrss_mb"]
    bounded = growth < out[1]["page_xml_mb"]
    summary = {
        "bench": "psg2sum_rss_summary",
        "reader_growth_1_to_10_pages_mb": round(growth, 1),
        "reader_rss_ratio_10_vs_1": round(out[10]["reader_maxrss_mb"] / out[1]["reader_maxrss_mb"], 2),
        "page_xml_mb": out[1]["page_xml_mb"],
        "file_xml_mb_10_pages": out[10]["xml_mb"],
        "bounded_by_page": bounded,
        "note": "bounded_by_page: the reader's peak grows by less than one page's XML from 1 to 10 pages",
    }
    emit(summary)
    return summary


# -------------------------------------------------------------------------------------------- estimate


def estimate(basis: dict, args) -> dict:
    mb = basis["xml_bytes"] / 1e6
    s_read = basis["times"]["reader"] / mb  # seconds per MB of XML, read only
    s_full = basis["times"]["part"] / mb  # seconds per MB of XML, read + parse + mine + write
    s_dec = basis["times"]["decompress"] / mb
    total_mb = args.xml_tb * 1e6
    share = args.article_share

    def hours(sh: float) -> float:
        return total_mb * (s_read + sh * (s_full - s_read)) / 3600

    est = {
        "bench": "psg2sum_estimate",
        "basis_input": basis["label"],
        "seconds_per_xml_mb": {"decompress": round(s_dec, 4), "reader": round(s_read, 4), "part": round(s_full, 4)},
        "xml_tb": args.xml_tb,
        "xml_tb_source": CITED["xml_bytes_jan2010_source"] + " (a floor for later dumps)"
        if args.xml_tb == CITED["xml_bytes_jan2010"] / 1e12
        else "given on the command line (--xml-tb)",
        "article_share": share,
        "article_share_source": "ASSUMED" if share == ASSUMED["article_share"] else "given on the command line",
        "parts": args.parts,
        "parts_source": "ASSUMED" if args.parts == ASSUMED["parts"] else "given on the command line",
        "cpu_hours_total": round(hours(share)),
        "cpu_hours_total_read_only": round(hours(0.0)),
        "cpu_hours_total_all_mined": round(hours(1.0)),
        "cpu_hours_decompress_only": round(total_mb * s_dec / 3600),
        "cpu_hours_per_part_job": round(hours(share) / args.parts, 1),
        "xml_gb_per_part": round(args.xml_tb * 1000 / args.parts, 1),
        "cpu_hours_per_xml_tb": round(hours(share) / args.xml_tb),
        "revisions_per_page_cited": round(CITED["revision_ids_2021"] / CITED["pages_2024"], 1),
        "revisions_per_page_sources": [CITED["revision_ids_source"], CITED["pages_source"]],
        "note": (
            "one core per job; cost per MB of XML measured on the basis input (its revisions are whole "
            "current articles); pages outside namespace 0 are skipped by the reader without building "
            "revisions, so read-only bytes cost at most 'reader' s/MB and at least 'decompress' s/MB"
        ),
    }
    emit(est)
    say(
        f"[estimate] {args.xml_tb} TB of XML: ~{est['cpu_hours_total']:,} CPU hours "
        f"({est['cpu_hours_total_read_only']:,}..{est['cpu_hours_total_all_mined']:,}), "
        f"~{est['cpu_hours_per_part_job']} h per part job over {args.parts} parts"
    )
    return est


# ------------------------------------------------------------------------------------------------ main


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller inputs (< 1 min)")
    ap.add_argument("--articles", type=int, default=None, help="stand-in articles (0 = all; quick 12)")
    ap.add_argument("--synthetic-pages", type=int, default=None, help="pages of the synthetic input (0 = none)")
    ap.add_argument("--revs", type=int, nargs=2, default=None, metavar=("MIN", "MAX"), help="revisions per page")
    ap.add_argument("--rss-revs", type=int, default=None, help="revisions of the large page")
    ap.add_argument("--rss-kb", type=int, default=100, help="KB per revision of the large page")
    ap.add_argument("--no-rss", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="passes of (a) and (b) (fastest kept)")
    ap.add_argument("--mwp-sample", type=int, default=None, help="revisions timed for the parser share")
    ap.add_argument("--xml-tb", type=float, default=CITED["xml_bytes_jan2010"] / 1e12)
    ap.add_argument("--article-share", type=float, default=ASSUMED["article_share"])
    ap.add_argument("--parts", type=int, default=ASSUMED["parts"])
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--keep", default=None, help="keep the scratch folder here")
    ap.add_argument("--rss-child", nargs=2, metavar=("MODE", "PATH"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.rss_child:
        rss_child(*args.rss_child)
        return 0

    def default(name, full, quick):
        if getattr(args, name) is None:
            setattr(args, name, quick if args.quick else full)

    default("articles", 0, 12)
    default("synthetic_pages", 6, 2)
    default("revs", (50, 200), (20, 40))
    default("rss_revs", 2000, 200)
    default("mwp_sample", 25, 10)

    t_start = time.perf_counter()
    tmp = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-psg2sum-"))
    tmp.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        # first, while this process is small: a child's ru_maxrss starts at its parent's RSS at fork (Linux)
        rss = None if args.no_rss else bench_rss(tmp, args)
        from wikiref.text import from_params

        p = stage_params("psg2sum", "part")
        nlp = from_params(p["text"])
        standin = build_standin(tmp, args.articles)
        results.append(bench_file("standin", standin, args, p, nlp, tmp))
        if args.synthetic_pages:
            synthetic = build_synthetic(standin, tmp / "synthetic", args.synthetic_pages, tuple(args.revs), args.seed)
            results.append(bench_file("synthetic", synthetic, args, p, nlp, tmp))
        est = estimate(results[-1], args)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    same = all(r["same"] for r in results)
    bounded = rss is None or rss["bounded_by_page"]
    summary = {
        "bench": "psg2sum_summary",
        "ok": same and bounded,
        "pairs_same": same,
        "memory_bounded_by_page": bounded,
        "part_x_decompress": {r["label"]: round(r["times"]["part"] / r["times"]["decompress"], 1) for r in results},
        "part_revisions_per_s": {r["label"]: round(r["revisions"] / r["times"]["part"], 1) for r in results},
        "cpu_hours_total": est["cpu_hours_total"],
        "cpu_hours_per_part_job": est["cpu_hours_per_part_job"],
        "seconds": round(time.perf_counter() - t_start, 1),
    }
    emit(summary)
    return 0 if summary["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
