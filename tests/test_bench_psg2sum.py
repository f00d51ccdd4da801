"""bench/psg2sum.py's comparison logic (nothing is timed): on a tiny hand-made history the reference
re-implementation (every page materialised, the edit rules written again) finds the pairs and rule counts
of the part job; an altered, a dropped and an extra pair and a differing counter are reported; the real
histories of ../shared/data agree too (skipped when absent); the synthetic history and the large-page
file the bench writes are read back as intended."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest

from wikiref import config
from wikiref.registry import job_keys
from wikiref.wiki.dump import ExportPage, ExportRevision, export_xml

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "mediawiki-history"

LEAD = "'''Pear''' is a fruit tree of the genus Pyrus in the rose family."
LEAD_S1 = "Pear trees are cultivated in orchards across China and Europe for their sweet fruit."
LEAD_S2 = "The fruit is harvested in late summer and stored in cool rooms."
DESCRIPTION = (
    "== Description ==\nThe tree is medium sized and has glossy leaves, white flowers in spring and a broad "
    "crown that gives shade in the orchard during the hot months."
)
CULTIVATION = (
    "== Cultivation ==\nPear trees have been cultivated in orchards across China and Europe since ancient "
    "times for their sweet and juicy fruit, which is eaten fresh or dried."
)
HARVEST = (
    "== Harvest ==\nThe fruit is harvested in late summer when still firm, and then stored in cool rooms where "
    "it ripens slowly over several weeks before it is sold."
)


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("psg2sum")


def params_for(job: str) -> dict:
    return config.select(config.load_params(), *job_keys("psg2sum", job))


def page(page_id: int, title: str, texts: list[str], namespace: int = 0) -> ExportPage:
    revs = tuple(
        ExportRevision(
            page_id * 100 + k + 1, page_id * 100 + k if k else None, f"2019-01-01T{k:02d}:00:00Z", "Ed", "c", t
        )
        for k, t in enumerate(texts)
    )
    return ExportPage(page_id, title, namespace, revs)


def hand_made_history(path: Path) -> Path:
    r1 = f"{LEAD}\n\n{DESCRIPTION}\n"
    r2 = f"{LEAD} {LEAD_S1}\n\n{DESCRIPTION}\n\n{CULTIVATION}\n"
    vandal = f"{LEAD} {LEAD_S1}\n\nLOL\n"
    bot = r2 + "\n" + "Imported table row. " * 1300 + "\n"
    r9 = f"{LEAD} {LEAD_S1} {LEAD_S2}\n\n{DESCRIPTION}\n\n{CULTIVATION}\n\n{HARVEST}\n"
    pages = [
        # first; pair; vandalism; revert; no change; bot paste (large edit); its revert; deleted text; pair
        page(10, "Pear", [r1, r2, vandal, r2, r2, bot, r2, "DELETED-REVISION-TEXT", r9]),
        page(11, "Talk:Pear", [r1, r2], namespace=1),  # another namespace: not read
        page(12, "Pyrus", [r1, r2]),  # a redirect page (<redirect/> added below): not read
        # the article becomes a redirect, then an article again: two pairs skipped as redirects
        page(13, "Apple", [r1, "#REDIRECT [[Malus]]", r2]),
    ]
    xml = export_xml(pages, sitename="test", generator="test", namespaces={0: "", 1: "Talk"})
    xml, n = re.subn(r"<text [^>]*>DELETED-REVISION-TEXT</text>", '<text bytes="0" deleted="deleted" />', xml)
    assert n == 1
    xml = xml.replace("    <id>12</id>\n", '    <id>12</id>\n    <redirect title="Pear" />\n', 1)
    path.write_text(xml, encoding="utf-8")
    return path


def run_both(bench, path: Path, tmp: Path):
    from wikiref.stages.psg2sum import stage

    p = params_for("part")
    out = {"pairs": tmp / "part.parquet", "stats": tmp / "part.json"}
    stats = stage.part(p, {"dump": str(path)}, out, part_name="part")
    rows = bench.read_rows(out["pairs"])
    ref_rows, ref_counts = bench.reference_pairs(
        path,
        bench.make_miner(p),
        namespaces=tuple(p["psg2sum"]["namespaces"]),
        max_edit_chars=p["psg2sum"]["max_edit_chars"],
        min_score=min(float(x) for x in p["psg2sum"]["overlap_grid"]),
    )
    return rows, stats["counts"], ref_rows, ref_counts


@pytest.fixture(scope="module")
def hand_made(bench, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("bench-psg2sum")
    return run_both(bench, hand_made_history(tmp / "history.xml"), tmp)


def test_reference_agrees_with_the_part_job(bench, hand_made):
    rows, counts, ref_rows, ref_counts = hand_made
    cmp = bench.compare_pairs(rows, ref_rows, counts, ref_counts)
    assert cmp["same"], cmp
    assert cmp["pairs_stage"] == cmp["pairs_reference"] == len(rows) >= 2
    assert {r["rev_id"] for r in rows} == {1002, 1009}  # the two editors' lead + passage edits
    assert {r["summary"] for r in rows} == {LEAD_S1, LEAD_S2}
    assert next(r for r in rows if r["rev_id"] == 1009)["parent_rev_id"] == 1007  # the deleted one skipped
    expected = {
        "revisions:first": 2,
        "skipped:revert": 2,
        "skipped:no_change": 1,
        "skipped:large_edit": 1,
        "skipped:redirect": 2,
    }
    for key, n in expected.items():
        assert counts[key] == ref_counts[key] == n, key
    assert all(r["page_id"] in (10, 13) for r in ref_rows)


def test_altered_dropped_and_extra_pairs_are_reported(bench, hand_made):
    rows, counts, ref_rows, ref_counts = hand_made
    altered = [dict(r) for r in rows]
    altered[0]["summary"] += " (altered)"
    cmp = bench.compare_pairs(altered, ref_rows, counts, ref_counts)
    assert not cmp["same"] and cmp["only_stage"] == 1 and cmp["only_reference"] == 1
    assert cmp["examples_only_stage"][0]["summary"].endswith("(altered)")

    score = [dict(r) for r in rows]
    score[0]["score"] = score[0]["score"] - 1e-12  # a score off by a rounding error is a difference too
    assert not bench.compare_pairs(score, ref_rows)["same"]

    cmp = bench.compare_pairs(rows[1:], ref_rows)
    assert not cmp["same"] and (cmp["only_stage"], cmp["only_reference"]) == (0, 1)
    cmp = bench.compare_pairs(rows + rows[:1], ref_rows)  # a duplicated pair: multisets differ
    assert not cmp["same"] and (cmp["only_stage"], cmp["only_reference"]) == (1, 0)


def test_a_differing_rule_counter_is_reported(bench, hand_made):
    rows, counts, ref_rows, ref_counts = hand_made
    other = Counter(ref_counts)
    other["skipped:revert"] -= 1
    other["edits:yielded"] += 1
    cmp = bench.compare_pairs(rows, ref_rows, counts, other)
    assert not cmp["same"]
    assert set(cmp["counter_differences"]) == {"skipped:revert", "edits:yielded"}
    assert cmp["counter_differences"]["skipped:revert"] == {"stage": 2, "reference": 1}


def test_reference_sha1_is_mediawikis(bench):
    from wikiref.stages.psg2sum.history import mediawiki_sha1

    for text in ("", "Pear", "é ü ✓ " * 50):
        assert bench.sha1_base36(text) == mediawiki_sha1(text)


@pytest.mark.shared_data
@pytest.mark.parametrize("name", ["article-pear.xml", "article-pyrus.xml", "pair-0.10.xml", "article-pear-0.10.xml"])
def test_reference_agrees_on_real_histories(bench, tmp_path, name):
    path = SHARED / name
    if not path.is_file():
        pytest.skip(f"{path} absent")
    rows, counts, ref_rows, ref_counts = run_both(bench, path, tmp_path)
    cmp = bench.compare_pairs(rows, ref_rows, counts, ref_counts)
    assert cmp["same"], cmp
    read = sum(ref_counts[k] for k in bench.RULE_COUNTERS)
    assert read == 0 if name == "article-pyrus.xml" else read > 0  # Pyrus: a page marked <redirect />


def test_synthetic_history_is_seeded_and_has_every_kind_of_edit(bench):
    paras = [" ".join(f"word{i}x{j}" for j in range(30)) + f". Second sentence {i} Here." for i in range(8)]
    body = "\n\n".join(f"== S{i} ==\n{p}" if i % 2 == 0 else p for i, p in enumerate(paras))
    text = f"{LEAD} {LEAD_S1}\n\n{body}"
    a = bench.synthetic_revisions(text, 60, random.Random(1))
    b = bench.synthetic_revisions(text, 60, random.Random(1))
    assert a == b and len(a) == 60
    ops = Counter(op for _, op in a)
    assert ops["revert"] >= 1 and ops["copyedit"] >= 10
    texts = [t for t, _ in a]
    assert any(texts[i] in texts[:i] for i in range(1, len(texts)))  # reverts bring back earlier texts
    assert len(a[0][0]) < len(text)  # body paragraphs held back, added later


def test_large_page_file_is_read_revision_by_revision(bench, tmp_path):
    path = tmp_path / "large.xml.gz"
    xml_bytes = bench.write_big_pages(path, 2, 5, 3)
    read = bench.run_reader(path)
    assert read["pages"] == 2 and read["revisions"] == 10
    assert bench.run_decompress(path) == xml_bytes
    pages = list(bench.materialised_pages(path))
    assert [len(p["revisions"]) for p in pages] == [5, 5]
    assert sum(len(r["text"]) for p in pages for r in p["revisions"]) == read["chars"]
