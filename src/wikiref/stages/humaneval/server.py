"""The rating web page: Python's standard ``http.server`` on the loopback interface only, plain HTML forms.

One server serves one rater of one study (``wikiref humaneval serve --study S --rater R``). The page shows
an item's texts (the query and the document, or the two summaries A and B) and its questions; "Save and
next" stores the answers in the rater's file (:func:`wikiref.stages.humaneval.sheets.save`: atomic, after
every item) and moves to the next unanswered item. Opening the page again, after a reload or a restart,
resumes at the first unanswered item; "Submit" marks the sheet complete once every item is answered.
No JavaScript: every step is a form post, so any browser works and a refused answer loses nothing.
"""

from __future__ import annotations

import html
import logging
import threading
from collections.abc import Mapping
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from urllib.parse import parse_qs

from wikiref.stages.humaneval import sheets

log = logging.getLogger(__name__)
HOST = "127.0.0.1"  # loopback only: the rating page is never reachable from another machine

STYLE = """body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;line-height:1.4}
.field{border:1px solid #ccc;border-radius:4px;padding:.5em 1em;margin:.5em 0}.field h3{margin:.2em 0}
.q{margin:.8em 0}.q label{margin-right:1.2em}.err{color:#a00;font-weight:bold}.standin{background:#fee;padding:.5em}
nav a{margin-right:1em}"""


class RatingState:
    """The rater's answers in memory and on disk (loaded at start: a restart resumes)."""

    def __init__(self, sample: Mapping, rater: str, path: str | Path) -> None:
        self.sample, self.rater, self.path = sample, rater, Path(path)
        self.order = sheets.rater_order(sample, rater)
        self.items = {it["id"]: it for it in sample["items"]}
        self.lock = threading.Lock()
        self.answers: dict[str, dict[str, str]] = {}
        self.submitted = False
        if self.path.exists():
            loaded = sheets.load(self.path, sample, complete=False)
            self.answers, self.submitted = loaded.answers, loaded.submitted

    def complete(self, iid: str) -> bool:
        return all(q["id"] in self.answers.get(iid, {}) for q in self.sample["questions"])

    def next_open(self) -> int | None:
        return next((n for n, iid in enumerate(self.order) if not self.complete(iid)), None)

    def answer(self, iid: str, values: Mapping[str, str]) -> None:
        with self.lock:
            answers = {**self.answers, iid: dict(values)}
            sheets.save(
                self.path, self.sample, self.rater, answers, submitted=self.submitted
            )  # raises before any change
            self.answers = answers

    def submit(self) -> None:
        with self.lock:
            sheets.save(self.path, self.sample, self.rater, self.answers, submitted=True)
            self.submitted = True


def _page(state: RatingState, title: str, body: str) -> bytes:
    banner = (
        '<p class="standin">STAND-IN DATA: these texts are built from stand-in data, not the papers\' corpora.</p>'
        if state.sample.get("standin")
        else ""
    )
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
        f"<style>{STYLE}</style></head><body><h1>{html.escape(state.sample['title'])}</h1>{banner}"
        f"<p>Rater: <b>{html.escape(state.rater)}</b>. {html.escape(state.sample['instructions'])}</p>{body}</body></html>"
    ).encode()


def item_page(state: RatingState, n: int, error: str = "") -> bytes:
    iid = state.order[n]
    item, saved = state.items[iid], state.answers.get(iid, {})
    fields = "".join(
        f"<div class='field'><h3>{html.escape(f['label'])}</h3>"
        + "".join(f"<p>{html.escape(line)}</p>" for line in f["text"].split("\n") if line.strip())
        + "</div>"
        for f in item["fields"]
    )
    questions = ""
    for q in state.sample["questions"]:
        options = "".join(
            f"<label><input type='radio' name='{q['id']}' value='{html.escape(v)}'"
            f"{' checked' if saved.get(q['id']) == v else ''}> {html.escape(label)}</label>"
            for v, label in q["scale"]
        )
        questions += f"<div class='q' id='q-{q['id']}'><div>{html.escape(q['text'])}</div>{options}</div>"
    done = sum(state.complete(i) for i in state.order)
    prev = f"<a href='/item/{n - 1}' id='previous'>Previous</a>" if n else ""
    nav = f"<nav>{prev}<a href='/done'>Overview</a></nav>"
    err = f"<p class='err'>{html.escape(error)}</p>" if error else ""
    body = (
        f"<p id='progress'>Item {n + 1} of {len(state.order)} ({done} answered) &middot; <span id='item-id'>{iid}</span></p>"
        f"{err}{fields}<form method='post' action='/item/{n}'>{questions}"
        "<button type='submit' id='save'>Save and next</button></form>" + nav
    )
    return _page(state, f"Item {n + 1}", body)


def done_page(state: RatingState) -> bytes:
    done = sum(state.complete(i) for i in state.order)
    total = len(state.order)
    if state.submitted:
        status = "<p id='status'>Submitted. Thank you!</p>"
    elif done == total:
        status = (
            "<p id='status'>Every item is answered.</p><form method='post' action='/submit'>"
            "<button type='submit' id='submit'>Submit</button></form>"
        )
    else:
        status = f"<p id='status'>{done} of {total} items answered.</p><a href='/'>Continue</a>"
    links = "".join(
        f"<li><a href='/item/{n}'>{iid}</a>{' &check;' if state.complete(iid) else ''}</li>"
        for n, iid in enumerate(state.order)
    )
    return _page(state, "Overview", f"{status}<ol>{links}</ol>")


def handler_for(state: RatingState) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):  # the request log goes to logging, not stderr
            log.debug(fmt, *args)

        def _send(self, code: int, body: bytes = b"", location: str = "") -> None:
            self.send_response(code)
            if location:
                self.send_header("Location", location)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Cache-Control", "no-store")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _index(self) -> int | None:
            try:
                n = int(self.path.split("/")[2])
            except (IndexError, ValueError):
                return None
            return n if 0 <= n < len(state.order) else None

        def do_GET(self) -> None:
            if self.path in ("/", ""):
                n = state.next_open()
                self._send(303, location="/done" if n is None else f"/item/{n}")
            elif self.path == "/done":
                self._send(200, done_page(state))
            elif self.path.startswith("/item/") and self._index() is not None:
                self._send(200, item_page(state, self._index()))
            else:
                self._send(404, b"not found")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            form = {k: v[0] for k, v in parse_qs(self.rfile.read(length).decode("utf-8")).items()}
            if self.path == "/submit":
                if state.next_open() is not None:
                    self._send(303, location="/done")
                    return
                state.submit()
                self._send(303, location="/done")
                return
            n = self._index() if self.path.startswith("/item/") else None
            if n is None:
                self._send(404, b"not found")
                return
            missing = [q["id"] for q in state.sample["questions"] if q["id"] not in form]
            if missing:
                self._send(400, item_page(state, n, f"Please answer every question ({', '.join(missing)})."))
                return
            try:
                state.answer(state.order[n], {q["id"]: form[q["id"]] for q in state.sample["questions"]})
            except sheets.SheetError as exc:
                self._send(400, item_page(state, n, str(exc)))
                return
            nxt = state.next_open()
            self._send(303, location="/done" if nxt is None else f"/item/{nxt}")

    return Handler


def make_server(sample: Mapping, rater: str, path: str | Path, port: int = 0) -> HTTPServer:
    """A server for ``rater`` on 127.0.0.1:``port`` (0: a free port; ``server.server_address`` has it)."""
    return HTTPServer((HOST, int(port)), handler_for(RatingState(sample, rater, path)))
