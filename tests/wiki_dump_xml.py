"""Pages of the hand-written MediaWiki XML dumps that the dump readers' tests write."""

from __future__ import annotations


def page_xml(
    pid: int,
    title: str,
    text: str,
    *,
    ns: int = 0,
    redirect: str | None = None,
    timestamp: str = "2019-01-01T00:00:00Z",
) -> str:
    """One ``<page>`` of a dump (one line): id ``pid`` and a single revision (id ``pid * 10``, saved at
    ``timestamp``) whose wikitext is ``text``, escaped; ``<redirect title=...>`` when ``redirect`` is given."""
    red = f'<redirect title="{redirect}" />' if redirect else ""
    esc = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return (
        f"  <page><title>{title}</title><ns>{ns}</ns><id>{pid}</id>{red}<revision><id>{pid * 10}</id>"
        f"<timestamp>{timestamp}</timestamp><contributor><username>u</username><id>1</id></contributor>"
        f'<model>wikitext</model><format>text/x-wiki</format><text xml:space="preserve">{esc}</text>'
        f"<sha1>x</sha1></revision></page>\n"
    )
