"""The human-evaluation kit: seeded blind samples, rating sheets checked rater by rater, the papers' tables
with known agreement and significance figures, and the CLI's export / import round trip."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from humaneval_fixtures import WORDS, params, run_sample, run_score, write_inputs

from wikiref import layout
from wikiref.files import read_json
from wikiref.registry import params_json
from wikiref.stages.humaneval import scoring, sheets
from wikiref.stages.humaneval.studies import enabled


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write_inputs()
    return tmp_path


def _sample(study: str) -> tuple[dict, dict]:
    return read_json(layout.HUMANEVAL_ITEMS.format(study=study)), read_json(layout.HUMANEVAL_KEY.format(study=study))


def _write_sheet(path: Path, sample: dict, answers: dict[str, dict[str, str]]) -> None:
    """A filled CSV sheet: the rater's blank sheet with ``answers`` written into the question columns."""
    rows = list(csv.reader(io.StringIO(sheets.blank_sheet(sample, path.stem))))
    cols = {q["id"]: rows[0].index(sheets.column(q)) for q in sample["questions"]}
    for row in rows[1:]:
        for q, value in answers.get(row[0], {}).items():
            row[cols[q]] = value
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)


# -------------------------------------------------------------------------------------------- sample
def test_sample_is_seeded_stratified_and_blind(workdir):
    p = params()
    m = run_sample(p)
    files = sorted(Path(layout.HUMANEVAL_DIR).rglob("*.*"))
    first = {f: f.read_bytes() for f in files}
    run_sample(p)
    assert {f: f.read_bytes() for f in files} == first  # same params + seed -> the same bytes

    t3, key3 = _sample("wikiref_table3")
    assert m["studies"]["wikiref_table3"]["per_bin"] == {"20~50": 2, "50~100": 2}
    assert sorted(k["stratum"] for k in key3["items"].values()) == ["20~50", "20~50", "50~100", "50~100"]
    assert {k["record"] for k in key3["items"].values()} <= {f"ex{i}" for i in range(1, 8)}  # 0.1 is in no bin

    t7, key7 = _sample("wikiref_table7")
    text = json.dumps(t7)
    assert "bert" not in text and "bert_da" not in text  # system identities never reach the raters
    assert [f["label"] for f in t7["items"][0]["fields"]] == ["Query", "Summary A", "Summary B"]
    ab = [tuple(k["systems"].values()) for k in key7["items"].values()]
    assert set(ab) == {("bert", "bert_da"), ("bert_da", "bert")}  # A/B drawn per item (seed 13: both occur)
    for item in t7["items"]:  # the key says which system wrote the text shown as A
        a = key7["items"][item["id"]]["systems"]["A"]
        assert item["fields"][1]["text"].startswith(f"{WORDS[a]} sentence")
    t6, _ = _sample("qmdscnnir_table6")
    assert m["studies"]["qmdscnnir_table6"]["per_year"] == {"2006": 5, "2007": 5}
    assert "first-run summary" in json.dumps(t6) and "wiki" not in json.dumps(t6) and "cb" not in json.dumps(t6)

    _, key_p = _sample("psg2sum_table3")
    strata = [k["strata"] for k in key_p["items"].values()]
    assert sum("0.5" in s for s in strata) == 3 and sum("0.7" in s for s in strata) == 3
    assert all(k["score"] >= 0.7 for k in key_p["items"].values() if "0.7" in k["strata"])
    assert m["studies"]["psg2sum_table3"]["candidates"] == 8  # duplicates counted once

    w, key_w = _sample("wcep_ccnews")
    assert len(w["items"]) == 4 and all("retrieved" in k["record"] for k in key_w["items"].values())
    assert all(len(it["fields"][2]["text"].split("\n")) == 2 for it in w["items"])  # first `sentences` sentences

    # one blank sheet per declared rater, the rater's own order, every item once
    for r in ("rater1", "rater2", "rater3"):
        rows = list(
            csv.reader(io.StringIO(Path(layout.HUMANEVAL_SHEET.format(study="wikiref_table7", rater=r)).read_text()))
        )
        assert [row[0] for row in rows[1:]] == sheets.rater_order(t7, r)
    assert m["standin"] and t7["standin"]


def test_shortfall_is_recorded(workdir):
    m = run_sample(params(wikiref_table3={"per_bin": 10}))
    assert m["studies"]["wikiref_table3"]["shortfall"]["20~50"].startswith("3 of 10")


def test_a_missing_input_is_a_clear_error(workdir):
    from wikiref.stages.humaneval.sampling import SampleError

    with pytest.raises(SampleError, match="two different systems"):
        run_sample(params(wikiref_table7={"systems": ["bert", "bert"]}))
    Path(layout.FINETUNE_SUMMARIES.format(setting="bert", year=2007)).unlink()
    with pytest.raises(SampleError, match="finetune setting bert"):
        run_sample(params())


# -------------------------------------------------------------------------------------------- score
def test_without_ratings_every_table_awaits_them(workdir):
    p = params()
    run_sample(p)
    m = run_score(p)
    assert m["standin"] is True and all(s["standin"] for s in m["studies"].values())
    for study in m["studies"]:
        md = Path(f"{layout.HUMANEVAL_TABLE.format(study=study)}.md").read_text()
        assert "awaiting ratings" in md and "STAND-IN" in md
    df = pd.read_csv(f"{layout.HUMANEVAL_TABLE.format(study='wikiref_table3')}.csv")
    assert set(df["Relatedness"]) == {"awaiting ratings"}
    assert df["Relatedness (paper)"].tolist() == [2.87, 2.93] or df.shape[0] == 2  # bins the paper does not use: empty


def test_textbook_alpha():
    """Krippendorff (2011), "Computing Krippendorff's alpha-reliability", the 4 observers x 12 units example:
    nominal alpha = 0.743 (his worked result)."""
    n = np.nan
    data = [
        [1, 2, 3, 3, 2, 1, 4, 1, 2, n, n, n],
        [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, n, 3],
        [n, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, n],
        [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, n],
    ]
    assert scoring.alpha(data, "nominal") == pytest.approx(0.743, abs=5e-4)
    assert scoring.alpha([data[0]], "nominal") is None  # one rater: undefined


def test_table3_means_and_agreement_from_hand_made_sheets(workdir):
    """Two raters, relatedness on the 4 items: rater1 1,1,2,2 and rater2 1,2,2,2. By hand: the coincidence
    matrix has o11 = 2, o12 = o21 = 1, o22 = 4 (n = 8, n1 = 3, n2 = 5); D_o = 2/8, D_e = 2*3*5/(8*7) = 30/56,
    alpha = 1 - (2/8)/(30/56) = 8/15 = 0.5333 (ordinal equals nominal with two adjacent values). Salience:
    both raters agree on every item (1,2,3,3): alpha = 1."""
    p = params()
    run_sample(p)
    sample, key = _sample("wikiref_table3")
    ids = sorted(key["items"], key=lambda i: (key["items"][i]["stratum"], i))  # 20~50, 20~50, 50~100, 50~100
    r1 = dict(zip(ids, "1122"))
    r2 = dict(zip(ids, "1222"))
    sal = dict(zip(ids, "1233"))
    folder = Path(layout.HUMANEVAL_RATINGS.format(study="wikiref_table3"))
    _write_sheet(folder / "rater1.csv", sample, {i: {"relatedness": r1[i], "salience": sal[i]} for i in ids})
    _write_sheet(folder / "rater2.csv", sample, {i: {"relatedness": r2[i], "salience": sal[i]} for i in ids})
    m = run_score(p)["studies"]["wikiref_table3"]
    assert m["alpha"]["relatedness"] == pytest.approx(8 / 15)
    assert m["alpha"]["salience"] == pytest.approx(1.0)
    # bin 20~50: relatedness (1 + 1 + 1 + 2) / 4; bin 50~100: 2
    assert m["bins"]["20~50"]["relatedness"] == pytest.approx(1.25)
    assert m["bins"]["50~100"]["relatedness"] == pytest.approx(2.0)
    assert m["status"] == "2 of 2 declared raters"
    md = Path(f"{layout.HUMANEVAL_TABLE.format(study='wikiref_table3')}.md").read_text()
    assert "0.533" in md and "awaiting" not in md


def test_head_to_head_is_unblinded_with_the_key(workdir):
    """Every judge prefers cb on every item of 2006 (whether cb was shown as A or B): all 15 judgments
    go to cb, the paired bootstrap p is 0 (no resample has a difference above twice the observed one)."""
    p = params()
    run_sample(p)
    sample, key = _sample("qmdscnnir_table6")
    folder = Path(layout.HUMANEVAL_RATINGS.format(study="qmdscnnir_table6"))
    criteria = [q["id"] for q in sample["questions"]]
    for r in ("rater1", "rater2", "rater3"):
        answers = {}
        for iid, k in key["items"].items():
            cb = "A" if k["systems"]["A"] == "cb" else "B"
            answers[iid] = {c: (cb if k["stratum"] == "2006" else "=") for c in criteria}
        _write_sheet(folder / f"{r}.csv", sample, answers)
    m = run_score(p)["studies"]["qmdscnnir_table6"]
    assert m["counts"]["2006/informativeness"] == [0, 15, 0]
    assert m["counts"]["2007/overall"] == [0, 0, 15]
    assert m["p"]["2006/informativeness"] == 0.0
    assert m["p"]["2007/overall"] == 1.0  # no difference observed
    df = pd.read_csv(f"{layout.HUMANEVAL_TABLE.format(study='qmdscnnir_table6')}.csv")
    row = df[(df["Year"] == 2006) & (df["Criterion"] == "informativeness")].iloc[0]
    assert (row["wiki"], row["cb"], row["Paper WIKI"], row["Paper CB"]) == (0, 15, 30, 107)


def test_paired_bootstrap():
    assert scoring.paired_bootstrap([1, 2, 3], [1, 2, 3], 100, 0) == 1.0
    assert scoring.paired_bootstrap([], [], 100, 0) is None
    rng = np.random.default_rng(0)
    a = rng.normal(0, 1, 200)
    assert scoring.paired_bootstrap(a, a + 1.0, 1000, 0) < 0.01  # a clear gain is significant
    p = scoring.paired_bootstrap(a, a + rng.normal(0, 1, 200) * 0.01, 1000, 0)
    assert p > 0.05  # noise is not


# ------------------------------------------------------------------------------------- bad sheets
def test_bad_and_partial_sheets_name_the_rater_and_the_item(workdir):
    p = params()
    run_sample(p)
    sample, key = _sample("psg2sum_table3")
    folder = Path(layout.HUMANEVAL_RATINGS.format(study="psg2sum_table3"))
    ids = sorted(key["items"])
    answers = {i: {"quality": "good"} for i in ids}
    answers[ids[1]] = {"quality": "maybe"}
    _write_sheet(folder / "ann.csv", sample, answers)
    before = (folder / "ann.csv").read_bytes()
    with pytest.raises(sheets.SheetError, match=rf"rater ann .*item {ids[1]}: quality = 'maybe'"):
        run_score(p)
    assert (folder / "ann.csv").read_bytes() == before  # nothing changed, nothing lost

    del answers[ids[1]]
    _write_sheet(folder / "ann.csv", sample, answers)
    with pytest.raises(sheets.SheetError, match=rf"rater ann .*item {ids[1]}: unanswered quality"):
        run_score(p)

    # a web-page file, complete but not submitted; then one answering another sample
    (folder / "ann.csv").unlink()
    sheets.save(folder / "bob.json", sample, "bob", {i: {"quality": "good"} for i in ids})
    with pytest.raises(sheets.SheetError, match="rater bob .*not submitted"):
        run_score(p)
    data = json.loads((folder / "bob.json").read_text())
    (folder / "bob.json").write_text(json.dumps({**data, "digest": "0000", "submitted": True}))
    with pytest.raises(sheets.SheetError, match="rater bob .*another sample"):
        run_score(p)
    (folder / "bob.csv").write_text("item\n")
    with pytest.raises(sheets.SheetError, match="both a .json and a .csv"):
        run_score(p)


# ---------------------------------------------------------------------------------------------- CLI
@pytest.mark.slow
def test_cli_export_fill_import_score(workdir, subprocess_env):
    p = params()
    run_sample(p)
    sample, key = _sample("wcep_ccnews")
    blank = workdir / "sheet.csv"

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "wikiref", "humaneval", *args], capture_output=True, text=True, env=subprocess_env
        )

    res = cli("export", "--study", "wcep_ccnews", "--rater", "carol", "--out", str(blank))
    assert res.returncode == 0, res.stderr
    # an incomplete sheet is refused at import, naming the rater and the item
    res = cli("import", "--study", "wcep_ccnews", "--rater", "carol", str(blank))
    assert res.returncode == 1 and "rater carol" in res.stderr and "unanswered relation" in res.stderr
    labels = ["on-topic", "on-topic", "related", "unrelated"]
    _write_sheet(blank, sample, {i: {"relation": v} for i, v in zip(sorted(key["items"]), labels)})
    res = cli("import", "--study", "wcep_ccnews", "--rater", "carol", str(blank))
    assert res.returncode == 0, res.stderr
    res = cli("import", "--study", "wcep_ccnews", "--rater", "carol", str(blank))
    assert res.returncode == 1 and "--replace" in res.stderr  # never overwritten silently
    m = run_score(p)["studies"]["wcep_ccnews"]
    assert m["share"] == {"on-topic": 50.0, "related": 25.0, "unrelated": 25.0}
    md = Path(f"{layout.HUMANEVAL_TABLE.format(study='wcep_ccnews')}.md").read_text()
    assert "| 50.00 | 25.00 | 25.00 | 4 | 4 |" in md
    # what the rule runs: the score job reads the files it is given (--inputs, --ratings), not the folders
    pj = params_json(p, "humaneval", "score")
    studies = enabled(p["humaneval"])
    given = [
        f"{kind}.{s}={t.format(study=s)}"
        for s in studies
        for kind, t in (("items", layout.HUMANEVAL_ITEMS), ("key", layout.HUMANEVAL_KEY))
    ]
    sheet = Path(layout.HUMANEVAL_RATINGS.format(study="wcep_ccnews")) / "carol.csv"
    res = cli("score", "--params-json", pj, "--inputs", *given, "--ratings")
    assert res.returncode == 0, res.stderr
    assert read_json(layout.HUMANEVAL_METRICS)["studies"]["wcep_ccnews"]["status"] == scoring.AWAITING
    res = cli("score", "--params-json", pj, "--inputs", *given, "--ratings", str(sheet))
    assert res.returncode == 0, res.stderr
    assert read_json(layout.HUMANEVAL_METRICS)["studies"]["wcep_ccnews"]["share"]["on-topic"] == 50.0
    res = cli("score", "--params-json", pj, "--inputs", *given, "--ratings", "elsewhere/carol.csv")
    assert res.returncode == 2 and "not in a folder of a study" in res.stderr


# ------------------------------------------------------------------------------------ the page's server
def test_server_checks_answers_and_binds_loopback(workdir):
    """Without a browser: a value outside the scale is refused (400) and nothing is written; a good answer is
    on disk before the next item is served; the server listens on 127.0.0.1 only."""
    import threading
    import urllib.error
    import urllib.parse
    import urllib.request

    from wikiref.stages.humaneval import server

    run_sample(params())
    sample, _ = _sample("psg2sum_table3")
    path = workdir / "ratings" / "psg2sum_table3" / "eve.json"
    httpd = server.make_server(sample, "eve", path, 0)
    host, port = httpd.server_address[:2]
    assert host == "127.0.0.1"
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        url = f"http://{host}:{port}"
        first = sheets.rater_order(sample, "eve")[0]
        with urllib.request.urlopen(f"{url}/") as res:  # redirected to the first unanswered item
            assert f"<span id='item-id'>{first}</span>" in res.read().decode()
        bad = urllib.parse.urlencode({"quality": "excellent"}).encode()
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}/item/0", data=bad)
        assert err.value.code == 400 and "excellent" in err.value.read().decode()
        assert not path.exists()
        good = urllib.parse.urlencode({"quality": "good"}).encode()
        with urllib.request.urlopen(f"{url}/item/0", data=good) as res:
            assert res.status == 200
        assert json.loads(path.read_text())["answers"] == {first: {"quality": "good"}}
    finally:
        httpd.shutdown()
        httpd.server_close()
