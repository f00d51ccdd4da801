"""The WCEP article-summary classifier (Gholipour Ghalandari et al., ACL 2020, §3 and Table 2).

A logistic regression decides whether a news article belongs to a Current Events Portal event.
Four features per (article, summary) pair (Table 2, :data:`FEATURES`):

1. tf-idf cosine similarity between the article title and the summary,
2. tf-idf cosine similarity between the article body and the summary,
3. the number of the summary's entities found in the title,
4. the number of the summary's entities found in the body,

where the entities are the phrases of the summary that the editors linked to Wikipedia and are
searched by exact string matching. Training pairs: each event with each of its own source articles
(positive) and with the source articles of the *other events of the same date* (negative); the
paper's data gave 7 positives per 100 negatives. The paper reports 90% precision and 74% recall of
the positives on a held-out set. Application: every event is compared with the candidate articles
published within ±1 day of its date; articles with a probability >= 0.9 are added, and an article
that passes for several events goes only to the event with the highest probability.

Inputs are plain mappings (the stage feeds them from parquet):

* event: ``event_id``, ``date`` (``YYYY-MM-DD``), ``summary``, ``entities`` (list of str, may be
  missing = none), ``sources`` (list of ``{url, title, text}``);
* candidate: ``article_id``, ``url``, ``title``, ``text``, ``date`` (``YYYY-MM-DD``), e.g.
  :class:`wikiref.stages.wcep.ccnews.Article` rows.

Choices where the paper is silent:

* **tf-idf**: scikit-learn's ``TfidfVectorizer`` with its defaults (:data:`VECTORIZER_SETTINGS`):
  lower-cased, unigrams of the token pattern ``\\b\\w\\w+\\b`` (one-character tokens ignored), no
  stop-word list (idf already weighs frequent words down), no stemming, raw term counts,
  smoothed idf ``ln((1 + n) / (1 + df)) + 1``, L2-normalised rows, so a cosine is a dot product
  (0 when either side has no known word). The vocabulary and idf are fitted on the training events
  only: one document per summary and one per distinct source article (title and body joined by a
  newline; sources deduplicated by normalised URL). Candidate words outside that vocabulary are
  ignored.
* **Entities**: exact, case-sensitive matching of the whole phrase at word boundaries (not
  preceded or followed by a letter/digit/underscore: "Paris" is not found in "Parisian", "New York"
  is found in "New York City"). A feature counts the *distinct* entities found (each at most
  once), not their occurrences; empty entity strings are ignored.
* **Negatives**: a source of another same-date event whose normalised URL is also one of the
  event's own sources is not a negative (counted ``negatives_shared_source``). When the available
  negatives exceed ``negative_ratio`` per positive (default 100/7, the paper's 7:100) they are
  subsampled without replacement with a seeded generator to ``round(positives * negative_ratio)``;
  when fewer exist all are kept and the real ratio is reported.
* **Logistic regression**: scikit-learn ``LogisticRegression`` (L2, ``C=1``, lbfgs), no class
  weights (the 0.9 threshold is applied to probabilities of the natural 7:100 mix), raw feature
  values (cosines in [0, 1], entity counts). The probabilities are computed here from the
  coefficients (``expit(X @ w + b)``, as scikit-learn does) so a model read back from JSON gives
  exactly the same numbers; :meth:`Classifier.predict_proba` returns the positive-class
  probability as a 1-D array (scikit-learn's ``predict_proba(X)[:, 1]``). The model is stored as
  JSON only (coefficients, intercept, vocabulary in column order, idf, vectoriser settings).
* **Held-out evaluation**: events are split by a seeded hash of their id
  (``heldout_fraction``); the evaluation model is trained (vectoriser and regression) on the other
  events only; negatives of both parts are drawn from all events of the same date, so the held-out
  pairs keep the training mix (held-out negatives subsampled with ``seed + 1``). The returned model
  is refitted on all events.
* **Application**: the window is ``|candidate date - event date| <= window_days`` (calendar days);
  a candidate passes with ``p >= threshold``; ties between events are broken by the smallest
  ``event_id`` (string order). Candidates whose normalised URL is already a source of any event are
  excluded. Rows come back sorted by ``(event_id, article_id)``.

Bad inputs: an event with an unparsable date, an empty summary, a missing key or a duplicate id
raises :class:`ValueError`. An event without (non-empty) sources gives no training pair and is
counted (``events_without_sources``; a source with neither title nor text: ``sources_empty``);
it is still scored in :func:`assign`. Candidates with an unparsable date, no title and no text, an
already-cited URL or a repeated ``article_id`` are counted drops of the ``tally``.

Scale (10,200 events, ~2.4M candidates): :func:`score_candidates` groups candidates and events by
day, vectorises each candidate once (sparse), takes the cosines of a day's candidates against all
events of its window as one sparse product, counts entities through a (candidate x entity)
presence matrix times an (entity x event) incidence matrix, and predicts all pairs of a day in one
call. :func:`features` is the straightforward per-pair path (the tests check both agree).
"""

from __future__ import annotations

import json
import logging
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

import numpy as np
import scipy.sparse as sp
from scipy.special import expit
from sklearn.feature_extraction.text import TfidfVectorizer

from wikiref.examples import Tally
from wikiref.files import stable_id
from wikiref.web.warc import normalise_url

log = logging.getLogger(__name__)

FEATURES = ("title_cosine", "body_cosine", "title_entities", "body_entities")
FORMAT = "wikiref-wcep-classifier/1"
PAPER_NEGATIVE_RATIO = 100 / 7  # negatives per positive: the paper's 7:100
PAPER = {"precision": 0.90, "recall": 0.74, "positive_negative_ratio": "7:100", "window_days": 1, "threshold": 0.9}
VECTORIZER_SETTINGS: dict = {
    "lowercase": True,
    "ngram_range": (1, 1),
    "token_pattern": r"(?u)\b\w\w+\b",
    "stop_words": None,
    "strip_accents": None,
    "norm": "l2",
    "use_idf": True,
    "smooth_idf": True,
    "sublinear_tf": False,
}
_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# ------------------------------------------------------------------------------------------ inputs


def parse_day(value, what: str) -> int:
    """The proleptic ordinal of a ``YYYY-MM-DD`` date; :class:`ValueError` naming ``what`` otherwise."""
    text = str(value or "").strip()
    if _DAY.match(text):
        try:
            return date.fromisoformat(text).toordinal()
        except ValueError:
            pass
    raise ValueError(f"{what}: date {value!r} is not a YYYY-MM-DD date")


@dataclass(frozen=True)
class _Source:
    key: str  # normalised URL
    title: str
    text: str


@dataclass(frozen=True)
class _Event:
    event_id: str
    day: int
    summary: str
    entities: tuple[str, ...]
    sources: tuple[_Source, ...]  # non-empty, distinct URLs
    source_keys: frozenset[str]  # every cited URL, empty ones included


def clean_entities(entities) -> tuple[str, ...]:
    """Distinct non-empty entity strings (stripped), in first-seen order."""
    out: dict[str, None] = {}
    for e in () if entities is None else entities:  # a list, or a numpy array from parquet
        e = str(e).strip()
        if e:
            out.setdefault(e, None)
    return tuple(out)


def _prepare(events: Sequence[Mapping]) -> tuple[list[_Event], dict]:
    """Validated events (input order) and counters (``events_without_sources``, ``sources_empty``)."""
    out: list[_Event] = []
    seen: set[str] = set()
    counts = {"events": 0, "events_without_sources": 0, "sources_empty": 0}
    for i, ev in enumerate(events):
        missing = [k for k in ("event_id", "date", "summary") if k not in ev]
        if missing:
            raise ValueError(f"event #{i}: missing {', '.join(missing)}")
        eid = str(ev["event_id"])
        if eid in seen:
            raise ValueError(f"event {eid!r}: duplicate event_id")
        seen.add(eid)
        day = parse_day(ev["date"], f"event {eid!r}")
        summary = str(ev["summary"] or "").strip()
        if not summary:
            raise ValueError(f"event {eid!r}: empty summary")
        sources: dict[str, _Source] = {}
        keys = set()
        raw = ev.get("sources")
        for src in () if raw is None else raw:
            key = normalise_url(str(src.get("url") or ""))
            title, text = str(src.get("title") or "").strip(), str(src.get("text") or "").strip()
            if key:
                keys.add(key)
            if not title and not text:
                counts["sources_empty"] += 1
                continue
            sources.setdefault(key or f"#{eid}/{len(sources)}", _Source(key, title, text))
        if not sources:
            counts["events_without_sources"] += 1
        out.append(
            _Event(eid, day, summary, clean_entities(ev.get("entities")), tuple(sources.values()), frozenset(keys))
        )
    counts["events"] = len(out)
    return out, counts


# ---------------------------------------------------------------------------------------- features


@lru_cache(maxsize=65536)
def _entity_pattern(entity: str) -> re.Pattern:
    return re.compile(r"(?<!\w)" + re.escape(entity) + r"(?!\w)")


def has_entity(entity: str, text: str) -> bool:
    """Exact, case-sensitive occurrence of ``entity`` in ``text`` at word boundaries."""
    return entity in text and _entity_pattern(entity).search(text) is not None


def count_entities(entities: Sequence[str], text: str) -> int:
    """How many of the distinct ``entities`` occur in ``text`` (:func:`has_entity`)."""
    return sum(1 for e in clean_entities(entities) if has_entity(e, text))


def _corpus(evs: Sequence[_Event]) -> list[str]:
    docs: list[str] = []
    seen: set[str] = set()
    for ev in evs:
        docs.append(ev.summary)
        for s in ev.sources:
            if s.key and s.key in seen:
                continue
            seen.add(s.key)
            docs.append(f"{s.title}\n{s.text}")
    return docs


def _fit(evs: Sequence[_Event]) -> TfidfVectorizer:
    vec = TfidfVectorizer(**VECTORIZER_SETTINGS, dtype=np.float64)
    try:
        vec.fit(_corpus(evs))
    except ValueError as err:  # scikit-learn: "empty vocabulary"
        raise ValueError(f"cannot fit the tf-idf vocabulary on these events: {err}") from err
    return vec


def fit_vectorizer(events: Sequence[Mapping]) -> TfidfVectorizer:
    """Unigram tf-idf (:data:`VECTORIZER_SETTINGS`, lower-cased) fitted on the events' summaries and
    their distinct source articles (one document per summary, one per source: title + newline +
    body; sources deduplicated by normalised URL)."""
    return _fit(_prepare(events)[0])


def _cosine(a, b) -> float:
    return float(a.multiply(b).sum())


def features(summary: str, entities: Sequence[str], title: str, body: str, vectorizer) -> tuple[float, float, int, int]:
    """The four Table 2 features of one (article, summary) pair: title-summary cosine, body-summary
    cosine, number of distinct summary entities in the title, in the body."""
    m = vectorizer.transform([summary or "", title or "", body or ""]).tocsr()
    ents = clean_entities(entities)
    return (
        _cosine(m[0], m[1]),
        _cosine(m[0], m[2]),
        count_entities(ents, title or ""),
        count_entities(ents, body or ""),
    )


def _rowwise_dot(a: sp.csr_matrix, b: sp.csr_matrix) -> np.ndarray:
    return np.asarray(a.multiply(b).sum(axis=1), dtype=np.float64).ravel()


# -------------------------------------------------------------------------------------- classifier


@dataclass(frozen=True)
class Classifier:
    """The fitted logistic regression (coefficients over :data:`FEATURES`) and its tf-idf vectoriser."""

    coef: tuple[float, float, float, float]
    intercept: float
    vectorizer: TfidfVectorizer
    meta: dict = field(default_factory=dict, compare=False)

    def decision_function(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64).reshape(-1, len(FEATURES))
        return X @ np.asarray(self.coef, dtype=np.float64) + float(self.intercept)

    def predict_proba(self, X) -> np.ndarray:
        """P(article belongs to the event) for each feature row of ``X`` (shape (n, 4)): a 1-D array
        of the positive-class probability (scikit-learn's ``predict_proba(X)[:, 1]``)."""
        return expit(self.decision_function(X))

    def features(self, summary: str, entities: Sequence[str], title: str, body: str) -> tuple[float, float, int, int]:
        return features(summary, entities, title, body, self.vectorizer)

    def to_json(self) -> dict:
        """A JSON-serialisable dict: coefficients, intercept and the vectoriser's vocabulary (terms in
        column order), idf and settings. Floats survive ``json`` exactly (shortest repr)."""
        vec = self.vectorizer
        vocab = vec.vocabulary_
        terms = [""] * len(vocab)
        for term, j in vocab.items():
            terms[j] = term
        settings = {k: vec.get_params()[k] for k in VECTORIZER_SETTINGS}
        settings["ngram_range"] = list(settings["ngram_range"])
        return {
            "format": FORMAT,
            "features": list(FEATURES),
            "coef": [float(c) for c in self.coef],
            "intercept": float(self.intercept),
            "vectorizer": {
                "settings": settings,
                "vocabulary": terms,
                "idf": [float(x) for x in vec.idf_],
            },
            "meta": dict(self.meta),
        }

    @classmethod
    def from_json(cls, data: Mapping | str) -> Classifier:
        if isinstance(data, str):
            data = json.loads(data)
        if data.get("format") != FORMAT:
            raise ValueError(f"not a WCEP classifier ({data.get('format')!r}, expected {FORMAT!r})")
        if list(data.get("features", [])) != list(FEATURES):
            raise ValueError(f"classifier features {data.get('features')} are not {list(FEATURES)}")
        v = data["vectorizer"]
        settings = dict(v["settings"])
        settings["ngram_range"] = tuple(settings["ngram_range"])
        terms = list(v["vocabulary"])
        idf = np.asarray(v["idf"], dtype=np.float64)
        if len(terms) != len(idf):
            raise ValueError("classifier JSON: vocabulary and idf differ in length")
        vec = TfidfVectorizer(vocabulary=terms, dtype=np.float64, **settings)
        vec.idf_ = idf
        coef = tuple(float(c) for c in data["coef"])
        return cls(coef=coef, intercept=float(data["intercept"]), vectorizer=vec, meta=dict(data.get("meta") or {}))


def _fit_regression(X: np.ndarray, y: np.ndarray, vec: TfidfVectorizer, C: float) -> Classifier:
    from sklearn.linear_model import LogisticRegression

    if len(set(y.tolist())) < 2:
        raise ValueError(
            f"training needs positive and negative pairs (got {int(y.sum())} positive, {int((1 - y).sum())} negative);"
            " negatives come from other events of the same date"
        )
    lr = LogisticRegression(C=C, max_iter=1000)
    lr.fit(X, y)
    return Classifier(coef=tuple(float(c) for c in lr.coef_[0]), intercept=float(lr.intercept_[0]), vectorizer=vec)


# -------------------------------------------------------------------------------------------- training


def _pairs(
    evs: Sequence[_Event],
    vec: TfidfVectorizer,
    *,
    negative_ratio: float,
    seed: int,
    only: set[int] | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Feature rows and labels of the pairs of the events ``only`` (indices; all when None)."""
    srcs, own = _distinct_sources(evs)
    by_day: dict[int, list[int]] = defaultdict(list)
    for i, ev in enumerate(evs):
        by_day[ev.day].append(i)

    chosen = range(len(evs)) if only is None else sorted(only)
    pos: list[tuple[int, int]] = []
    neg: list[tuple[int, int]] = []
    shared = 0
    used = 0
    for i in chosen:
        if not own[i]:
            continue
        used += 1
        mine = set(own[i])
        keys = evs[i].source_keys
        pos.extend((i, s) for s in own[i])
        seen: set[int] = set()
        for j in by_day[evs[i].day]:
            if j == i:
                continue
            for s in own[j]:
                if s in seen:
                    continue
                if s in mine or (srcs[s].key and srcs[s].key in keys):
                    shared += 1  # also cited by this event: not a negative
                    seen.add(s)
                    continue
                seen.add(s)
                neg.append((i, s))
    available = len(neg)
    limit = int(round(len(pos) * negative_ratio))
    subsampled = available > limit
    if subsampled:
        rng = np.random.default_rng(seed)
        keep = np.sort(rng.choice(available, size=limit, replace=False))
        neg = [neg[k] for k in keep]
    y = np.concatenate([np.ones(len(pos)), np.zeros(len(neg))]).astype(np.int64)
    X = _pair_features(evs, srcs, pos + neg, vec)
    info = {
        "events": len(chosen),
        "events_with_sources": used,
        "positives": len(pos),
        "negatives_available": available,
        "negatives": len(neg),
        "negatives_shared_source": shared,
        "subsampled": subsampled,
        "negative_ratio_target": float(negative_ratio),
        "negatives_per_positive": (len(neg) / len(pos)) if pos else None,
        "ratio": _ratio(len(pos), len(neg)),
        "seed": int(seed),
    }
    return X, y, info


def _distinct_sources(evs: Sequence[_Event]) -> tuple[list[_Source], list[list[int]]]:
    """(distinct sources over all events, each event's source indices): the first copy of a URL speaks
    for it; a source without a URL key is its event's own."""
    src_index: dict[str, int] = {}
    srcs: list[_Source] = []
    own: list[list[int]] = []
    for ev in evs:
        ids = []
        for s in ev.sources:
            key = s.key or f"#{ev.event_id}/{len(ids)}"
            if key not in src_index:
                src_index[key] = len(srcs)
                srcs.append(s)
            ids.append(src_index[key])
        own.append(ids)
    return srcs, own


def _pair_features(
    evs: Sequence[_Event], srcs: Sequence[_Source], pairs: list[tuple[int, int]], vec: TfidfVectorizer
) -> np.ndarray:
    """The :data:`FEATURES` of (event index, source index) pairs, one row per pair."""
    X = np.zeros((len(pairs), len(FEATURES)), dtype=np.float64)
    if pairs:
        e_idx = np.array([p[0] for p in pairs])
        s_idx = np.array([p[1] for p in pairs])
        S = vec.transform([ev.summary for ev in evs]).tocsr()
        T = vec.transform([s.title for s in srcs]).tocsr()
        B = vec.transform([s.text for s in srcs]).tocsr()
        X[:, 0] = _rowwise_dot(S[e_idx], T[s_idx])
        X[:, 1] = _rowwise_dot(S[e_idx], B[s_idx])
        for r, (i, s) in enumerate(pairs):
            ents = evs[i].entities
            if ents:
                X[r, 2] = sum(1 for e in ents if has_entity(e, srcs[s].title))
                X[r, 3] = sum(1 for e in ents if has_entity(e, srcs[s].text))
    return X


def _ratio(pos: int, neg: int) -> str:
    """``"<positives per 100 negatives>:100"``, as the paper writes 7:100."""
    return f"{100 * pos / neg:.1f}:100" if neg else f"{pos}:0"


def training_pairs(
    events: Sequence[Mapping],
    *,
    negative_ratio: float = PAPER_NEGATIVE_RATIO,
    seed: int = 0,
    vectorizer: TfidfVectorizer | None = None,
) -> tuple[np.ndarray, np.ndarray, dict]:
    """Feature rows ``X`` (n, 4), labels ``y`` (1 = the event's own source) and counters of all
    training pairs. ``negative_ratio`` = negatives kept per positive at most; ``vectorizer``
    defaults to :func:`fit_vectorizer` on the same events. Positives come first, then negatives."""
    evs, counts = _prepare(events)
    vec = vectorizer if vectorizer is not None else _fit(evs)
    X, y, info = _pairs(evs, vec, negative_ratio=negative_ratio, seed=seed)
    return X, y, {**counts, **info}


def precision_recall(y_true, probability, threshold: float) -> dict:
    """Precision and recall of the positives when ``probability >= threshold`` predicts positive
    (``None`` where undefined: nothing predicted / no positive)."""
    y = np.asarray(y_true).astype(bool)
    pred = np.asarray(probability, dtype=np.float64) >= threshold
    tp = int((pred & y).sum())
    fp = int((pred & ~y).sum())
    fn = int((~pred & y).sum())
    return {
        "threshold": float(threshold),
        "precision": tp / (tp + fp) if tp + fp else None,
        "recall": tp / (tp + fn) if tp + fn else None,
        "tp": tp,
        "fp": fp,
        "fn": fn,
    }


def is_heldout(event_id: str, seed: int, fraction: float) -> bool:
    """Seeded hash split: the event is held out when its hash falls below ``fraction``."""
    return int(stable_id(str(seed), "heldout", str(event_id)), 16) / 16**16 < fraction


def train(
    events: Sequence[Mapping],
    *,
    negative_ratio: float = PAPER_NEGATIVE_RATIO,
    heldout_fraction: float = 0.2,
    seed: int = 0,
    threshold: float = 0.9,
    C: float = 1.0,
) -> tuple[Classifier, dict]:
    """Held-out evaluation, then the model refitted on all events; returns ``(model, report)``.

    ``report``: ``events``/``events_without_sources``/``sources_empty``, ``pairs`` (counters of the
    final model's pairs), ``ratio`` (positives:100 negatives), ``heldout_events``,
    ``train_events``, ``heldout`` (its pairs, ``at_0.5`` and ``at_threshold``: precision, recall,
    tp/fp/fn; ``None`` when no event is held out), the coefficients and ``paper`` (the published
    values)."""
    if not 0 <= heldout_fraction < 1:
        raise ValueError(f"heldout_fraction {heldout_fraction} is not in [0, 1)")
    evs, counts = _prepare(events)
    held = {i for i, ev in enumerate(evs) if is_heldout(ev.event_id, seed, heldout_fraction)}
    rest = set(range(len(evs))) - held
    heldout = None
    if held and rest:
        vec = _fit([evs[i] for i in sorted(rest)])
        Xt, yt, info_t = _pairs(evs, vec, negative_ratio=negative_ratio, seed=seed, only=rest)
        model_t = _fit_regression(Xt, yt, vec, C)
        Xh, yh, info_h = _pairs(evs, vec, negative_ratio=negative_ratio, seed=seed + 1, only=held)
        p = model_t.predict_proba(Xh)
        heldout = {
            "train_pairs": info_t,
            "pairs": info_h,
            "at_0.5": precision_recall(yh, p, 0.5),
            "at_threshold": precision_recall(yh, p, threshold),
            "coefficients": dict(zip(FEATURES, model_t.coef, strict=True)),
            "intercept": model_t.intercept,
        }
        log.info(
            "held-out (%d events, %d pairs): P=%s R=%s at 0.5, P=%s R=%s at %s",
            len(held),
            len(yh),
            heldout["at_0.5"]["precision"],
            heldout["at_0.5"]["recall"],
            heldout["at_threshold"]["precision"],
            heldout["at_threshold"]["recall"],
            threshold,
        )
    vec = _fit(evs)
    X, y, info = _pairs(evs, vec, negative_ratio=negative_ratio, seed=seed)
    model = _fit_regression(X, y, vec, C)
    settings = {
        "negative_ratio": float(negative_ratio),
        "heldout_fraction": float(heldout_fraction),
        "seed": int(seed),
        "threshold": float(threshold),
        "C": float(C),
    }
    report = {
        **counts,
        "pairs": info,
        "ratio": info["ratio"],
        "heldout_events": len(held) if heldout else 0,
        "train_events": len(rest) if heldout else len(evs),
        "heldout": heldout,
        "coefficients": dict(zip(FEATURES, model.coef, strict=True)),
        "intercept": model.intercept,
        "settings": settings,
        "paper": dict(PAPER),
    }
    model = Classifier(model.coef, model.intercept, model.vectorizer, meta={"settings": settings})
    return model, report


# ----------------------------------------------------------------------------------------- application


@dataclass(frozen=True)
class ScoredDay:
    """All (candidate, event) pairs of one candidate day: candidates published on ``day`` against
    the events within the window, events in ``event_id`` order."""

    day: str
    candidates: np.ndarray  # indices into the candidate sequence
    events: np.ndarray  # indices into the event sequence, sorted by event_id
    article_ids: list[str]
    event_ids: list[str]
    X: np.ndarray  # (n candidates, n events, 4)
    probability: np.ndarray  # (n candidates, n events)


def _presence(texts: Sequence[str], entities: Sequence[str]) -> sp.csr_matrix:
    rows, cols = [], []
    for j, e in enumerate(entities):
        for r, t in enumerate(texts):
            if has_entity(e, t):
                rows.append(r)
                cols.append(j)
    data = np.ones(len(rows), dtype=np.float64)
    return sp.csr_matrix((data, (rows, cols)), shape=(len(texts), len(entities)))


def _candidate_days(candidates: Sequence[Mapping], cited: set[str], tally) -> dict[int, list[int]]:
    """Candidate indices by day (ordinal), without the unusable ones (counted drops: bad date, no text,
    already an event's source, duplicate article id)."""
    by_day: dict[int, list[int]] = defaultdict(list)
    seen: set[str] = set()
    for i, c in enumerate(candidates):
        aid = str(c.get("article_id") or "")
        tally.counts["candidates"] += 1
        try:
            day = parse_day(c.get("date"), f"candidate {aid!r}")
        except ValueError:
            tally.drop("candidate_bad_date", aid)
            continue
        if not str(c.get("title") or "").strip() and not str(c.get("text") or "").strip():
            tally.drop("candidate_empty", aid)
            continue
        if normalise_url(str(c.get("url") or "")) in cited:
            tally.drop("already_source", aid)
            continue
        if aid in seen:
            tally.drop("candidate_duplicate", aid)
            continue
        seen.add(aid)
        by_day[day].append(i)
    return by_day


def _day_features(model: Classifier, rows: Sequence[Mapping], window: Sequence[_Event], Sw) -> np.ndarray:
    """The :data:`FEATURES` of every (candidate, window event) pair of one day, shape (candidates, events,
    features); ``Sw``: the window events' summary vectors."""
    titles = [str(c.get("title") or "") for c in rows]
    bodies = [str(c.get("text") or "") for c in rows]
    X = np.zeros((len(rows), len(window), len(FEATURES)), dtype=np.float64)
    X[:, :, 0] = (model.vectorizer.transform(titles) @ Sw.T).toarray()
    X[:, :, 1] = (model.vectorizer.transform(bodies) @ Sw.T).toarray()
    ents = sorted({e for ev in window for e in ev.entities})
    if ents:
        col = {e: j for j, e in enumerate(ents)}
        inc_r = [col[e] for ev in window for e in ev.entities]
        inc_c = [k for k, ev in enumerate(window) for _ in ev.entities]
        M = sp.csr_matrix((np.ones(len(inc_r)), (inc_r, inc_c)), shape=(len(ents), len(window)))
        X[:, :, 2] = (_presence(titles, ents) @ M).toarray()
        X[:, :, 3] = (_presence(bodies, ents) @ M).toarray()
    return X


def score_candidates(
    model: Classifier,
    events: Sequence[Mapping],
    candidates: Sequence[Mapping],
    *,
    window_days: int = 1,
    tally=None,
    progress_every: int = 50,
) -> Iterator[ScoredDay]:
    """The scored pairs, one :class:`ScoredDay` per candidate day (in date order).

    ``candidates`` is read twice (dates first, texts day by day), so a lazy sequence keeps memory at
    one day of texts. Candidate drops and counters go to ``tally`` (see :func:`assign`)."""
    tally = tally if tally is not None else Tally()
    evs, _ = _prepare(events)
    cited = set().union(*(ev.source_keys for ev in evs)) if evs else set()
    ev_by_day: dict[int, list[int]] = defaultdict(list)
    for i in sorted(range(len(evs)), key=lambda k: evs[k].event_id):
        ev_by_day[evs[i].day].append(i)
    S = model.vectorizer.transform([ev.summary for ev in evs]).tocsr() if evs else None
    by_day = _candidate_days(candidates, cited, tally)

    w = int(window_days)
    for n_day, day in enumerate(sorted(by_day)):
        idx = by_day[day]
        window = sorted(
            (i for d in range(day - w, day + w + 1) for i in ev_by_day.get(d, ())),
            key=lambda k: evs[k].event_id,
        )
        if not window:
            tally.counts["candidates:outside_window"] += len(idx)
            continue
        rows = [candidates[i] for i in idx]
        X = _day_features(model, rows, [evs[i] for i in window], S[window])
        p = model.predict_proba(X.reshape(-1, len(FEATURES))).reshape(len(idx), len(window))
        tally.counts["pairs_scored"] += p.size
        if progress_every and (n_day + 1) % progress_every == 0:
            log.info("scored %d of %d candidate days (%s)", n_day + 1, len(by_day), date.fromordinal(day))
        yield ScoredDay(
            day=date.fromordinal(day).isoformat(),
            candidates=np.asarray(idx),
            events=np.asarray(window),
            article_ids=[str(c.get("article_id") or "") for c in rows],
            event_ids=[evs[i].event_id for i in window],
            X=X,
            probability=p,
        )


def assign(
    model: Classifier,
    events: Sequence[Mapping],
    candidates: Sequence[Mapping],
    *,
    window_days: int = 1,
    threshold: float = 0.9,
    tally=None,
) -> list[dict]:
    """Rows ``{article_id, event_id, probability}``, each article at most once (its
    highest-probability event among those with ``p >= threshold``; ties: smallest ``event_id``),
    sorted by ``(event_id, article_id)``.

    ``tally`` (:class:`wikiref.examples.Tally`, optional) counts ``candidates``, drops
    ``candidate_bad_date``, ``candidate_empty``, ``already_source`` (URL cited by an event),
    ``candidate_duplicate`` (repeated article_id, first kept), and counts
    ``candidates:outside_window`` (no event within the window), ``pairs_scored``,
    ``pairs_passing``, ``articles_multi_event`` (passing for several events) and ``assigned``."""
    tally = tally if tally is not None else Tally()
    out: list[dict] = []
    for scored in score_candidates(model, events, candidates, window_days=window_days, tally=tally):
        passing = scored.probability >= threshold
        n_pass = passing.sum(axis=1)
        tally.counts["pairs_passing"] += int(n_pass.sum())
        tally.counts["articles_multi_event"] += int((n_pass > 1).sum())
        best = np.argmax(scored.probability, axis=1)  # first maximum = smallest event_id
        for r in np.flatnonzero(n_pass):
            j = int(best[r])
            out.append(
                {
                    "article_id": scored.article_ids[r],
                    "event_id": scored.event_ids[j],
                    "probability": float(scored.probability[r, j]),
                }
            )
    tally.counts["assigned"] += len(out)
    out.sort(key=lambda row: (row["event_id"], row["article_id"]))
    return out


__all__ = [
    "FEATURES",
    "PAPER",
    "PAPER_NEGATIVE_RATIO",
    "VECTORIZER_SETTINGS",
    "Classifier",
    "ScoredDay",
    "assign",
    "clean_entities",
    "count_entities",
    "features",
    "fit_vectorizer",
    "has_entity",
    "is_heldout",
    "parse_day",
    "precision_recall",
    "score_candidates",
    "train",
    "training_pairs",
]
