"""scripts/duc-cost-probe: a DUC-sized STAND-IN tree (Table V's clusters and documents, the sentences this
package's splitter counts on the real years) that the DUC reader reads and every consumer labels STAND-IN."""

from __future__ import annotations

import json

import pytest

from wikiref.stages.duc import reader as duc
from wikiref.stages.duc import standin as ds
from wikiref.stages.duc.table5 import MEASURED_SENTENCES, PAPER_TABLE5


@pytest.mark.shared_data
@pytest.mark.slow
def test_probe_has_real_duc_sizes_and_is_read_as_a_standin(load_script, shared_data, tmp_path, capsys):
    probe = load_script("duc-cost-probe")
    root = tmp_path / "duc"
    argv = [
        "--out",
        str(root),
        "--qmsum",
        str(shared_data / "qmsum" / "val.jsonl"),
        "--cnn",
        str(shared_data / "cnn-stories"),
    ]
    assert probe.main(argv) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert ds.is_standin_tree(root) and "NOT DUC" in (root / "NOTICE.txt").read_text()
    for year in (2006, 2007):
        clusters, documents, _ = PAPER_TABLE5[year]
        got = line["years"][str(year)]
        assert (got["clusters"], got["documents"]) == (clusters, documents)
        assert abs(got["sentences"] - MEASURED_SENTENCES[year]) < 0.03 * MEASURED_SENTENCES[year]
        topics = duc.read_year(root, year)
        assert len(topics) == clusters and sum(len(t.documents) for t in topics) == documents
        assert all(len(t.references) == 4 for t in topics)
        assert all(len(r.text.split()) <= 250 for t in topics for r in t.references)
        assert "STAND-IN" in (root / str(year) / f"duc{year}_topics.sgml").read_text().splitlines()[0]
        # narratives are QMSum queries (several questions), not the Wikipedia stand-in's "Describe ..."
        assert all("?" in t.narrative and not t.narrative.startswith("Describe") for t in topics[:5])
    # same seed, same tree (the MANIFEST hashes every file); a non-empty --out is refused
    again = tmp_path / "again"
    assert probe.main(["--out", str(again), *argv[2:]]) == 0
    manifest = lambda p: json.loads((p / "MANIFEST.json").read_text())["id"]  # noqa: E731
    assert manifest(again) == manifest(root)
    with pytest.raises(SystemExit):
        probe.main(argv)


def test_a_standin_notice_must_say_not_duc(tmp_path):
    with pytest.raises(ValueError, match="NOT DUC"):
        ds.write_standin(tmp_path / "x", {}, models_per_cluster=1, notice="a tree")
