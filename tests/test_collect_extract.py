"""HTML -> title + main text, and every drop reason of the extraction step."""

from __future__ import annotations

from wikiref.web.extract import ExtractConfig, detect_language, extract_document, visible_text

EN = (
    "The council approved the new budget on Tuesday after a long debate about road repairs, school funding "
    "and the future of the public library. Members said the plan balances growth with careful spending. "
)
FR = (
    "Le conseil municipal a approuvé mardi le nouveau budget après un long débat sur la réfection des routes, "
    "le financement des écoles et l'avenir de la bibliothèque publique. Les élus estiment que le plan est équilibré. "
)


def page(body, title="Budget approved"):
    return f"<html><head><title>{title}</title></head><body>{body}</body></html>".encode()


def article(text, n=3):
    return "<article><h1>Budget approved</h1>" + "".join(f"<p>{text}</p>" for _ in range(n)) + "</article>"


CFG = ExtractConfig(min_doc_chars=200)


def test_main_text_and_title():
    html = page(
        "<nav><a href='/'>Home</a> <a href='/news'>News</a></nav>"
        + article(EN)
        + "<footer>Copyright 2019 Example Corp. All rights reserved.</footer>"
    )
    ex = extract_document(html, "http://example.org/a", CFG)
    assert ex.ok and ex.title == "Budget approved" and ex.language == "en"
    assert ex.text.startswith("The council approved")  # the repeated heading is not kept twice
    assert "Copyright" not in ex.text and "Home" not in ex.text


def test_empty_page():
    assert extract_document(b"", cfg=CFG).reason == "empty_page"
    assert extract_document(page("<script>var x = 1;</script>  "), cfg=CFG).reason == "empty_page"


def test_boilerplate_only_page():
    links = "".join(f"<li><a href='/p{i}'>Link {i}</a></li>" for i in range(30))
    html = page(f"<nav><ul>{links}</ul></nav><footer>Cookie settings | Privacy | Terms</footer>")
    ex = extract_document(html, cfg=CFG)
    assert not ex.ok and ex.reason == "boilerplate_only"


def test_too_short():
    ex = extract_document(page(article("A very short note about the budget vote.", n=1)), cfg=CFG)
    assert not ex.ok and ex.reason == "too_short"


def test_non_english_is_dropped_and_the_check_can_be_disabled():
    html = page(article(FR), title="Budget")
    ex = extract_document(html, cfg=CFG)
    assert not ex.ok and ex.reason == "non_english" and ex.language == "fr"
    assert extract_document(html, cfg=ExtractConfig(min_doc_chars=200, language="")).ok


def test_fallback_title_and_helpers():
    html = b"<html><body>" + article(EN).replace("<h1>Budget approved</h1>", "").encode() + b"</body></html>"
    ex = extract_document(html, cfg=CFG, fallback_title="From the citation")
    assert ex.ok and ex.title == "From the citation"
    assert detect_language(EN)[0] == "en" and detect_language(FR)[0] == "fr"
    assert visible_text(page("<style>p{}</style><p>Hi  there</p>")) == "Hi there"
    assert ExtractConfig.from_params({"min_doc_chars": 5, "language": "de"}) == ExtractConfig(
        min_doc_chars=5, language="de"
    )
