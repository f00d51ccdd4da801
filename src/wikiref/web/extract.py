"""Fetched HTML -> document title + main body text (trafilatura), or a reason to drop it.

Drop reasons: ``empty_page`` (no visible text at all), ``boilerplate_only`` (visible text, but the
extractor found no main content: menus, cookie walls, link lists), ``too_short`` (main text shorter
than ``min_doc_chars``), ``non_english`` (py3langid, a small naive-Bayes model shipped with its
package, says another language with probability >= ``language_min_prob``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

WS = re.compile(r"[ \t\r\f\v]+")
BLANKS = re.compile(r"\n\s*\n+")


@dataclass(frozen=True)
class ExtractConfig:
    min_doc_chars: int = 200
    language: str = "en"
    language_min_prob: float = 0.9
    language_sample_chars: int = 3000
    include_tables: bool = False
    favor_precision: bool = True  # trafilatura: rather lose a paragraph than keep menus and link lists

    @classmethod
    def from_params(cls, extract: Mapping) -> ExtractConfig:
        return cls(**{k: extract[k] for k in cls.__dataclass_fields__ if k in extract})


@dataclass
class Extracted:
    ok: bool
    reason: str = ""
    title: str = ""
    text: str = ""
    language: str = ""


@lru_cache(maxsize=1)
def language_identifier():
    from py3langid import langid

    return langid.LanguageIdentifier.from_modelpath(langid.MODEL_DIR / langid.MODEL_FILE, norm_probs=True)


def detect_language(text: str) -> tuple[str, float]:
    lang, prob = language_identifier().classify(text)
    return str(lang), float(prob)


def visible_text(html: bytes | str) -> str:
    """All text a browser would show (scripts, styles, templates removed); empty when there is none."""
    import lxml.html
    from lxml.etree import ParserError

    try:
        doc = lxml.html.fromstring(html)
    except (ParserError, ValueError):
        return ""
    if not isinstance(doc.tag, str):  # a lone comment or processing instruction ("<body><!--"): no element, no text
        return ""
    for bad in doc.xpath("//script|//style|//noscript|//template|//head"):
        # emptied in place: drop_tree() would join the tail to the text before it, which lxml refuses (ValueError)
        # when the tail holds a control character such as a form feed
        bad.clear(keep_tail=True)
    return WS.sub(" ", doc.text_content()).strip()


def _clean(text: str) -> str:
    lines = [WS.sub(" ", ln).strip() for ln in text.splitlines()]
    return "\n".join(ln for ln in lines if ln)


def extract_document(
    body: bytes | str, url: str = "", cfg: ExtractConfig = ExtractConfig(), fallback_title: str = ""
) -> Extracted:
    import trafilatura

    if not body or not visible_text(body):
        return Extracted(ok=False, reason="empty_page")
    doc = trafilatura.bare_extraction(
        body,
        url=url or None,
        with_metadata=True,
        include_comments=False,
        include_tables=cfg.include_tables,
        include_images=False,
        include_formatting=False,
        deduplicate=False,
        favor_precision=cfg.favor_precision,
    )
    text = _clean(getattr(doc, "text", "") or "") if doc is not None else ""
    title = WS.sub(" ", (getattr(doc, "title", "") or "") if doc is not None else "").strip() or fallback_title
    if not text:
        return Extracted(ok=False, reason="boilerplate_only", title=title)
    # The page's own heading often opens the text: the document is title + body, keep the title once.
    first, _, rest = text.partition("\n")
    if title and first.strip().lower() == title.lower() and rest.strip():
        text = rest.strip()
    if len(text) < cfg.min_doc_chars:
        return Extracted(ok=False, reason="too_short", title=title, text=text)
    lang, prob = detect_language(text[: cfg.language_sample_chars])
    if cfg.language and lang != cfg.language and prob >= cfg.language_min_prob:
        return Extracted(ok=False, reason="non_english", title=title, text=text, language=lang)
    return Extracted(ok=True, title=title, text=text, language=lang)
