"""WCEP §5 evaluation protocol, oracles and extractive baselines (and A.2's selection framework)."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rouge_score import rouge_scorer

from wikiref.extractive import textrank
from wikiref.stages.wcep import baselines as bl
from wikiref.stages.wcep import evaluation as ev

SCORER = rouge_scorer.RougeScorer(["rouge1", "rouge2", "rougeL"], use_stemmer=True)


# -- evaluation protocol ----------------------------------------------------------------------------


def test_tokens_are_nltk_treebank_tokens_with_punctuation():
    assert ev.tokenize('The U.S. said, "no."') == ["The", "U.S.", "said", ",", "``", "no", ".", "''"]
    assert ev.n_tokens('The U.S. said, "no."') == 8
    assert ev.n_tokens("Don't stop.") == 4  # Do n't stop .
    assert ev.n_tokens("") == 0


def test_truncate_string_and_sentences():
    assert ev.truncate("One two three four five.", 3) == "One two three"
    assert ev.truncate("One two three.", 4) == "One two three."  # 4 tokens: unchanged
    assert ev.truncate(["a b c", "d e f", "g h"], 4) == ["a b c", "d"]
    assert ev.truncate(["a b c", "d e f"], 6) == ["a b c", "d e f"]
    assert ev.truncate(["a b c", "d e f"], 3) == ["a b c"]
    # the end of a truncated text is cut in the original characters, not re-joined tokens
    assert ev.truncate("He didn't go home today.", 4) == "He didn't go"


text_chars = st.sampled_from(list("ab .,'\"()-\n") + ["U.S.", "don't", "``", "''", "...", "Mr.", "3.5%"])


@settings(max_examples=300, deadline=None)
@given(st.lists(text_chars, max_size=60).map("".join), st.integers(0, 12))
def test_truncate_is_a_prefix_within_the_limit(text, k):
    cut = ev.truncate(text, k)
    assert text.startswith(cut)
    assert ev.n_tokens(cut) <= k
    if ev.n_tokens(text) <= k:
        assert cut == text


def test_score_summary_f1_on_full_recall_on_truncated():
    # reference "cats eat fish" (3 stemmed tokens); summary of 7 tokens, the match in its last 3
    scores = ev.score_summary(["dogs bark loudly today", "cats eat fish"], ["cats eat fish"], max_tokens=4)
    assert scores["rouge1_f1"] == pytest.approx(0.6)  # P = 3/7, R = 1
    assert scores["rouge2_f1"] == pytest.approx(0.5)  # P = 2/6, R = 1
    assert scores["rougeL_f1"] == pytest.approx(0.6)
    assert scores["rouge1_recall"] == scores["rouge2_recall"] == scores["rougeL_recall"] == 0.0  # first 4 tokens
    untruncated = ev.score_summary(["dogs bark loudly today", "cats eat fish"], ["cats eat fish"], max_tokens=None)
    assert untruncated["rouge1_recall"] == 1.0
    assert ev.score_summary([], ["cats eat fish"])["rouge1_f1"] == 0.0


def test_evaluate_means_ci_and_equality_with_rouge_score():
    summaries = {
        "c1": ["The Storm hit Florida on Monday.", "Three people died."],
        "c2": ["Parliament passed the budget."],
        "c3": ["An earthquake struck Chile.", "Nothing else happened in the region that week at all, officials said."],
    }
    references = {
        "c1": ["A storm hit Florida, killing three people."],
        "c2": ["The parliament of Norway approved the national budget."],
        "c3": ["A magnitude 7 earthquake struck northern Chile.", "No casualties were reported."],
        "unused": ["x"],
    }
    out = ev.evaluate(summaries, references, n_boot=500, seed=3)
    assert out["n_clusters"] == 3 and out["rouge_l"] == "rougeL"
    assert set(out["means"]) == set(ev.METRICS)
    for cid, sents in summaries.items():
        ref = " ".join(references[cid]).lower()
        full = " ".join(sents).lower()
        expected = SCORER.score(ref, full)
        cut = SCORER.score(ref, " ".join(ev.truncate(sents, 40)).lower())
        for t in ("rouge1", "rouge2", "rougeL"):
            assert out["per_cluster"][cid][f"{t}_f1"] == expected[t].fmeasure
            assert out["per_cluster"][cid][f"{t}_recall"] == cut[t].recall
    for metric in ev.METRICS:
        values = [out["per_cluster"][c][metric] for c in summaries]
        assert out["means"][metric] == pytest.approx(np.mean(values))
        lo, hi = out["ci95"][metric]
        assert min(values) <= lo <= out["means"][metric] <= hi <= max(values)
        assert 0.0 <= out["means"][metric] <= 1.0  # fractions, not percentages
    assert ev.evaluate(summaries, references, n_boot=500, seed=3)["ci95"] == out["ci95"]
    # c1's reference has 7 ROUGE tokens (a storm hit florida kill three peopl); the summary matches 5
    # of them, its first 4 tokens "The Storm hit Florida" only 3
    short = ev.evaluate(summaries, references, max_tokens=4, n_boot=10)
    assert out["per_cluster"]["c1"]["rouge1_recall"] == pytest.approx(5 / 7)
    assert short["per_cluster"]["c1"]["rouge1_recall"] == pytest.approx(3 / 7)
    assert short["per_cluster"]["c1"]["rouge1_f1"] == out["per_cluster"]["c1"]["rouge1_f1"]
    with pytest.raises(KeyError):
        ev.evaluate({"nope": ["a"]}, references)


def test_bootstrap_ci_is_seeded():
    values = np.linspace(0, 1, 50)
    a = ev.bootstrap_ci(values, n_boot=200, seed=1)
    assert a == ev.bootstrap_ci(values, n_boot=200, seed=1)
    assert a != ev.bootstrap_ci(values, n_boot=200, seed=2)
    assert a[0] < 0.5 < a[1]
    assert ev.bootstrap_ci([0.25, 0.25, 0.25]) == (0.25, 0.25)


# -- ranked-list selection (A.2) --------------------------------------------------------------------

S0 = "alpha beta gamma delta epsilon zeta eta ."  # 8 tokens, 7 bigrams
S1 = "alpha beta gamma delta theta iota kappa ."  # shares 3 of its 7 bigrams with S0
S2 = "too short ."  # 3 tokens
S3 = "lambda mu nu xi omicron pi rho sigma tau ."  # 10 tokens
S4 = "upsilon phi chi psi omega one two three four five six seven eight nine ten eleven twelve ."  # 18


def test_select_ranked_hand_checked():
    sents = [S0, S1, S2, S3, S4]
    scores = [0.9, 0.8, 0.95, 0.5, 0.7]
    # order: S2 (too short), S0 (8), S1 (3/7 = 0.43 <= 0.5: kept, 16), S4 (18: 34), S3 (10: 44 > 40)
    assert bl.select_ranked(sents, scores, max_tokens=40, min_sentence_tokens=7, redundancy=0.5) == [0, 1, 4]
    # redundancy 0.4 < 3/7: S1 skipped; S4 then S3 fit (8 + 18 + 10 = 36)
    assert bl.select_ranked(sents, scores, max_tokens=40, min_sentence_tokens=7, redundancy=0.4) == [0, 4, 3]
    # a proportion equal to the threshold does not exceed it
    assert bl.select_ranked(sents, scores, max_tokens=40, min_sentence_tokens=7, redundancy=3 / 7) == [0, 1, 4]
    # no minimum length: S2 comes first
    assert bl.select_ranked(sents, scores, max_tokens=40, min_sentence_tokens=0, redundancy=0.5) == [2, 0, 1, 4]
    # ties go to the earlier sentence; duplicates are fully redundant below threshold 1.0
    assert bl.select_ranked([S0, S0, S3], [1.0, 1.0, 0.0], redundancy=0.99) == [0, 2]
    assert bl.select_ranked([S0, S0, S3], [1.0, 1.0, 0.0], redundancy=1.0) == [0, 1, 2]
    assert bl.redundancy_of(S1, [S3, S0]) == pytest.approx(3 / 7)
    with pytest.raises(ValueError):
        bl.select_ranked([S0], [1.0, 2.0])


# -- PageRank, TextRank, Centroid -----------------------------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_pagerank_equals_networkx(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    a = sp.random(n, n, density=0.2, random_state=seed, format="csr")
    a = sp.csr_matrix(a + a.T)
    a.setdiag(0.0)
    a.eliminate_zeros()  # isolated (dangling) nodes are likely at this density
    ours = textrank.pagerank(a)
    ref = nx.pagerank(nx.from_scipy_sparse_array(a), weight="weight")
    assert np.allclose(ours, [ref[i] for i in range(n)], rtol=0, atol=1e-12)
    assert ours.sum() == pytest.approx(1.0)


def test_textrank_and_centroid_hand_checked():
    hub = "storm floods city coast"
    left = "storm floods homes"
    right = "city coast ferries"
    other = "election results tonight"
    tr = bl.textrank_scores([left, hub, right, other])
    assert int(np.argmax(tr)) == 1  # the hub is linked to both neighbours
    assert tr[0] == pytest.approx(tr[2])  # symmetric neighbours
    assert tr[3] == pytest.approx(min(tr))  # isolated: only teleportation (and dangling) mass
    ce = bl.centroid_scores([left, hub, right, other])
    assert int(np.argmax(ce)) == 1
    assert ce[3] < ce[0]
    # only stop words: no vocabulary, every score equal
    assert np.all(bl.centroid_scores(["the a an", "of the"]) == 0.0)
    flat = bl.textrank_scores(["the a an", "of the"])
    assert flat[0] == pytest.approx(flat[1])


def test_an_external_idf_is_used():
    vec = textrank.make_vectorizer().fit(["storm storm storm coast", "coast election", "election storm"])
    x = bl.tfidf_matrix(["storm coast", "unknown words"], vec)
    assert x.shape == (2, len(vec.vocabulary_))
    assert np.allclose(np.asarray(x.multiply(x).sum(axis=1)).ravel(), [1.0, 0.0])
    rnd = random.Random(5)
    cluster = random_cluster(rnd, "idf", max_articles=4, max_len=20)
    for method in ("textrank", "centroid", "submodular"):
        out = bl.summarize(method, cluster, idf=vec)
        assert out == bl.summarize(method, cluster, idf=vec)
        assert sum(ev.n_tokens(s) for s in out) <= 40 and all(ev.n_tokens(s) >= 7 for s in out)


# -- SUBMODULAR ---------------------------------------------------------------------------------------


def reference_objective(w, cap, reward, labels, lam, chosen):
    cov = sum(min(sum(w[i][j] for j in chosen), cap[i]) for i in range(len(w)))
    parts: dict = {}
    for j in chosen:
        parts[labels[j]] = parts.get(labels[j], 0.0) + reward[j]
    return cov + lam * sum(v**0.5 for v in parts.values())


def reference_budgeted_greedy(w, cap, reward, labels, lengths, candidates, lam, budget, r):
    chosen, used = [], 0
    remaining = list(candidates)
    while True:
        fits = [k for k in remaining if used + lengths[k] <= budget]
        if not fits:
            break
        base = reference_objective(w, cap, reward, labels, lam, chosen)
        ratios = [
            (reference_objective(w, cap, reward, labels, lam, chosen + [k]) - base) / lengths[k] ** r for k in fits
        ]
        best = fits[int(np.argmax(ratios))]
        chosen.append(best)
        used += lengths[best]
        remaining.remove(best)
    singles = [k for k in candidates if lengths[k] <= budget]
    if chosen and singles:
        values = [reference_objective(w, cap, reward, labels, lam, [k]) for k in singles]
        if max(values) > reference_objective(w, cap, reward, labels, lam, chosen):
            return [singles[int(np.argmax(values))]]
    return chosen


@pytest.mark.parametrize("seed", range(8))
def test_submodular_greedy_equals_the_formulas(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(3, 25))
    x = rng.random((n, 6)) * (rng.random((n, 6)) < 0.5)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    x = np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)
    w = x @ x.T
    cap = (bl.SUBMODULAR_A / n) * w.sum(axis=1)
    reward = w.sum(axis=1) / n
    k = int(rng.integers(1, 4))
    labels = rng.integers(0, k, size=n)
    lengths = rng.integers(1, 20, size=n)
    candidates = np.flatnonzero(lengths >= 3)
    lam = float(rng.integers(1, 11))
    prob = bl._SubmodularProblem(w, cap, reward, labels, k, lengths, candidates)
    ours = bl._submodular_select(prob, diversity=lam, max_tokens=30, block=4)
    ref = reference_budgeted_greedy(
        w.tolist(), cap, reward, labels.tolist(), lengths.tolist(), candidates.tolist(), lam, 30, bl.SUBMODULAR_SCALE
    )
    assert ours == ref


def test_submodular_diversity_prefers_another_partition():
    # sentences 0 and 1 are near-duplicates in partition 0, sentence 2 is alone in partition 1
    w = np.array([[1.0, 0.95, 0.1], [0.95, 1.0, 0.1], [0.1, 0.1, 1.0]])
    n = 3
    prob = bl._SubmodularProblem(
        w, 10 * w.sum(axis=1), w.sum(axis=1) / n, np.array([0, 0, 1]), 2, np.array([10, 10, 10]), np.arange(3)
    )
    assert bl._submodular_select(prob, diversity=0.0, max_tokens=20) == [0, 1]  # coverage only
    assert bl._submodular_select(prob, diversity=10.0, max_tokens=20) == [0, 2]


def test_partition_groups_identical_vectors_and_bounds_k():
    base = [
        "storm floods city",
        "election vote tonight",
        "police fire coast",
        "president said monday",
        "killed people flood",
    ]
    # the 2nd copy differs in stop words and a number only: the same tf-idf vector
    sents = base + [s.replace(" ", " the ", 1) + " 7" for s in base]
    x = bl.tfidf_matrix(sents)
    labels, k = bl.partition(x, np.random.default_rng(0))
    assert k == 2  # round(0.2 * 10)
    assert labels.tolist()[:5] == labels.tolist()[5:]
    assert set(labels.tolist()) == {0, 1}
    assert bl.partition(x, np.random.default_rng(0))[0].tolist() == labels.tolist()
    # 30 sentences but only 5 distinct vectors (one-character tokens are not in the vocabulary): K = min(6, 5)
    many = [f"{s} {n}" for n in range(6) for s in base]
    labels, k = bl.partition(bl.tfidf_matrix(many), np.random.default_rng(1))
    assert k == 5 and len(set(labels.tolist())) == 5
    assert all(len({labels[5 * n + i] for n in range(6)}) == 1 for i in range(5))
    assert bl.partition(bl.tfidf_matrix(base[:2]), np.random.default_rng(0))[1] == 1


# -- oracles -----------------------------------------------------------------------------------------


def reference_greedy(sentences, reference):
    """R1-F greedy with rouge_score directly: add the sentence maximising R1-F of the union (document
    order), ties to the earlier sentence, until no addition strictly improves it."""
    scorer = rouge_scorer.RougeScorer(["rouge1"], use_stemmer=True)
    chosen: list[int] = []
    best = 0.0
    while True:
        pick, value = -1, best
        for i in range(len(sentences)):
            if i in chosen:
                continue
            f = scorer.score(reference, " ".join(sentences[j] for j in sorted(chosen + [i])))["rouge1"].fmeasure
            if f > value:
                pick, value = i, f
        if pick < 0:
            return sorted(chosen), best
        chosen.append(pick)
        best = value


WORDS = "storm flood city coast people killed president election vote police fire said monday the a of in".split()


def random_cluster(rnd: random.Random, cid: str, *, max_articles: int = 5, max_len: int = 14) -> bl.Cluster:
    def sentence():
        return " ".join(rnd.choice(WORDS) for _ in range(rnd.randint(1, max_len))).capitalize() + "."

    n_art = rnd.randint(1, max_articles)
    articles = [[sentence() for _ in range(rnd.randint(0, 6))] for _ in range(n_art)]
    if rnd.random() < 0.3 and articles[0]:
        articles[-1].append(articles[0][0])  # a duplicate across articles
    origins = ["original"] + ["retrieved"] * (n_art - 1)
    return bl.Cluster(cid, [sentence() for _ in range(rnd.randint(1, 3))], articles, origins)


@pytest.mark.slow
def test_oracle_multi_and_single_equal_a_rouge_score_greedy():
    rnd = random.Random(7)
    checked = 0
    for k in range(150):
        cluster = random_cluster(rnd, f"c{k}")
        ref = " ".join(cluster.reference)
        sents = bl.candidate_sentences(cluster)
        idx, _ = reference_greedy(sents, ref)
        assert bl.summarize("oracle_multi", cluster) == [sents[i] for i in idx]
        best, best_value = [], -1.0
        for article in cluster.articles:
            a_sents = bl._dedup(article)
            a_idx, value = reference_greedy(a_sents, ref)
            if a_idx and value > best_value:
                best, best_value = [a_sents[i] for i in a_idx], value
        assert bl.summarize("oracle_single", cluster) == best
        checked += bool(idx)
    assert checked > 100


def test_oracle_stops_when_nothing_strictly_improves():
    # reference: 4 tokens. "red blue" alone: F = 2*2/(2+4) = 2/3. Adding "green zz yy" (1 hit,
    # 3 tokens) gives F = 2*3/(5+4) = 2/3 again: "until R1-F decreases" would add it, we stop.
    cluster = bl.Cluster("t", ["red blue green gold"], [["red blue", "green zz yy"]])
    assert bl.summarize("oracle_multi", cluster) == ["red blue"]
    both = SCORER.score("red blue green gold", "red blue green zz yy")["rouge1"].fmeasure
    alone = SCORER.score("red blue green gold", "red blue")["rouge1"].fmeasure
    assert both == pytest.approx(alone)


def test_lead_oracle_and_random_lead_hand_checked():
    long = "word " * 31 + "."  # 32 tokens
    a1 = ["Markets fell sharply in Asia on Monday morning.", long, "A third sentence here."]
    a2 = [
        "The storm hit Florida on Monday, killing three people.",
        "Short one.",
        "Rescue teams searched the coast for survivors .",
    ]
    a3 = [long + " " + long]  # one 64-token sentence: no lead
    cluster = bl.Cluster(
        "lead", ["A storm hit Florida killing three people."], [a1, a2, a3], ["original", "retrieved", "retrieved"]
    )
    # leads: a1 -> first sentence only (9 + 32 > 40); a2 -> all three (11 + 3 + 8 = 22 tokens)
    assert bl.lead(a1) == [a1[0]]
    assert bl.lead(a2) == a2
    assert bl.lead(a3) == []
    assert bl.lead(a2, min_sentence_tokens=7) == [a2[0], a2[2]]
    assert bl.summarize("lead_oracle", cluster) == a2
    seen = set()
    for seed in range(12):
        out = bl.summarize("random_lead", cluster, seed=seed)
        assert out == bl.summarize("random_lead", cluster, seed=seed)
        assert out in ([a1[0]], [a2[0], a2[2]])  # short sentences skipped, a3 has no lead
        seen.add(tuple(out))
    assert len(seen) == 2


def test_cluster_validation_and_unknown_method():
    with pytest.raises(ValueError):
        bl.Cluster("x", ["r"], [["a"], ["b"]], ["original"])
    with pytest.raises(ValueError):
        bl.Cluster("x", ["r"], [["a"]], ["somewhere"])
    assert bl.Cluster("x", ["r"], [["a"], ["b"]]).origins == ["original", "original"]
    with pytest.raises(ValueError):
        bl.summarize("lexrank", bl.Cluster("x", ["r"], [["a"]]))
    empty = bl.Cluster("e", ["a storm"], [])
    assert all(bl.summarize(m, empty) == [] for m in bl.METHODS)


# -- the contract of every method ---------------------------------------------------------------


@st.composite
def clusters(draw):
    words = st.sampled_from(WORDS + [",", "'s", "U.S."])
    sentence = st.lists(words, min_size=1, max_size=45).map(lambda ws: " ".join(ws).capitalize() + ".")
    articles = draw(st.lists(st.lists(sentence, max_size=8), min_size=1, max_size=6))
    reference = draw(st.lists(sentence, min_size=1, max_size=2))
    cid = draw(st.text("abcdef0123456789", min_size=1, max_size=6))
    return bl.Cluster(cid, reference, articles, ["original"] + ["retrieved"] * (len(articles) - 1))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(), st.integers(0, 3))
def test_every_method_observes_the_protocol(cluster, seed):
    pool = set(bl.candidate_sentences(cluster))
    for method in bl.METHODS:
        out = bl.summarize(method, cluster, seed=seed)
        assert out == bl.summarize(method, cluster, seed=seed), method  # deterministic
        assert all(s in pool for s in out), method  # full sentences of the cluster
        assert len(set(out)) == len(out), method
        if method in ("oracle_multi", "oracle_single"):
            continue
        assert sum(ev.n_tokens(s) for s in out) <= 40, method
        if method != "lead_oracle":
            assert all(ev.n_tokens(s) >= 7 for s in out), method


def test_random_depends_on_seed_and_cluster_id():
    rnd = random.Random(3)
    arts = [[" ".join(rnd.choice(WORDS) for _ in range(8)) + "." for _ in range(20)]]
    a = bl.Cluster("one", ["storm"], arts)
    b = bl.Cluster("two", ["storm"], arts)
    outs = {tuple(bl.summarize("random", a, seed=s)) for s in range(5)}
    assert len(outs) > 1
    assert bl.summarize("random", a, seed=0) != bl.summarize("random", b, seed=0)


# -- tuning ------------------------------------------------------------------------------------------


def test_tune_matches_summarize_and_picks_the_best_mean():
    rnd = random.Random(11)
    cl = [random_cluster(rnd, f"v{k}", max_articles=4, max_len=20) for k in range(12)]
    for method in ("textrank", "centroid", "submodular"):
        grid = [0.0, 0.3, 1.0] if method != "submodular" else [1.0, 6.0]
        best, means = bl.tune(method, cl, grid=grid, max_clusters=8, seed=5)
        assert list(means) == grid
        assert means[best] == max(means.values())
        assert best == next(v for v in grid if means[v] == max(means.values()))  # ties: first listed
        # the same 8 clusters, scored through summarize()
        picked = sorted(np.random.default_rng(5).choice(len(cl), size=8, replace=False).tolist())
        param = "diversity" if method == "submodular" else "redundancy"
        for v in grid:
            values = []
            for i in picked:
                out = bl.summarize(method, cl[i], seed=5, **{param: v})
                ref = " ".join(cl[i].reference).lower()
                values.append(SCORER.score(ref, " ".join(out).lower())["rouge1"].fmeasure)
            assert means[v] == pytest.approx(np.mean(values), abs=1e-12)
    best, means = bl.tune("textrank", cl[:3])
    assert list(means) == list(bl.REDUNDANCY_GRID)
    with pytest.raises(ValueError):
        bl.tune("random", cl)
