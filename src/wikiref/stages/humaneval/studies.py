"""The five declared human studies: what raters see, which questions on which scale, the papers' numbers.

A study is declared here once (questions, scales, the table it fills, the published numbers quoted from
the papers' text); what is sampled and how many raters comes from ``params.yaml`` (section ``humaneval``,
one entry per study). Samplers are in :mod:`wikiref.stages.humaneval.sampling`, the tables in
:mod:`wikiref.stages.humaneval.scoring`.

=================  ==============================================  ===============================================
study              paper                                            item (what a rater judges)
=================  ==============================================  ===============================================
wikiref_table3     WikiRef journal Table III (§III-C)               query + document + statement, per oracle bin
wikiref_table7     WikiRef journal Table VII (§V-E)                 DUC 2007 query + two systems' summaries (A/B)
qmdscnnir_table6   QmdsCnnIr Table 6 (§6, human evaluation)         DUC query + a gold summary + two summaries (A/B)
psg2sum_table3     Psg2Sum Table 3 (§2.2)                           passage + added lead sentence, per λ threshold
wcep_ccnews        WCEP §3.3 (350 CC-NEWS articles)                 event summary + added article's title, 3 sentences
=================  ==============================================  ===============================================
"""

from __future__ import annotations

from dataclasses import dataclass, field

ONE_TO_THREE = (("1", "1 (poor)"), ("2", "2 (fair)"), ("3", "3 (good)"))
AB = (("A", "A is better"), ("B", "B is better"), ("=", "no difference"))


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    scale: tuple[tuple[str, str], ...]  # (value stored, label shown)
    level: str = "ordinal"  # Krippendorff's alpha level of measurement: ordinal | nominal
    system: str = ""  # "A" / "B": the question judges that summary alone (scored per hidden system)

    @property
    def values(self) -> tuple[str, ...]:
        return tuple(v for v, _ in self.scale)


@dataclass(frozen=True)
class Study:
    name: str
    table: str  # the paper table it fills
    paper: str  # where the published numbers are printed
    title: str
    instructions: str
    questions: tuple[Question, ...]
    paper_numbers: dict = field(default_factory=dict)

    def question(self, qid: str) -> Question:
        for q in self.questions:
            if q.id == qid:
                return q
        raise KeyError(qid)


def _per_summary(qid: str, text: str) -> tuple[Question, ...]:
    return tuple(Question(f"{qid}_{s}", f"Summary {s}: {text}", ONE_TO_THREE, system=s) for s in "AB")


TABLE6_CRITERIA = (
    ("informativeness", "Which summary answers the query better?"),
    ("non_redundancy", "Which summary repeats less of the same ideas?"),
    ("coherence", "Which summary expresses its ideas in the clearest manner, fluently?"),
    ("order", "Which summary presents the information in the more logical order?"),
    ("focus", "Which summary shares only the main ideas, with no superfluous details?"),
    ("overall", "Which summary is better overall?"),
)

# QmdsCnnIr Table 6: year -> (WIKI, CB, =) judgments per criterion, in TABLE6_CRITERIA's order
TABLE6_PAPER = {
    2006: ((30, 107, 12), (27, 110, 12), (27, 112, 11), (25, 112, 11), (21, 117, 12), (23, 103, 24)),
    2007: ((52, 63, 20), (51, 58, 25), (55, 59, 20), (56, 63, 12), (61, 59, 13), (46, 53, 35)),
}

STUDIES: dict[str, Study] = {
    s.name: s
    for s in (
        Study(
            name="wikiref_table3",
            table="WikiRef Table III",
            paper="WikiRef journal, Table III: 60 examples (15 per oracle-score bin), 3 volunteers, 1-3",
            title="Quality of WikiRef examples by oracle-score interval",
            instructions=(
                "Read the query (article title > section headings), the cited document and the statement "
                "(the summary). Score the summary from 1 (poor) to 3 (good) on both questions."
            ),
            questions=(
                Question(
                    "relatedness",
                    "Relatedness: to what extent is the summary a good response to the query?",
                    ONE_TO_THREE,
                ),
                Question(
                    "salience",
                    "Salience: to what extent does the summary convey salient document content given the query?",
                    ONE_TO_THREE,
                ),
            ),
            # journal Table III, ORACLE INTERVAL (x100) -> (relatedness, salience)
            paper_numbers={
                (20, 30): (2.87, 2.33),
                (30, 50): (2.80, 2.40),
                (50, 70): (2.87, 2.53),
                (70, 100): (2.93, 2.60),
            },
        ),
        Study(
            name="wikiref_table7",
            table="WikiRef Table VII",
            paper="WikiRef journal, Table VII: 30 DUC 2007 examples, 3 volunteers, 1-3",
            title="DUC 2007 summaries without and with data augmentation",
            instructions=(
                "Read the query, then the two summaries (their order is random). Score each summary from 1 "
                "(poor) to 3 (good): relatedness to the query, and redundancy (3 = no repeated content)."
            ),
            questions=_per_summary("relatedness", "how related is it to the query?")
            + _per_summary("redundancy", "how free of repeated content is it (3 = no repetition)?"),
            # journal Table VII: system position (first = without DA, second = with DA) -> (relatedness, redundancy)
            paper_numbers={"Bert": (2.20, 2.75), "Bert + DA": (2.48, 2.78)},
        ),
        Study(
            name="qmdscnnir_table6",
            table="QmdsCnnIr Table 6",
            paper="QmdsCnnIr, Table 6: DUC 2006 / 2007 samples, 3 AMT judges each, head-to-head",
            title="Head-to-head judgments of two models' DUC summaries",
            instructions=(
                "Read the query and the gold summary (the documents are not shown), then the two system "
                "summaries (their order is random). For each aspect choose A, B or no difference."
            ),
            questions=tuple(Question(c, t, AB, level="nominal") for c, t in TABLE6_CRITERIA),
            # QmdsCnnIr Table 6: year -> criterion -> (WIKI, CB, =) judgments (:data:`TABLE6_PAPER`)
            paper_numbers={y: dict(zip((c for c, _ in TABLE6_CRITERIA), v)) for y, v in TABLE6_PAPER.items()},
        ),
        Study(
            name="psg2sum_table3",
            table="Psg2Sum Table 3",
            paper="Psg2Sum, Table 3: 50 random pairs per overlap threshold λ, Good / Unsupported",
            title="Quality of mined passage-summary pairs by overlap threshold",
            instructions=(
                "Read the passage and the sentence added to the article's lead section. Good: the sentence "
                "is a summary of the passage. Unsupported: the sentence is irrelevant to the passage, or "
                "important content (dates, places, ...) cannot be found in it."
            ),
            questions=(
                Question(
                    "quality",
                    "Is the sentence a summary of the passage?",
                    (("good", "Good"), ("unsupported", "Unsupported")),
                    level="nominal",
                ),
            ),
            # Psg2Sum Table 3: λ -> (good, unsupported) of 50
            paper_numbers={0.5: (27, 23), 0.6: (33, 17), 0.7: (34, 16)},
        ),
        Study(
            name="wcep_ccnews",
            table="WCEP §3.3",
            paper="WCEP §3.3: 350 classifier-added CC-NEWS articles, on-topic / related / unrelated",
            title="Relatedness of the CC-NEWS articles the classifier added to WCEP clusters",
            instructions=(
                "Compare the article's title and first sentences to the event summary. On-topic: the article "
                "focuses on the event. Related: it mentions the event but focuses on something else (e.g. a "
                "follow-up). Unrelated: no mention of the event."
            ),
            questions=(
                Question(
                    "relation",
                    "How does the article relate to the event summary?",
                    (("on-topic", "On-topic"), ("related", "Related"), ("unrelated", "Unrelated")),
                    level="nominal",
                ),
            ),
            # WCEP §3.3: percent of the 350 annotated articles
            paper_numbers={"on-topic": 52, "related": 30, "unrelated": 18},
        ),
    )
}
NAMES = tuple(STUDIES)


def enabled(params_section: dict) -> list[str]:
    """The studies the ``humaneval`` params enable, sorted by name (:func:`wikiref.layout.humaneval_studies`)."""
    return sorted(n for n, s in params_section["studies"].items() if s["enabled"])


def raters(params_section: dict, name: str) -> list[str]:
    """The declared raters' names of study ``name``: rater1 .. rater<n>."""
    return [f"rater{i + 1}" for i in range(int(params_section["studies"][name]["raters"]))]
