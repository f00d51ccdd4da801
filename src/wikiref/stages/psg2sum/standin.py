"""A STAND-IN page-history dump for Psg2Sum, built from the Wikipedia sample.

No history dump is reachable offline. Each article of the sample dump with a prose lead paragraph and
enough body paragraphs becomes a page whose history replays the edits the miner must handle, in the
pages-meta-history layout (export 0.10: ``parentid``, ``sha1``, ``model``, ``format``):

1. the article without its last lead paragraph ``L`` and three body paragraphs ``B1`` (the one sharing the
   most words with ``L``), ``B2``, ``B3`` (of other sections where there are);
2. ``L``, ``B1`` and a lead sentence summarising ``B1`` (its own first sentence, as editors often write
   leads) added together: the lead sentences and body passage the miner should pair;
3. vandalism: the first body section blanked;
4. the revert of 3 (the text of 2 again: same sha1);
5. ``B2`` and its lead sentence added together;
6. ``B3`` added alone (a body-only edit: no pair);
7. a small unrelated edit (one word changed);
8. for a seeded share of pages, a bot-sized paste of ``BOT_CHARS`` characters, then its revert.

Pages are dealt round-robin over the dump parts named in params (one file each), articles in dump order.
The first revision's comment and every page title's talk-free text carry no marker (they are Wikipedia
text), so the STAND-IN label is ``NOTICE.txt`` (first word ``STAND-IN``) beside the parts, every
revision's comment and ``MANIFEST.json``. Same params + seed -> the same bytes.
"""

from __future__ import annotations

import bz2
import datetime as dt
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path

from wikiref.files import sha256_file, stable_id, write_bytes, write_json, write_text

NOTICE = "NOTICE.txt"
NOTE = (
    "STAND-IN: these page histories are NOT Wikipedia's. `wikiref psg2sum standin` built them from the "
    "current text of the offline sample's articles by removing a lead paragraph and body paragraphs and "
    "adding them back in later revisions (with vandalism, its revert, body-only and bot-sized edits), in "
    "the pages-meta-history dump layout, so the Psg2Sum miner runs offline. Results computed on them are "
    "NOT comparable to the paper's (text: Wikipedia, CC BY-SA)."
)
COMMENT = "STAND-IN revision built by wikiref psg2sum standin"
MIN_LEAD_WORDS = 15
MIN_BODY_WORDS = 25
BOT_SHARE = 0.2
BOT_CHARS = 30000
START = dt.datetime(2019, 1, 1)
_HEADING = re.compile(r"^(=+)\s*(.*?)\s*\1\s*$")
_WORD = re.compile(r"[a-z]{4,}")
_NOT_PROSE = ("{{", "{|", "|", "!", "*", "#", ":", ";", "[[File:", "[[Image:", "[[Category:", "<!--", "__")


def _fraction(*parts: object) -> float:
    return int(stable_id(*map(str, parts), length=12), 16) / float(16**12)


def _blocks(text: str) -> list[str]:
    return [b for b in re.split(r"\n\s*\n", text.strip("\n")) if b.strip()]


def _prose(block: str, min_words: int) -> bool:
    head = block.lstrip()
    return not head.startswith(_NOT_PROSE) and "\n=" not in "\n" + head and len(block.split()) >= min_words


def _sections(text: str) -> list[tuple[str, list[str]]]:
    """(heading or "" for the lead, its paragraph blocks) in page order."""
    out: list[tuple[str, list[str]]] = [("", [])]
    current: list[str] = []
    for line in text.split("\n"):
        m = _HEADING.match(line)
        if m:
            out[-1] = (out[-1][0], _blocks("\n".join(current)))
            out.append((m.group(0), []))
            current = []
        else:
            current.append(line)
    out[-1] = (out[-1][0], _blocks("\n".join(current)))
    return out


def _render(sections: list[tuple[str, list[str]]]) -> str:
    parts = ["\n".join(c for c in (heading, "\n\n".join(blocks)) if c) for heading, blocks in sections]
    return "\n\n".join(p for p in parts if p) + "\n"


def _without(sections, drop: set[tuple[int, int]]):
    return [(h, [b for j, b in enumerate(bs) if (i, j) not in drop]) for i, (h, bs) in enumerate(sections)]


def _overlap(a: str, b: str) -> float:
    wa, wb = set(_WORD.findall(a.lower())), set(_WORD.findall(b.lower()))
    return len(wa & wb) / len(wa) if wa else 0.0


def _first_sentence(block: str) -> str:
    """The first sentence of a wikitext paragraph, refs dropped (crudely: up to the first full stop that
    is followed by a capital letter), or "" when it is too short to be a summary."""
    text = re.sub(r"<ref[^>]*/>|<ref[^>]*>.*?</ref>", "", block, flags=re.S)
    m = re.match(r"(.+?[.!?])\s+(?=[A-Z\[])", text, flags=re.S)
    sent = " ".join((m.group(1) if m else text).split())
    return sent if len(sent.split()) >= 8 else ""


def _history(text: str, skip: set[str], seed: int, page_id: int) -> list[tuple[str, str, str]] | None:
    """The page's revisions as (text, user, comment), or None when the article is unsuitable."""
    secs = _sections(text)
    lead = [j for j, b in enumerate(secs[0][1]) if _prose(b, MIN_LEAD_WORDS)]
    body = [
        (i, j)
        for i, (h, bs) in enumerate(secs)
        if i > 0 and _HEADING.match(h) and _HEADING.match(h).group(2).strip().lower() not in skip
        for j, b in enumerate(bs)
        if _prose(b, MIN_BODY_WORDS)
    ]
    if not lead or len(body) < 3:
        return None
    li = lead[-1]
    lead_text = secs[0][1][li]
    # B1: the paragraph sharing most words with L; B2, B3: the first prose paragraphs of other sections
    b1 = max(body, key=lambda ij: (_overlap(lead_text, secs[ij[0]][1][ij[1]]), -ij[0], -ij[1]))
    rest = [ij for ij in body if ij != b1]
    rest.sort(key=lambda ij: (ij[0] == b1[0], _fraction(seed, "order", page_id, *ij)))
    b2, b3 = rest[0], rest[1]
    s1, s2 = _first_sentence(secs[b1[0]][1][b1[1]]), _first_sentence(secs[b2[0]][1][b2[1]])

    def version(drop: set, extra_lead: list[str]) -> str:
        kept = _without(secs, drop)
        kept[0] = (kept[0][0], kept[0][1] + [x for x in extra_lead if x])
        return _render(kept)

    r1 = version({(0, li), b1, b2, b3}, [])
    r2 = version({b2, b3}, [s1])  # L, B1 and a lead sentence summarising B1 added together
    first_body = body[0][0]
    vandal = [
        (h, (["LOL this article is so boring"] if i == first_body else bs))
        for i, (h, bs) in enumerate(_without(secs, {b2, b3}))
    ]
    vandal[0] = (vandal[0][0], vandal[0][1] + [s1] if s1 else vandal[0][1])
    r3 = _render(vandal)
    r5 = version({b3}, [s1, s2])  # B2 with its lead sentence
    r6 = version(set(), [s1, s2])  # B3 alone: a body-only edit
    r7 = r6.replace(" is ", " was ", 1) if " is " in r6 else r6.replace("\n", " (edited)\n", 1)
    revs = [
        (r1, "Editor-A", "article text"),
        (r2, "Editor-B", "lead summary and new section text"),
        (r3, "203.0.113.7", "vandalism"),
        (r2, "Editor-C", "Reverted edits by 203.0.113.7"),
        (r5, "Editor-B", "new section text and its summary in the lead"),
        (r6, "Editor-E", "more section text"),
        (r7, "Editor-D", "copyedit"),
    ]
    if _fraction(seed, "bot", page_id) < BOT_SHARE:
        paste = ("Imported table row. " * (BOT_CHARS // 20 + 1))[:BOT_CHARS]
        revs.append((r7 + "\n" + paste + "\n", "ExampleBot", "bot import"))
        revs.append((r7, "Editor-C", "Reverted bot import"))
    return revs


def build(
    dump_path: str | Path,
    out_dir: str | Path,
    *,
    parts: Sequence[str],
    seed: int,
    collect: Mapping,
    max_articles: int = 0,
) -> dict:
    """Write one STAND-IN history part per name of ``parts`` (``<part>.xml.bz2``) into ``out_dir`` and
    return the manifest. ``collect``: the collect params (sections that are not prose)."""
    from wikiref.wiki.dump import ExportPage, ExportRevision, export_xml, iter_pages

    out = Path(out_dir)
    skip = {s.lower() for s in collect["statements"]["skip_sections"]}
    stats: Counter = Counter()
    pages_by_part: list[list] = [[] for _ in parts]
    kept = 0
    for page in iter_pages(Path(dump_path), Counter()):
        stats["articles_read"] += 1
        history = _history(page.text, skip, seed, page.page_id)
        if history is None:
            stats["skipped:unsuitable"] += 1
            continue
        revisions = []
        rev_base = page.page_id * 100
        for k, (text, user, comment) in enumerate(history):
            stamp = (START + dt.timedelta(days=kept, hours=k)).strftime("%Y-%m-%dT%H:%M:%SZ")
            parent = rev_base + k if k else None
            revisions.append(ExportRevision(rev_base + k + 1, parent, stamp, user, f"{comment} ({COMMENT})", text))
        pages_by_part[kept % len(parts)].append(ExportPage(page.page_id, page.title, 0, tuple(revisions)))
        stats["pages"] += 1
        stats["revisions"] += len(revisions)
        stats["bot_edits"] += len(revisions) > 7
        kept += 1
        if max_articles and kept >= max_articles:
            break
    for name, pages in zip(parts, pages_by_part):
        xml = export_xml(
            pages, sitename="Wikipedia (STAND-IN)", generator="wikiref psg2sum standin", namespaces={0: ""}
        )
        write_bytes(out / f"{name}.xml.bz2", bz2.compress(xml.encode("utf-8"), 9))
    write_text(out / NOTICE, NOTE + "\n")
    manifest = {
        "standin": True,
        "note": NOTE,
        "seed": seed,
        "parts": {name: len(pages) for name, pages in zip(parts, pages_by_part)},
        "counts": dict(sorted(stats.items())),
        "files": {
            f.name: {"bytes": f.stat().st_size, "sha256": sha256_file(f)} for f in sorted(out.iterdir()) if f.is_file()
        },
    }
    write_json(out / "MANIFEST.json", manifest)
    return manifest
