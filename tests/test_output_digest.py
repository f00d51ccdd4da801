"""scripts/output_digest.py: two runs compared output by output, wall-clock keys of JSON files, the fetch cache and
Snakemake's report (job run times inside) aside; any other difference, or a file one run lacks, exits 1."""

from __future__ import annotations

import json


def _run(root, results: dict, seconds: float, report: str, cache: str):
    (root / "results").mkdir(parents=True)
    (root / "resources" / "cache").mkdir(parents=True)
    (root / "logs").mkdir()
    (root / "results" / "metrics.json").write_text(
        json.dumps({**results, "train_seconds": seconds, "windows_per_second": 1 / seconds})
    )
    (root / "results" / "table.csv").write_text("a,b\n1,2\n")
    (root / "results" / "report.html").write_text(report)
    (root / "resources" / "cache" / "fetch.json").write_text(cache)
    (root / "logs" / "job.log").write_text(f"took {seconds} s")
    return root


def test_runs_differing_only_in_wall_clock_parts_are_identical(load_script, tmp_path, capsys):
    digest = load_script("output_digest.py")
    a = _run(tmp_path / "a", {"rouge_2": 8.7}, 1.5, "<html>runtime 1.5</html>", "fetched at 10:00")
    b = _run(tmp_path / "b", {"rouge_2": 8.7}, 2.5, "<html>runtime 2.5</html>", "fetched at 11:00")
    assert digest.main([str(a), "--compare", str(b)]) == 0
    last = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert last == {"files": 2, "identical": 2, "differ": 0, "missing": 0}  # metrics.json and table.csv


def test_a_changed_value_or_a_missing_file_exits_1(load_script, tmp_path, capsys):
    digest = load_script("output_digest.py")
    a = _run(tmp_path / "a", {"rouge_2": 8.7}, 1.5, "r", "c")
    b = _run(tmp_path / "b", {"rouge_2": 8.8}, 1.5, "r", "c")
    assert digest.main([str(a), "--compare", str(b)]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert {"path": "results/metrics.json", "status": "differs"} in lines
    (b / "results" / "metrics.json").write_text((a / "results" / "metrics.json").read_text())
    (a / "results" / "extra.csv").write_text("x\n")
    assert digest.main([str(a), "--compare", str(b)]) == 1
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert lines[0] == {"path": "results/extra.csv", "status": f"only in {a}"}
    assert lines[-1]["missing"] == 1 and lines[-1]["differ"] == 0
