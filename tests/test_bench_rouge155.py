"""bench/rouge155.py (nothing is timed): the line comparison, a small run of all three flag sets (against
ROUGE-1.5.5.pl when it can run here: every line equal), and exit status 1 when a line differs."""

from __future__ import annotations

import json

import pytest

from wikiref.rouge.parity import perl_rouge_available


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("rouge155")


def test_compare_lines_counts_every_difference(bench):
    a = "x\ny\nz\n"
    assert bench.compare_lines(a, a) == {"lines": 3, "differing_lines": 0}
    out = bench.compare_lines(a, "x\nY\nz\n")
    assert out["differing_lines"] == 1 and out["first_difference"] == {"line": 2, "perl": "y", "wikiref": "Y"}
    out = bench.compare_lines(a, "x\ny\n")
    assert out["differing_lines"] == 1 and out["first_difference"] == {"line": 3, "perl": "z", "wikiref": None}


@pytest.mark.slow
def test_small_run_of_the_three_flag_sets(bench, tmp_path, capsys):
    assert bench.main(["--topics", "2", "--systems", "3", "--repeat", "1", "--work", str(tmp_path)]) == 0
    rec = json.loads(capsys.readouterr().out)
    assert (rec["peers"], rec["models"], rec["jobs"]) == (6, 4, 1)
    assert [r["name"] for r in rec["flagsets"]] == ["paper", "rouge-l", "nist"]
    assert all(r["lines"] > 0 for r in rec["flagsets"])
    if perl_rouge_available() is None:
        assert rec["identical"] is True
        assert all(r["differing_lines"] == 0 and r["cpu_ratio"] > 0 for r in rec["flagsets"])
    else:
        assert rec["identical"] is None and rec["perl"].startswith("unavailable")


@pytest.mark.slow
def test_a_differing_line_fails_the_run(bench, tmp_path, capsys, monkeypatch):
    """The "Perl" here is wikiref itself with one score changed, so this runs without perl too."""

    def fake_perl(release, cfg, flags):
        lines = bench.run_wikiref(cfg, flags, 1).splitlines(keepends=True)
        lines[-1] = lines[-1].replace("R:", "R:9", 1)
        return "".join(lines)

    monkeypatch.setattr(bench, "perl_rouge_available", lambda: None)
    monkeypatch.setattr(bench, "prepare_perl_rouge", lambda work: work)
    monkeypatch.setattr(bench, "run_perl", fake_perl)
    argv = ["--topics", "1", "--systems", "2", "--flagsets", "nist", "--jobs", "2", "--repeat", "2"]
    assert bench.main([*argv, "--work", str(tmp_path)]) == 1
    rec = json.loads(capsys.readouterr().out)
    row = rec["flagsets"][0]
    assert rec["identical"] is False and row["differing_lines"] == 1 and row["identical"] is False
    assert row["first_difference"]["line"] == row["lines"]


@pytest.mark.slow
def test_no_perl_under_ci_fails_the_run(bench, tmp_path, capsys, monkeypatch):
    """Without ROUGE-1.5.5.pl the bench still times wikiref; under CI that is a failure, not a pass."""
    monkeypatch.setattr(bench, "perl_rouge_available", lambda: "perl missing (test)")
    args = ["--topics", "1", "--systems", "2", "--repeat", "1", "--flagsets", "paper", "--work"]
    monkeypatch.delenv("CI", raising=False)
    assert bench.main([*args, str(tmp_path / "a")]) == 0
    assert json.loads(capsys.readouterr().out)["identical"] is None
    monkeypatch.setenv("CI", "true")
    assert bench.main([*args, str(tmp_path / "b")]) == 1
    assert "under CI" in capsys.readouterr().err
