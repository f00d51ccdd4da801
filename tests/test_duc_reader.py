"""The NIST DUC reader on a hand-made copy of the official layouts (DUC 2005 TREC/FT/LA Times files,
DUC 2006/2007 AQUAINT files, NIST's tarball folder names, model summaries named D0601.M.250.A.A),
and the whole DUC path (reader -> data/duc -> baselines, Snakemake rules) run on it unchanged."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
import yaml

from wikiref.stages.duc import reader as duc

TOPICS_2005 = """<topic>
<num> d301i </num>
<title> International Organized Crime </title>
<narr>
Identify and describe types of organized crime that crosses borders or involves more than one country. Name the countries involved.
</narr>
<granularity> specific </granularity>
</topic>

<topic>
<num> d307b </num>
<title> New Hydroelectric Projects </title>
<narr>
What hydroelectric projects are planned or in progress and what problems are associated with them?
</narr>
<granularity> general </granularity>
</topic>
"""

FT_DOC = """<DOC>
<DOCNO>FT921-10225</DOCNO>
<PROFILE>_AN-CCCATAETFT</PROFILE>
<DATE>920303
</DATE>
<HEADLINE>
FT  03 MAR 92 / Crime gangs move across borders
</HEADLINE>
<TEXT>
Organized crime groups from Italy and Colombia are
expanding into eastern Europe, police said.

Drug trafficking &amp; money laundering are the main
activities of the gangs, which cross borders freely.
</TEXT>
<PUB>The Financial Times</PUB>
</DOC>
"""

LA_DOCS = """<DOC>
<DOCNO> LA010189-0001 </DOCNO>
<DOCID> 1 </DOCID>
<DATE>
<P>
January 1, 1989, Sunday, Home Edition
</P>
</DATE>
<HEADLINE>
<P>
Smuggling ring broken
</P>
</HEADLINE>
<TEXT>
<P>
Police broke up a smuggling ring that moved stolen cars from Germany to Poland.
</P>
<P>
The countries involved signed a new agreement on organized crime.
</P>
</TEXT>
</DOC>
<DOC>
<DOCNO> LA050190-0042 </DOCNO>
<DATE><P>May 1, 1990, Tuesday</P></DATE>
<TEXT>
<P>
Money laundering by crime gangs crosses borders between several countries.
</P>
</TEXT>
</DOC>
"""


def aquaint(docno: str, date: str, paragraphs: list[str]) -> str:
    body = "\n".join(f"<P>\n{p}\n</P>" for p in paragraphs)
    return (
        f"<DOC>\n<DOCNO> {docno} </DOCNO>\n<DOCTYPE> NEWS STORY </DOCTYPE>\n<DATE_TIME> {date} 18:43 </DATE_TIME>\n"
        f"<BODY>\n<HEADLINE>\nheadline of {docno}\n</HEADLINE>\n<TEXT>\n{body}\n</TEXT>\n</BODY>\n"
        f"<TRAILER> AP-NY-07-07-99 1843EDT </TRAILER>\n</DOC>\n"
    )


def make_nist_tree(root: Path) -> Path:
    """DUC 2005-2007 in the folder names of NIST's tarballs, under root/<year>/."""
    y = root / "2005"
    (y / "DUC2005_Summarization_Documents" / "duc2005_docs" / "d301i").mkdir(parents=True)
    (y / "DUC2005_Summarization_Documents" / "duc2005_docs" / "d307b").mkdir(parents=True)
    (y / "duc2005_topics.sgml").write_text(TOPICS_2005)
    docs = y / "DUC2005_Summarization_Documents" / "duc2005_docs"
    (docs / "d301i" / "FT921-10225").write_text(FT_DOC)
    (docs / "d301i" / "LA010189-0001").write_text(LA_DOCS)  # a TREC file with two <DOC>s
    (docs / "d307b" / "FT934-1").write_text(
        FT_DOC.replace("FT921-10225", "FT934-1")
        .replace("920303", "931201")
        .replace("Organized crime", "The dam project")
    )
    models = y / "results" / "ROUGE" / "models"
    models.mkdir(parents=True)
    (models / "D301.M.250.I.A").write_text(
        "Organized crime crosses borders between Italy, Colombia and Poland.\nGangs launder money and smuggle cars.\n"
    )
    (models / "D301.M.250.I.B").write_text("Crime gangs from Italy and Colombia expand into eastern Europe.\n")
    (models / "D301.M.100.I.A").write_text("a 100-word summary: not the 250-word task\n")
    (models / "D301.M.250.J.A").write_text("another assessor's topic\n")
    (models / "D307.M.250.B.C").write_text("Dams are planned; problems are floods and resettlement.\n")
    for year, docs_sub, models_sub in (
        (2006, "DUC2006_Summarization_Documents/duc2006_docs", "NISTeval/ROUGE/models"),
        (2007, "duc2007_testdocs/main", "mainEval/ROUGE/models"),
    ):
        y = root / str(year)
        yy = str(year)[2:]
        (y / f"duc{year}_topics.sgml").parent.mkdir(parents=True, exist_ok=True)
        (y / f"duc{year}_topics.sgml").write_text(
            f"<topic>\n<num> D{yy}01A </num>\n<title> Indian tribes and casinos </title>\n<narr>\n"
            "What are the effects of casinos on Indian tribes? Include economic and social effects.\n</narr>\n</topic>\n"
        )
        cdir = y / docs_sub / f"D{yy}01A"
        cdir.mkdir(parents=True)
        (cdir / f"APW{year - 7}0707.0181").write_text(
            aquaint(
                f"APW{year - 7}0707.0181",
                f"{year - 7}-07-07",
                [
                    "Casinos brought jobs to many Indian tribes. Unemployment fell on the reservations.",
                    "Critics say gambling causes social problems.",
                ],
            )
        )
        (cdir / f"NYT{year - 7}0101.0001").write_text(
            aquaint(f"NYT{year - 7}0101.0001", f"{year - 7}-01-01", ["The tribe opened its first casino in January."])
        )
        m = y / models_sub
        m.mkdir(parents=True)
        (m / f"D{yy}01.M.250.A.A").write_text("Casinos gave Indian tribes jobs and money.\nSocial problems followed.\n")
        (m / f"D{yy}01.M.250.A.E").write_text("Tribes used casino income for schools and health care.\n")
    return root


def regex_splitter(texts: list[str]) -> list[list[str]]:
    return [[s for s in re.split(r"(?<=[.?!])\s+", t) if s] for t in texts]


@pytest.fixture()
def nist_root(tmp_path) -> Path:
    return make_nist_tree(tmp_path / "duc")


def test_reads_duc2005_trec_files(nist_root):
    topics = duc.read_year(nist_root, 2005, None)
    assert [t.num for t in topics] == ["d301i", "d307b"]
    t = topics[0]
    assert t.title == "International Organized Crime" and t.extra["granularity"] == "specific"
    assert [r.name for r in t.references] == ["D301.M.250.I.A", "D301.M.250.I.B"]  # not .M.100. nor assessor J
    assert t.references[0].lines[1] == "Gangs launder money and smuggle cars."
    docs = {d.docno: d for d in t.documents}
    assert set(docs) == {"FT921-10225", "LA010189-0001", "LA050190-0042"}
    ft = docs["FT921-10225"]
    # <TEXT> without <P>: paragraphs at blank lines, wrapped lines joined, entities decoded
    assert ft.paragraphs == [
        "Organized crime groups from Italy and Colombia are expanding into eastern Europe, police said.",
        "Drug trafficking & money laundering are the main activities of the gangs, which cross borders freely.",
    ]
    assert ft.date == "19920303" and ft.headline.startswith("FT 03 MAR 92")
    assert docs["LA010189-0001"].date == "19890101" and len(docs["LA010189-0001"].paragraphs) == 2
    assert docs["LA050190-0042"].date == "19900501"
    assert t.most_recent_document().docno == "FT921-10225"
    duc.split_sentences(topics, regex_splitter)
    assert t.query == [
        "International Organized Crime",
        "Identify and describe types of organized crime that crosses borders or involves more than one country.",
        "Name the countries involved.",
    ]


@pytest.mark.parametrize("year", [2006, 2007])
def test_reads_aquaint_years_from_nist_folder_names(nist_root, year):
    (t,) = duc.read_year(nist_root, year, None)
    assert t.num == f"D{str(year)[2:]}01A"
    assert [r.summarizer for r in t.references] == ["A", "E"]
    assert [d.docno for d in t.documents_by_date()] == [f"NYT{year - 7}0101.0001", f"APW{year - 7}0707.0181"]
    assert t.most_recent_document().paragraphs[1] == "Critics say gambling causes social problems."


def test_missing_pieces_are_clear_errors(nist_root):
    with pytest.raises(duc.DucLayoutError, match="Expected the NIST layout"):
        duc.read_year(nist_root, 2008, None)
    for f in (nist_root / "2006" / "NISTeval" / "ROUGE" / "models").iterdir():
        f.unlink()
    with pytest.raises(duc.DucLayoutError, match=r"topic D0601A: 0 model summaries named D0601\.M\.250\.A\.\*"):
        duc.read_year(nist_root, 2006, None)
    with pytest.raises(duc.DucLayoutError, match="does not exist"):
        duc.read_year(nist_root / "nowhere", 2006, None)


def test_parsing_helpers():
    assert duc.topic_model_key("D0601A") == ("D0601", "A") and duc.topic_model_key("d301i") == ("D301", "I")
    names = ["D0601.M.250.A.A", "D0601.M.250.A.J", "D0601.M.250.B.A", "D0611.M.250.A.A", "D0601.M.100.A.A"]
    assert duc.model_files_for("D0601A", names) == ["D0601.M.250.A.A", "D0601.M.250.A.J"]
    with pytest.raises(ValueError, match="without <DOCNO>"):
        duc.parse_documents("<DOC><TEXT>x</TEXT></DOC>")
    assert duc.document_date("XIE20000101.0001", "") == "20000101"


def test_topic_rows_targets_are_pooled_rouge2_recall(nist_root):
    from wikiref.rouge.oracle import sentence_scores

    topics = duc.read_year(nist_root, 2005, None)
    duc.split_sentences(topics, regex_splitter)
    rows = duc.topic_rows(topics)
    assert [r["id"] for r in rows] == sorted(r["id"] for r in rows)
    r = next(r for r in rows if r["doc_id"] == "FT921-10225")
    assert r["doc_position"] == 2  # oldest first: LA 1989, LA 1990, FT 1992
    refs = [x.text for x in topics[0].references]
    assert r["sentence_targets"] == sentence_scores(r["doc_sentences"], refs, metric="rouge2_recall")
    assert max(r["sentence_targets"]) > 0
    from wikiref.extractive.baselines import rows_to_topics

    back = rows_to_topics(rows)
    assert back[0]["topic"] == "d301i" and [d["doc_id"] for d in back[0]["documents"]] == [
        "LA010189-0001",
        "LA050190-0042",
        "FT921-10225",
    ]


@pytest.mark.slow
def test_snakemake_duc_targets_run_unchanged_on_a_nist_copy(repo, tmp_path, nist_root, snakemake):
    """The paper profile's DUC path (duc.standin false) on the NIST-layout copy: the duc stage's rules
    (duc_prepare, duc_baselines) through Snakemake, nothing but duc.root changed."""
    overlay = tmp_path / "nist.yaml"
    overlay.write_text(yaml.safe_dump({"duc": {"root": str(nist_root), "standin": False}}))
    work = tmp_path / "work"
    work.mkdir()
    res = snakemake(
        work, "--configfile", str(repo / "config/paper.yaml"), str(overlay), "--cores", "1", "duc_all", timeout=900
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    df = pd.read_parquet(work / "data/duc/2005.parquet")
    assert set(df.topic) == {"d301i", "d307b"} and len(df) == 4
    assert list(df[df.topic == "d301i"].iloc[0]["query"])[0] == "International Organized Crime"
    metrics = json.loads((work / "results/metrics/duc_baselines.json").read_text())
    assert metrics["standin"] is False
    assert set(metrics["systems"]) == {"lead", "query_sim", "oracle", "lead_each", "query_sim_plain"}
    assert metrics["systems"]["oracle"]["2006"]["ROUGE-2"]["R"] > 0
    md = (work / "results/tables/table6_duc_baselines.md").read_text()
    assert "profile: paper" in md and "STAND-IN" not in md and "| LEAD |" in md
