"""bench/rouge_official.py (nothing is timed): the report comparison, a small run against ROUGE-1.5.5.pl (every
figure and line equal), exit status 1 on any difference, and under CI=true when Perl cannot run."""

from __future__ import annotations

import json

import pytest

from wikiref.rouge.parity import perl_rouge_available

REPORT = """\
---------------------------------------------
11 ROUGE-1 Average_R: 0.50000 (95%-conf.int. 0.40000 - 0.60000)
11 ROUGE-1 Average_P: 0.25000 (95%-conf.int. 0.20000 - 0.30000)
11 ROUGE-1 Average_F: 0.33333 (95%-conf.int. 0.26667 - 0.40000)
11 ROUGE-1 M_count: 4 P_count: 8 H_count: 2
.............................................
11 ROUGE-1 Eval D1.11 R:0.50000 P:0.25000 F:0.33333
11 ROUGE-1 Eval D2.11 R:0.12346 P:0.50000 F:0.19802
"""


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("rouge_official")


def test_identical_reports_compare_equal(bench):
    cmp = bench.compare_reports(REPORT, REPORT)
    assert cmp["triples"] == {"ROUGE-1": 2}
    assert (cmp["differing_figures"], cmp["evals_one_side_only"]) == (0, 0)
    assert cmp["lines"] == cmp["lines_equal"] == 4  # three Average lines and the count line, parsed independently
    assert "first_difference" not in cmp


def test_a_last_digit_differs(bench):
    cmp = bench.compare_reports(REPORT, REPORT.replace("R:0.12346", "R:0.12345"))
    assert cmp["differing_figures"] == 1
    assert cmp["max_abs_diff"]["ROUGE-1 R"] == pytest.approx(1e-5)
    assert cmp["first_difference"] == {"eval": ["11", "ROUGE-1", "D2.11"], "field": "R", "perl": "0.12346",
                                       "python": "0.12345"}  # fmt: skip


def test_the_printed_precision_sets_the_tolerance(bench):
    assert bench.printed_tolerance("0.12345") == pytest.approx(5e-6)
    assert bench.printed_tolerance("0.12345", "0.1235") == pytest.approx(5e-5)
    # the same figure printed with fewer digits by one side is not a difference; one unit more is
    assert bench.compare_reports(REPORT, REPORT.replace("R:0.12346", "R:0.1235"))["differing_figures"] == 0
    assert bench.compare_reports(REPORT, REPORT.replace("R:0.12346", "R:0.1236"))["differing_figures"] == 1


def test_average_count_and_missing_lines_differ(bench):
    cmp = bench.compare_reports(REPORT, REPORT.replace("0.26667 - 0.40000", "0.26666 - 0.40000"))
    assert (cmp["lines"], cmp["lines_equal"], cmp["differing_figures"]) == (4, 3, 0)
    cmp = bench.compare_reports(REPORT, REPORT.replace("H_count: 2", "H_count: 3"))
    assert (cmp["lines"], cmp["lines_equal"]) == (4, 3)
    lines = REPORT.splitlines(keepends=True)
    cmp = bench.compare_reports(REPORT, "".join(lines[:-1]))
    assert cmp["evals_one_side_only"] == 1 and cmp["triples"] == {"ROUGE-1": 1}
    cmp = bench.compare_reports(REPORT, "".join(ln for ln in lines if "Average_P" not in ln))
    assert (cmp["lines"], cmp["lines_equal"]) == (4, 3)


def test_small_run_agrees_with_perl(bench, capsys):
    reason = perl_rouge_available()
    if reason:
        pytest.skip(f"ROUGE-1.5.5.pl cannot run here: {reason}")
    assert bench.main(["--cases", "1", "--flag-sets", "2"]) == 0
    recs = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["flags"] for r in recs[:-1]] == bench.FLAG_SETS[:2]
    total = recs[-1]
    assert total["identical"] is True and total["total"]["cases"] == 2
    assert total["total"]["per_eval_triples"] > 0 and total["total"]["avg_lines"] > 0
    assert total["total"]["per_eval_triples"] == sum(sum(r["per_eval_triples"].values()) for r in recs[:-1])


def _fake_perl(bench, change):
    """ "Perl" = the Python scorer with ``change`` applied to its report (runs without perl)."""

    def run(release, cfg, flags):
        return change(bench.run_python(cfg, flags.replace(" -a -d", "")))

    return run


@pytest.mark.parametrize(
    "change, caught_by",
    [
        (lambda r: r.replace(" R:0.", " R:1.", 1), "differing_figures"),  # one per-Eval figure
        (lambda r: r.replace("Average_F: 0.", "Average_F: 1.", 1), "avg_lines"),  # one Average line only
        (lambda r: "\n".join(ln for ln in r.splitlines() if " Eval " not in ln), "evals_one_side_only"),
    ],
    ids=["figure", "average", "missing-evals"],
)
def test_any_difference_fails_the_run(bench, monkeypatch, capsys, tmp_path, change, caught_by):
    monkeypatch.setattr(bench, "perl_rouge_available", lambda: None)
    monkeypatch.setattr(bench, "prepare_perl_rouge", lambda work: tmp_path)
    monkeypatch.setattr(bench, "run_perl_rouge", _fake_perl(bench, change))
    assert bench.main(["--cases", "1", "--flag-sets", "1"]) == 1
    rec, total = (json.loads(line) for line in capsys.readouterr().out.splitlines())
    assert total["identical"] is False
    found = {
        "differing_figures": rec["differing_figures"],
        "avg_lines": rec["avg_lines"] - rec["avg_lines_equal"],
        "evals_one_side_only": rec["evals_one_side_only"],
    }
    assert {k for k, v in found.items() if v} == {caught_by}


def test_unchanged_fake_perl_passes(bench, monkeypatch, capsys, tmp_path):
    """The control of the test above: the same run with nothing changed exits 0."""
    monkeypatch.setattr(bench, "perl_rouge_available", lambda: None)
    monkeypatch.setattr(bench, "prepare_perl_rouge", lambda work: tmp_path)
    monkeypatch.setattr(bench, "run_perl_rouge", _fake_perl(bench, lambda r: r))
    assert bench.main(["--cases", "1", "--flag-sets", "1"]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["identical"] is True


def test_one_side_failing_fails_the_run(bench, monkeypatch, capsys, tmp_path):
    def perl_fails(release, cfg, flags):
        raise bench.o.RougeError("perl died")

    monkeypatch.setattr(bench, "perl_rouge_available", lambda: None)
    monkeypatch.setattr(bench, "prepare_perl_rouge", lambda work: tmp_path)
    monkeypatch.setattr(bench, "run_perl_rouge", perl_fails)
    assert bench.main(["--cases", "1", "--flag-sets", "1"]) == 1
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert out[0]["one_side_failed"] == 1 and out[0]["first_difference"]["failed"] == "perl"


@pytest.mark.parametrize("ci", [None, "true"])
def test_without_perl_only_ci_fails(bench, monkeypatch, capsys, ci):
    monkeypatch.setattr(bench, "perl_rouge_available", lambda: "perl not found")
    if ci:
        monkeypatch.setenv("CI", ci)
    else:
        monkeypatch.delenv("CI", raising=False)
    assert bench.main(["--cases", "1"]) == (1 if ci else 0)
    assert json.loads(capsys.readouterr().out) == {
        "bench": "rouge_official",
        "skipped": "perl not found",
        "ci": bool(ci),
    }
