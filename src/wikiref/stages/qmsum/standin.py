"""A STAND-IN QMSum file: synthetic meetings in the exact published JSON-lines format.

The sample must run the QMSum steps offline even where the real files are not at hand, so this module
writes a file that :func:`wikiref.stages.qmsum.reader.read_meetings` reads like a real one (the four
lists, span turn indices as strings, one meeting a line). Every meeting is made up from templates:

* 3 to 5 speakers named ``Stand-in <role>``; the first turn says that the meeting is a STAND-IN,
  written by wikiref, not a QMSum transcript; each topic of ``topic_list`` starts with ``Stand-in topic:``;
* 3 to 5 agenda items (subjects drawn from :data:`SUBJECTS`), each a block of turns: the chair opens
  it, then for 2 or 3 proposals a speaker proposes an option with a reason, someone may raise a
  concern, someone agrees; filler turns (back-channels, chit-chat) are spread between them so that a
  meeting has 60 to 150 turns (and its opening is chit-chat, as in real meetings);
* 1 general query ("What were the main discussion points of the meeting?") whose answer restates the
  decisions of every item, and 3 to 6 specific queries about one proposal, one item or two proposals of
  two items (two spans, as some QMSum queries have), whose spans cover exactly the turns of what they
  ask about and whose answers restate the words of those turns in reported speech ("The industrial
  designer proposed recycled plastic for the casing because it survives being dropped.").

So a query names the words of its turns (QUERY-SIM can find them), the answer shares bigrams with the
span turns and hardly any with the opening (ORACLE > QUERY-SIM >= LEAD), and a model that reads the
query has something to learn. Numbers computed on it are NOT comparable to QMSum's. Same ``meetings``
and ``seed`` -> the same bytes.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wikiref.files import stable_id, write_text

NOTE = (
    "STAND-IN: synthetic meetings written by wikiref in the QMSum file format (templates, not QMSum "
    "transcripts); numbers computed on them are NOT comparable to QMSum's (Zhong et al., NAACL 2021)."
)
NOTICE_TURN = (
    "Before we start : this is a STAND-IN meeting , synthetic text written by wikiref , not a QMSum transcript ."
)
MIN_TURNS, MAX_TURNS = 60, 150
ROLES = ("Project Manager", "Industrial Designer", "Marketing Expert", "Interface Designer", "Engineer", "Researcher")
GENERAL_QUERY = "What were the main discussion points of the meeting?"

# (subject as said in a sentence, topic label, options, reasons, concerns)
SUBJECTS = (
    (
        "the battery",
        "Battery choice",
        ("lithium cells", "rechargeable packs", "standard AA batteries", "a solar strip"),
        ("they last longer between charges", "they cost less per unit", "users can swap them easily"),
        ("the charger adds weight", "the supplier has long delivery times"),
    ),
    (
        "the casing",
        "Casing material",
        ("recycled plastic", "brushed aluminium", "soft rubber", "bamboo fibre"),
        ("it survives being dropped", "it fits the green image", "it feels warm in the hand"),
        ("the mould is expensive", "it scratches quickly"),
    ),
    (
        "the button layout",
        "Button layout",
        ("one large scroll wheel", "fewer buttons on the front", "a hidden menu panel", "backlit number keys"),
        ("older users find the keys faster", "the front looks cleaner", "people rarely use the menu"),
        ("children might press it by accident", "the panel could break off"),
    ),
    (
        "the production budget",
        "Budget",
        ("a cheaper chip", "one shared mould", "a smaller first batch", "twelve euros per unit"),
        ("the margin stays above target", "the factory can reuse its tools", "the risk of unsold stock drops"),
        ("quality might suffer", "the finance office has not signed off"),
    ),
    (
        "the speech recognizer",
        "Recognizer training",
        ("more training data", "a noise filter on the far microphones", "a smaller vocabulary", "speaker adaptation"),
        ("the word error rate drops", "the far microphones pick up fan noise", "decoding runs twice as fast"),
        ("the training run takes a week", "the test set is too small to tell"),
    ),
    (
        "the transcription work",
        "Transcription",
        ("two extra transcribers", "a second checking pass", "automatic forced alignment", "a shared style guide"),
        (
            "the backlog of meetings keeps growing",
            "overlapping speech gets marked consistently",
            "errors are caught early",
        ),
        ("the transcribers need training first", "the budget for hourly staff is tight"),
    ),
    (
        "the recording setup",
        "Recording setup",
        ("close talking microphones", "a second backup disk", "a digits reading task", "a new consent form"),
        ("the signal stays clean", "no session gets lost", "every speaker can be identified later"),
        ("people forget to wear them", "the legal office must approve it"),
    ),
    (
        "the user survey",
        "User survey",
        ("an online questionnaire", "ten home visits", "a focus group of students", "a short phone poll"),
        (
            "it reaches many users cheaply",
            "we see how people really hold the device",
            "the answers come back in a week",
        ),
        ("the sample might be biased", "it overlaps with the marketing report"),
    ),
    (
        "the school funding proposal",
        "School funding",
        (
            "a two year pilot scheme",
            "extra teachers in rural schools",
            "an independent review panel",
            "free breakfast clubs",
        ),
        (
            "small schools are struggling to recruit",
            "attendance improves in the pilot areas",
            "the spending can be checked",
        ),
        ("the councils were not consulted", "the money runs out after the pilot"),
    ),
    (
        "the project schedule",
        "Schedule",
        (
            "a demo at the end of the month",
            "weekly progress meetings",
            "a frozen feature list",
            "an extra testing week",
        ),
        ("the client wants to see progress", "problems surface earlier", "the team stops changing the design"),
        ("the holidays fall in the middle", "the demo room is booked"),
    ),
    (
        "the data storage policy",
        "Data storage",
        (
            "encrypted archive disks",
            "a retention limit of five years",
            "anonymised speaker codes",
            "a public release subset",
        ),
        ("participants asked for privacy", "the disks fill up quickly", "other labs can reuse the corpus"),
        ("decoding the codes later gets harder", "the release needs a license review"),
    ),
    (
        "the marketing campaign",
        "Marketing campaign",
        ("a television spot", "a social media launch", "posters in shops", "a bundle with a television set"),
        ("young buyers watch online video", "shoppers decide at the shelf", "the bundle doubles the reach"),
        ("the spot costs most of the budget", "the slogan is not final yet"),
    ),
)
FILLERS = (
    "Yeah .",
    "Mm-hmm .",
    "OK .",
    "Right .",
    "Uh-huh .",
    "Yeah , yeah .",
    "Sure .",
    "Hmm .",
    "OK , {disfmarker} go on .",
    "Sorry , can you say that again ?",
    "Let me just write that down .",
    "Uh , {vocalsound} right .",
)
CHITCHAT = (
    "Is the projector working today ?",
    "Did anyone book the room for next week ?",
    "The coffee machine on the second floor is broken again .",
    "I will send the slides round after lunch .",
    "Can everyone hear me at the back ?",
    "Sorry I am late , the train was delayed .",
    "Shall we wait for the others or just start ?",
    "Has everyone got the agenda ?",
)
PROPOSE = (
    "I think for {subject} we should go with {option} , because {reason} .",
    "What about {option} for {subject} ? I mean , {reason} .",
    "So on {subject} , my suggestion is {option} , since {reason} .",
    "For {subject} I would pick {option} . {Reason} , that is the main thing .",
)
CONCERN = (
    "Hmm , but {concern} , so I am not sure about {option} .",
    "One problem with {option} is that {concern} .",
)
AGREE = (
    "OK , let 's agree on {option} for {subject} then .",
    "Fine , {option} it is .",
    "Yeah , I can live with {option} .",
)
OPEN_ITEM = ("Next item is {subject} .", "OK , let 's talk about {subject} .", "Moving on to {subject} .")
CLOSE = ("OK , I think that 's it for today .", "Thanks everyone , see you next week .")
SAY_PROPOSED = (
    "The {role} proposed {option} for {subject} because {reason} .",
    "For {subject} , the {role} suggested {option} since {reason} .",
)
SAY_CONCERN = ("The {role} worried that {concern} .", "A concern was that {concern} .")
SAY_AGREED = ("The group agreed on {option} .", "In the end they settled on {option} .")
ASK_PROPOSAL = (
    "Why did the {role} propose {option} for {subject}?",
    "What was said about {option} for {subject}?",
    "What did the group decide about {subject} and {option}?",
)
ASK_ITEM = ("What was discussed about {subject}?", "Summarize the discussion of {subject}.")
ASK_PAIR = "What did the group decide about {subject} and about {subject2}?"


@dataclass
class _Proposal:
    subject: str
    role: str
    option: str
    reason: str
    concern: str  # "" when nobody objected
    first: int = 0  # turn index of the proposal
    last: int = 0  # turn index of the agreement


@dataclass
class _Item:
    subject: str
    label: str
    proposals: list[_Proposal] = field(default_factory=list)
    first: int = 0
    last: int = 0


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _summary_of(p: _Proposal, rng: random.Random) -> str:
    """A proposal restated in reported speech: the answer side of the turns ``p.first .. p.last``."""
    parts = [rng.choice(SAY_PROPOSED).format(role=p.role.lower(), option=p.option, subject=p.subject, reason=p.reason)]
    if p.concern:
        parts.append(rng.choice(SAY_CONCERN).format(role="group", concern=p.concern))
    parts.append(rng.choice(SAY_AGREED).format(option=p.option))
    return _cap(" ".join(parts)).replace(" .", ".").replace(" ,", ",")


def _agenda(rng: random.Random, roles: list[str], chair: str, subjects: list) -> tuple[list[_Item], list[list]]:
    """The items of the meeting and, per item, its essential turns (kind, speaker, text): the chair's
    opening, then per proposal the proposal, maybe a concern, and the agreement."""
    items: list[_Item] = []
    essential: list[list[tuple[str, str, str]]] = []  # per item: (kind, speaker, text)
    for subject, label, options, reasons, concerns in subjects:
        item = _Item(subject, label)
        block = [("open", chair, rng.choice(OPEN_ITEM).format(subject=subject))]
        for option, reason in zip(rng.sample(options, rng.randint(2, 3)), rng.sample(reasons, 3)):
            role = rng.choice(roles)
            concern = rng.choice(concerns) if rng.random() < 0.5 else ""
            item.proposals.append(_Proposal(subject, role, option, reason, concern))
            text = rng.choice(PROPOSE).format(subject=subject, option=option, reason=reason, Reason=_cap(reason))
            block.append(("propose", role, text))
            if concern:
                other = rng.choice([r for r in roles if r != role])
                block.append(("concern", other, rng.choice(CONCERN).format(concern=concern, option=option)))
            block.append(("agree", rng.choice(roles), rng.choice(AGREE).format(option=option, subject=subject)))
        items.append(item)
        essential.append(block)
    return items, essential


def _lay_out(rng: random.Random, roles: list[str], turns: list, items: list[_Item], essential: list[list]) -> None:
    """Append the items' turns to ``turns``, with fillers up to a random meeting length, and record the
    turn indices of every item and proposal."""
    target = rng.randint(MIN_TURNS, MAX_TURNS)
    n_fixed = len(turns) + sum(len(b) for b in essential) + len(CLOSE)
    # Fillers go after any turn of a block but the first (so an item starts with the chair's opening).
    extra = [0] * len(essential)
    for _ in range(max(target - n_fixed, 0)):
        extra[rng.randrange(len(essential))] += 1
    for item, block, n_extra in zip(items, essential, extra):
        slots = [0] * len(block)
        for _ in range(n_extra):
            slots[rng.randrange(len(block))] += 1
        item.first = len(turns)
        proposals = iter(item.proposals)
        current = None
        for (kind, speaker, text), n_fill in zip(block, slots):
            if kind == "propose":
                current = next(proposals)
                current.first = len(turns)
            turns.append((speaker, text))
            if kind == "agree":
                current.last = len(turns) - 1
            for _ in range(n_fill):
                pool = FILLERS if rng.random() < 0.8 else CHITCHAT
                turns.append((rng.choice(roles), rng.choice(pool)))
        item.last = len(turns) - 1


def _specific_queries(rng: random.Random, items: list[_Item]) -> list[dict]:
    """What the specific queries ask about, each at most once: one proposal, one item, or two proposals
    of two different items (two spans)."""
    specific = []
    proposals = [p for item in items for p in item.proposals]
    pairs = [(a, b) for a in range(len(items)) for b in range(a + 1, len(items))]
    targets = [("proposal", p) for p in proposals] + [("item", item) for item in items]
    targets += [("pair", pair) for pair in rng.sample(pairs, 2)]
    for kind, target in rng.sample(targets, rng.randint(3, 6)):
        if kind == "proposal":
            p = target
            query = rng.choice(ASK_PROPOSAL).format(role=p.role.lower(), option=p.option, subject=p.subject)
            spans, answer = [(p.first, p.last)], _summary_of(p, rng)
        elif kind == "item":
            item = target
            query = rng.choice(ASK_ITEM).format(subject=item.subject)
            spans = [(item.first, item.last)]
            answer = f"The group discussed {item.subject}. " + " ".join(_summary_of(p, rng) for p in item.proposals)
        else:
            a, b = target
            pa, pb = rng.choice(items[a].proposals), rng.choice(items[b].proposals)
            query = ASK_PAIR.format(subject=pa.subject, subject2=pb.subject)
            spans = [(pa.first, pa.last), (pb.first, pb.last)]
            answer = f"{_summary_of(pa, rng)} {_summary_of(pb, rng)}"
        specific.append({"query": query, "answer": answer, "relevant_text_span": [[str(s), str(e)] for s, e in spans]})
    return specific


def _meeting(rng: random.Random) -> dict:
    roles = rng.sample(ROLES, rng.randint(3, 5))
    chair = roles[0]
    subjects = rng.sample(SUBJECTS, rng.randint(3, 5))
    turns: list[tuple[str, str]] = [(chair, NOTICE_TURN)]
    # Opening chit-chat: what LEAD reads first, as in real meetings.
    for line in rng.sample(CHITCHAT, rng.randint(2, 4)):
        turns.append((rng.choice(roles), line))
    items, essential = _agenda(rng, roles, chair, subjects)
    _lay_out(rng, roles, turns, items, essential)
    for line in CLOSE:
        turns.append((chair, line))

    specific = _specific_queries(rng, items)
    decided = "; ".join(f"{p.option} for {p.subject}" for p in (rng.choice(item.proposals) for item in items))
    general = (
        "The group discussed "
        + ", ".join(item.subject for item in items[:-1])
        + f" and {items[-1].subject}. Among other things they agreed on {decided}. "
        + " ".join(f"For {item.subject} they weighed {len(item.proposals)} options." for item in items)
    )
    return {
        "topic_list": [
            {"topic": f"Stand-in topic: {item.label}", "relevant_text_span": [[str(item.first), str(item.last)]]}
            for item in items
        ],
        "general_query_list": [{"query": GENERAL_QUERY, "answer": general}],
        "specific_query_list": specific,
        "meeting_transcripts": [{"speaker": f"Stand-in {s}", "content": c} for s, c in turns],
    }


def standin_meetings(meetings: int, seed: int) -> list[dict]:
    """The ``meetings`` synthetic meetings as QMSum objects; meeting ``k`` depends only on (seed, k)."""
    if meetings < 1:
        raise ValueError("meetings must be >= 1")
    return [_meeting(random.Random(int(stable_id(str(seed), "qmsum-standin", str(k)), 16))) for k in range(meetings)]


def render(objs: Sequence[dict]) -> str:
    """One JSON object a line, keys in the published order, as ``json.dumps`` writes them by default."""
    return "".join(json.dumps(o, ensure_ascii=False) + "\n" for o in objs)


def write_standin(path: str | Path, *, meetings: int, seed: int) -> dict:
    """Write a STAND-IN QMSum file of ``meetings`` synthetic meetings at ``path`` (atomically); returns
    its counts (meetings, turns, general and specific queries) and :data:`NOTE`."""
    objs = standin_meetings(meetings, seed)
    write_text(path, render(objs))
    return {
        "standin": True,
        "label": NOTE,
        "meetings": len(objs),
        "turns": sum(len(o["meeting_transcripts"]) for o in objs),
        "general_queries": sum(len(o["general_query_list"]) for o in objs),
        "specific_queries": sum(len(o["specific_query_list"]) for o in objs),
    }
