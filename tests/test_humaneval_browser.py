"""The rating page driven like a rater would, in a real headless browser: Debian's Chromium through Playwright.

The server is the CLI (`wikiref humaneval serve`, a subprocess on 127.0.0.1); the browser rates two items,
the page is reloaded in a fresh browser and the server restarted (both resume at the first unanswered
item, the answers on disk after every item), the rest is rated, and the sheet submitted and scored.
Playwright's own browser download cannot run on these machines, so the test drives /usr/bin/chromium;
.ci/install-deps installs it (under CI=true a missing browser fails the run, elsewhere the test skips).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from humaneval_fixtures import params, run_sample, run_score, write_inputs

from wikiref import layout
from wikiref.files import read_json
from wikiref.stages.humaneval import sheets

pytestmark = pytest.mark.slow

CHROMIUM = os.environ.get("WIKIREF_CHROMIUM", "/usr/bin/chromium")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
STUDY = "wikiref_table3"


def _browser_or_skip():
    if not (Path(CHROMIUM).exists() or shutil.which("chromium")):
        pytest.skip(f"Chromium missing ({CHROMIUM}; Debian package chromium, .ci/install-deps)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("Chromium test: the playwright package is missing (pip install playwright)")
    return sync_playwright


class Server:
    """`wikiref humaneval serve` for one rater, on a free port."""

    def __init__(self, env: dict, rater: str) -> None:
        cmd = [sys.executable, "-m", "wikiref", "humaneval", "serve", "--study", STUDY, "--rater", rater, "--port", "0"]
        # SIGINT back to its default in the server (Ctrl-C in a terminal): a test run started in the background
        # of a non-interactive shell inherits SIGINT ignored, and the server would never see stop()'s SIGINT.
        self.proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        assert m, line + self.proc.stderr.read()
        self.url = m.group(0)

    def stop(self) -> None:
        """Ctrl-C; a server still running 20 s later is killed (no process outlives the test) and fails it."""
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            pytest.fail("wikiref humaneval serve did not stop on SIGINT within 20 s")


def _rate(page, relatedness: str, salience: str) -> str:
    """Answer the item on screen and save; return the item's id."""
    iid = page.inner_text("#item-id")
    page.check(f"#q-relatedness input[value='{relatedness}']")
    page.check(f"#q-salience input[value='{salience}']")
    page.click("#save")
    return iid


def test_rate_reload_resume_submit(tmp_path, monkeypatch, subprocess_env):
    sync_playwright = _browser_or_skip()
    monkeypatch.chdir(tmp_path)
    write_inputs()
    p = params()
    run_sample(p)
    sample = read_json(layout.HUMANEVAL_ITEMS.format(study=STUDY))
    order = sheets.rater_order(sample, "dana")
    answers_file = Path(layout.HUMANEVAL_RATINGS.format(study=STUDY)) / "dana.json"
    env = subprocess_env

    def launch(pw):
        return pw.chromium.launch_persistent_context(
            str(tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"),  # a fresh user-data-dir each time
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
        )

    server = Server(env, "dana")
    try:
        with sync_playwright() as pw:
            browser = launch(pw)
            page = browser.new_page()
            page.goto(server.url)
            assert "STAND-IN" in page.content()
            assert page.inner_text("#item-id") == order[0]
            # an incomplete answer is refused and nothing is saved
            page.check("#q-relatedness input[value='3']")
            page.click("#save")
            assert "Please answer every question" in page.content() and not answers_file.exists()
            rated = [_rate(page, "3", "2")]
            assert json.loads(answers_file.read_text())["answers"] == {order[0]: {"relatedness": "3", "salience": "2"}}
            rated.append(_rate(page, "2", "1"))
            assert rated == order[:2] and page.inner_text("#item-id") == order[2]
            browser.close()

            # a fresh browser, then a restarted server: both resume at the first unanswered item
            browser = launch(pw)
            page = browser.new_page()
            page.goto(server.url)
            assert page.inner_text("#item-id") == order[2]
            page.reload()
            assert page.inner_text("#item-id") == order[2]
            server.stop()
            server = Server(env, "dana")
            page.goto(server.url)
            assert page.inner_text("#item-id") == order[2]
            assert "2 answered" in page.inner_text("#progress")

            while page.query_selector("#item-id"):
                rated.append(_rate(page, "1", "3"))
            assert rated == order
            assert "Every item is answered" in page.inner_text("#status")
            assert json.loads(answers_file.read_text())["submitted"] is False
            page.click("#submit")
            assert "Submitted" in page.inner_text("#status")
            browser.close()
    finally:
        server.stop()

    saved = json.loads(answers_file.read_text())
    assert saved["submitted"] is True and saved["digest"] == sample["digest"] and len(saved["answers"]) == len(order)
    m = run_score(p)["studies"][STUDY]
    assert m["raters"] == ["dana"]
    expected = (3 + 2 + 1 * (len(order) - 2)) / len(order)
    got = sum(v["relatedness"] * v["items"] for v in m["bins"].values()) / len(order)
    assert got == pytest.approx(expected)
