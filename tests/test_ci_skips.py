"""CI cannot pass without its cross-checks: the skip audit of tests/conftest.py (run on tiny suites through
pytester, with and without xdist) and .ci/install-deps (run with stub apt-get / perl / id on PATH)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

REPO = Path(__file__).resolve().parents[1]
PERL_SKIP = "ROUGE-1.5.5.pl cannot run here: perl modules XML::DOM / DB_File missing"


@pytest.fixture
def suite(pytester, monkeypatch):
    """A pytester folder with this repo's conftest.py (so ../shared is absent beside it) and the markers."""
    monkeypatch.delenv("WIKIREF_SHARED_DATA", raising=False)
    assert not (pytester.path.parent / "shared").exists()
    pytester.makeconftest((REPO / "tests" / "conftest.py").read_text(encoding="utf-8"))
    pytester.makeini("[pytest]\nmarkers =\n    shared_data: needs ../shared/data\n")

    def run(ci: bool, ret: pytest.ExitCode, *args: str):
        """Run it (in CI or not), assert its exit status ``ret`` (showing the output when it differs); the
        result and its output."""
        if ci:
            monkeypatch.setenv("CI", "true")
        else:
            monkeypatch.delenv("CI", raising=False)
        res = pytester.runpytest_subprocess("-p", "no:cacheprovider", *args)
        out = res.stdout.str()
        assert res.ret == ret, out
        return res, out

    return run


@pytest.fixture(params=[False, True], ids=["serial", "xdist"])
def xdist(request) -> tuple[str, ...]:
    """The suite's extra arguments: none (serial), or two xdist workers."""
    return ("-n", "2") if request.param else ()


HIDDEN = f"""
import pytest

def test_runs():
    pass

def test_parity():
    pytest.skip("{PERL_SKIP}")
"""

SHARED = """
import pytest

def test_runs():
    pass

def test_fixture(shared_data):
    pass

@pytest.mark.shared_data
def test_marked(shared_data):
    pass

@pytest.mark.parametrize("k", [1, 2])
def test_uses_cloze(cloze_examples, k):
    pass
"""


@pytest.mark.slow
def test_a_hidden_cross_check_fails_ci_and_is_listed(suite, pytester, xdist):
    pytester.makepyfile(test_hidden=HIDDEN)
    res, out = suite(True, pytest.ExitCode.TESTS_FAILED, *xdist)
    assert "CI skip check FAILED" in out
    assert "ROUGE-1.5.5.pl / XML::DOM missing (NOT expected in CI): 1" in out
    assert f"test_hidden.py::test_parity: {PERL_SKIP}" in out
    res.assert_outcomes(passed=1, skipped=1)


@pytest.mark.slow
def test_outside_ci_the_skip_stays_with_its_reason(suite, pytester):
    pytester.makepyfile(test_hidden=HIDDEN)
    _, out = suite(False, pytest.ExitCode.OK)
    assert f"test_hidden.py::test_parity: {PERL_SKIP}" in out
    assert "CI skip check" not in out


@pytest.mark.slow
def test_any_unknown_skip_fails_ci(suite, pytester):
    pytester.makepyfile(test_other="import pytest\n\n@pytest.mark.skipif(True, reason='dvc not installed')\n"
                        "def test_dvc():\n    pass\n")  # fmt: skip
    _, out = suite(True, pytest.ExitCode.TESTS_FAILED)
    assert "other (NOT expected in CI): 1" in out


@pytest.mark.slow
def test_shared_data_skips_are_expected_and_cross_checked(suite, pytester, xdist):
    pytester.makepyfile(test_shared=SHARED)
    res, out = suite(True, pytest.ExitCode.OK, *xdist)
    assert "../shared absent (expected in CI): 4" in out
    assert "../shared absent: 4 skipped, 4 declared" in out
    assert "CI skip check passed" in out
    res.assert_outcomes(passed=1, skipped=4)


@pytest.mark.slow
def test_an_undeclared_shared_data_skip_fails_ci(suite, pytester):
    """Skipping because ../shared is absent without the marker or the fixture: the two counts differ."""
    pytester.makepyfile(
        test_shared=SHARED
        + "\n\ndef test_undeclared():\n"
        + "    from conftest import SHARED_ROOT\n"
        + "    pytest.skip(f'{SHARED_ROOT / \"papers\"} missing')\n"
    )
    _, out = suite(True, pytest.ExitCode.TESTS_FAILED)
    assert "5 test(s) skipped because" in out and "but 4 declare they need it" in out
    assert "skipped without declaring: ['test_shared.py::test_undeclared']" in out


@pytest.mark.slow
def test_a_declared_test_that_does_not_skip_fails_ci(suite, pytester):
    pytester.makepyfile(test_marked="import pytest\n\n@pytest.mark.shared_data\ndef test_runs_anyway():\n    pass\n")
    _, out = suite(True, pytest.ExitCode.TESTS_FAILED)
    assert "declared but not skipped so: ['test_marked.py::test_runs_anyway']" in out


@pytest.mark.slow
def test_failures_keep_their_exit_status(suite, pytester):
    pytester.makepyfile(test_fail=HIDDEN + "\n\ndef test_fails():\n    assert False\n")
    suite(True, pytest.ExitCode.TESTS_FAILED)


# ------------------------------------------------------------------------------------------ .ci/install-deps
STUBS = {
    "perl_missing": '#!/bin/sh\necho "Can\'t locate XML/DOM.pm in @INC" >&2\nexit 2\n',
    "perl_ok": "#!/bin/sh\nexit 0\n",
    "apt_fails": '#!/bin/sh\necho "apt-get $*" >> "$CALLS"\nexit 100\n',
    "apt_ok": '#!/bin/sh\necho "apt-get $*" >> "$CALLS"\nexit 0\n',
    "root": "#!/bin/sh\necho 0\n",
    "user": "#!/bin/sh\necho 1000\n",
    "7z": "#!/bin/sh\nexit 0\n",
    "chromium": "#!/bin/sh\nexit 0\n",
}


def install_deps(tmp_path: Path, *, perl: str, apt: str, uid: str, ci: bool) -> tuple[subprocess.CompletedProcess, str]:
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name, stub in (
        ("perl", perl),
        ("apt-get", apt),
        ("id", uid),
        ("7z", "7z"),
        ("chromium", "chromium"),
        ("strace", "7z"),
    ):
        (stubs / name).write_text(STUBS[stub])
        (stubs / name).chmod(0o755)
    calls = tmp_path / "calls"
    calls.touch()
    env = {"PATH": f"{stubs}{os.pathsep}/usr/bin{os.pathsep}/bin", "CALLS": str(calls)}
    if ci:
        env["CI"] = "true"
    res = subprocess.run(
        [shutil.which("bash"), str(REPO / ".ci" / "install-deps")], capture_output=True, text=True, env=env
    )
    return res, calls.read_text()


def test_install_deps_fails_ci_when_xml_dom_cannot_be_installed(tmp_path):
    res, calls = install_deps(tmp_path, perl="perl_missing", apt="apt_fails", uid="root", ci=True)
    assert res.returncode == 1
    assert "error: perl with XML::DOM and DB_File" in res.stderr
    assert "libxml-dom-perl could not be installed (apt-get update failed)" in res.stderr
    assert calls.startswith("apt-get update")


def test_install_deps_fails_ci_when_the_install_does_not_bring_the_module(tmp_path):
    res, calls = install_deps(tmp_path, perl="perl_missing", apt="apt_ok", uid="root", ci=True)
    assert res.returncode == 1
    assert "libxml-dom-perl installed but the check still fails" in res.stderr
    assert "install -y -qq libxml-dom-perl" in calls


def test_install_deps_fails_ci_when_not_root(tmp_path):
    res, calls = install_deps(tmp_path, perl="perl_missing", apt="apt_ok", uid="user", ci=True)
    assert res.returncode == 1 and "not root (uid 1000)" in res.stderr
    assert calls == ""


def test_install_deps_outside_ci_warns_and_passes(tmp_path):
    res, _ = install_deps(tmp_path, perl="perl_missing", apt="apt_fails", uid="root", ci=False)
    assert res.returncode == 0
    assert "warning: perl with XML::DOM and DB_File" in res.stderr and "the tests needing it skip" in res.stderr


def test_install_deps_leaves_apt_alone_when_nothing_is_missing(tmp_path):
    res, calls = install_deps(tmp_path, perl="perl_ok", apt="apt_fails", uid="root", ci=True)
    assert (res.returncode, res.stderr, calls) == (0, "", "")


def test_ci_run_calls_install_deps_before_the_tests():
    lines = [ln.strip() for ln in (REPO / ".ci" / "run").read_text().splitlines()]
    assert lines.index("bash .ci/install-deps") < lines.index("make test")
