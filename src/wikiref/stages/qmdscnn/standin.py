"""A STAND-IN CNN/DailyMail corpus in the exact ``.story`` layout, built from the Wikipedia sample.

CNN/DailyMail cannot be shipped, and the offline sample may have no real stories. Each kept Wikipedia
article of the sample dump becomes one stand-in story: its first ``MAX_BODY_PARAGRAPHS`` body paragraphs
(non-lead, non-skipped sections) are the article paragraphs, the first sentences of its lead section (spaCy, up to
``MAX_HIGHLIGHTS``) are the ``@highlight`` lines. The URL mimics the corpus' Wayback ``id_`` URLs on a
reserved host (``standin.wikiref.invalid``); the story file is ``sha1(url).story``; a seeded hash deals the
stories to ``all_train.txt`` / ``all_val.txt`` / ``all_test.txt`` (70/15/15). ``archive.warc.gz`` holds a
STAND-IN page for most stories (seeded; the others are left out so the title-from-URL path runs too)
whose ``<title>`` is ``STAND-IN - <article title> - Jan 1, 2019``. ``NOTICE.txt`` (first word
``STAND-IN``) marks the folder; ``MANIFEST.json`` lists files, sha256 and counts. Same params + seed ->
the same bytes.
"""

from __future__ import annotations

import html
import re
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from wikiref import layout
from wikiref.files import sha256_file, stable_id, write_json, write_text
from wikiref.stages.qmdscnn.corpus import NOTICE, story_id

MAX_HIGHLIGHTS = 4
MIN_BODY_PARAGRAPHS = 3
MAX_BODY_PARAGRAPHS = 20  # a CNN story has about 20 short paragraphs (the paper, §3.1)
ARCHIVED_SHARE = 0.8  # stories whose page is in the stand-in archive
SPLIT_SHARES = (("all_train.txt", 0.70), ("all_val.txt", 0.85), ("all_test.txt", 1.0))  # cumulative
HOST = "standin.wikiref.invalid"
SNAPSHOT = "20190101000000"
PAGE_DATE = "Jan 1, 2019"
NOTE = (
    "STAND-IN: these .story files are NOT CNN/DailyMail stories. `wikiref qmdscnn standin` built each one "
    "from a Wikipedia article of the offline sample (body paragraphs = the article paragraphs, the lead's "
    "first sentences = the @highlight lines), in the corpus' exact format, so the QmdsCnn builder runs "
    "offline. Results computed on them are NOT comparable to the paper's (text: Wikipedia, CC BY-SA)."
)


def _fraction(*parts: str) -> float:
    return int(stable_id(*parts, length=12), 16) / float(16**12)


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", ".", title.lower()).strip(".") or "article"


def standin_url(title: str, page_id: int) -> str:
    """The Wayback-style URL-list line of a stand-in story."""
    return f"http://web.archive.org/web/{SNAPSHOT}id_/http://{HOST}/2019/WIKI/{page_id}/{_slug(title)}/index.html"


def story_text(paragraphs: list[str], highlights: list[str]) -> str:
    """The ``.story`` text: paragraphs separated by blank lines, then ``@highlight`` blocks, no final newline."""
    blocks = list(paragraphs) + [f"@highlight\n\n{h}" for h in highlights]
    return "\n\n".join(blocks)


def _page_html(page) -> bytes:
    esc = html.escape
    paras = "\n".join(f"<p>{esc(p)}</p>" for p in page.paragraphs)
    doc = (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{esc(page.title)}</title>\n"
        '<meta name="wikiref-standin" content="true">\n</head>\n<body>\n'
        f"<p><strong>STAND-IN PAGE built by wikiref qmdscnn standin from the Wikipedia article "
        f"&ldquo;{esc(page.article)}&rdquo;; not a news article.</strong></p>\n"
        f"<article>\n{paras}\n</article>\n</body>\n</html>\n"
    )
    return doc.encode("utf-8")


def build(
    dump_path: str | Path, out_dir: str | Path, *, seed: int, collect: Mapping, nlp, max_articles: int = 0
) -> dict:
    """Write the STAND-IN corpus into ``out_dir`` (which should be empty or a temporary folder; the job
    swaps it in atomically) and return the manifest. ``collect``: the collect params (section handling of
    the dump reader); ``nlp``: the spaCy pipeline that splits the lead into sentences."""
    from wikiref.standin import Standin, write_standin_warc
    from wikiref.text import split_sentences
    from wikiref.wiki.dump import iter_pages
    from wikiref.wiki.statements import StatementConfig, parse_article

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    cfg = StatementConfig.from_params(collect)
    stats: Counter = Counter()
    candidates = []
    for page in iter_pages(Path(dump_path), Counter()):
        stats["articles_read"] += 1
        art = parse_article(page.title, page.text, cfg, Counter())
        lead = [p for s in art.sections[:1] for p in s.paragraphs if p.strip()]
        body = [p.strip() for s in art.sections[1:] if not s.skipped for p in s.paragraphs if p.strip()]
        if not lead:
            stats["skipped:no_lead"] += 1
            continue
        if len(body) < MIN_BODY_PARAGRAPHS:
            stats["skipped:short_body"] += 1
            continue
        candidates.append((page.page_id, art.title, " ".join(lead), body[:MAX_BODY_PARAGRAPHS]))
        if max_articles and len(candidates) >= max_articles:
            break
    lists: dict[str, list[str]] = {name: [] for name, _ in SPLIT_SHARES}
    pages = []
    leads = [lead for _, _, lead, _ in candidates]
    for (page_id, title, _, body), sents in zip(candidates, split_sentences(nlp, leads, 64)):
        highlights = [" ".join(s.split()) for s in sents][:MAX_HIGHLIGHTS]
        url = standin_url(title, page_id)
        write_text(out / f"{story_id(url)}.story", story_text(body, highlights))
        share = _fraction(str(seed), "split", url)
        lists[next(name for name, upto in SPLIT_SHARES if share < upto)].append(url)
        stats["stories"] += 1
        if _fraction(str(seed), "archived", url) < ARCHIVED_SHARE:
            original = url.split("id_/", 1)[1]
            tokens = sum(len(p.split()) for p in body)
            pages.append(Standin(original, f"STAND-IN - {title} - {PAGE_DATE}", title, page_id, [], body, tokens, 0))
    for name, urls in lists.items():
        write_text(out / name, "".join(f"{u}\n" for u in sorted(urls)))
    pages.sort(key=lambda p: p.url)
    archived = write_standin_warc(
        pages,
        out / layout.QMDSCNN_STANDIN_ARCHIVE,
        f"the offline sample's Wikipedia dump ({Path(dump_path).name})",
        note=NOTE,
        render=_page_html,
        software="wikiref qmdscnn standin",
    )
    write_text(out / NOTICE, NOTE + "\n")
    manifest = {
        "standin": True,
        "note": NOTE,
        "seed": seed,
        "stories": stats["stories"],
        "archived_pages": archived,
        "split_lists": {name: len(urls) for name, urls in lists.items()},
        "counts": dict(sorted(stats.items())),
        "files": {
            f.name: {"bytes": f.stat().st_size, "sha256": sha256_file(f)}
            for f in sorted(out.iterdir())
            if f.is_file() and f.suffix != ".story"
        },
    }
    write_json(out / "MANIFEST.json", manifest)
    return manifest
