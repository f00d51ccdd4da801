"""Coverage and density of Grusky et al. (2018) as used for WCEP's Figure 1."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikiref.stages.wcep import fragments as fr


def test_hand_computed_example():
    # article: the cat sat on the mat ; summary: the cat lay on the mat
    # i=0 "the": at j=0 "the cat" (2), the scan resumes at j=2, at j=4 "the" (1) -> "the cat"
    # i=2 "lay": not in the article -> i=3 ; i=3 "on the mat" (3)
    article = "the cat sat on the mat".split()
    summary = "the cat lay on the mat".split()
    assert fr.fragments(article, summary) == [("the", "cat"), ("on", "the", "mat")]
    assert fr.fragment_spans(article, summary) == [(0, 0, 2), (3, 3, 3)]
    assert fr.coverage(article, summary) == pytest.approx(5 / 6)
    assert fr.density(article, summary) == pytest.approx((4 + 9) / 6)


def test_grusky_scan_skips_inside_a_match_unless_exact_longest():
    # Algorithm 1 of Grusky et al. (and Newsroom) resumes the scan after a match, so the longer
    # match "a a b" starting at article position 1 is not seen.
    article = "a a a b".split()
    summary = "a a b".split()
    assert fr.fragments(article, summary) == [("a", "a"), ("b",)]
    assert fr.coverage(article, summary) == pytest.approx(1.0)
    assert fr.density(article, summary) == pytest.approx((4 + 1) / 3)
    assert fr.fragments(article, summary, exact_longest=True) == [("a", "a", "b")]
    assert fr.density(article, summary, exact_longest=True) == pytest.approx(9 / 3)


def test_no_overlap_full_copy_and_empty():
    assert fr.fragments("x y z".split(), "a b".split()) == []
    assert fr.coverage("x y z".split(), "a b".split()) == 0.0
    assert fr.density("x y z".split(), "a b".split()) == 0.0
    assert fr.coverage("x y".split(), []) == 0.0
    assert fr.density([], "a b".split()) == 0.0
    tokens = "one two three four five".split()
    assert fr.fragments(tokens, tokens) == [tuple(tokens)]
    assert fr.coverage(tokens, tokens) == 1.0
    assert fr.density(tokens, tokens) == 5.0  # 5^2 / 5


def test_repeated_summary_tokens_are_matched_again():
    # the same article span may be used by two fragments
    article = "red car".split()
    summary = "red car and red car".split()
    assert fr.fragments(article, summary) == [("red", "car"), ("red", "car")]
    assert fr.coverage(article, summary) == pytest.approx(4 / 5)
    assert fr.density(article, summary) == pytest.approx(8 / 5)


def test_cluster_concatenates_articles_and_lowercases():
    # A = "storms hit florida . three people died ." ; S = "storms hit florida , three people died ."
    # fragments: "storms hit florida" (3), "," unmatched, "three people died ." (4)
    cov, den = fr.cluster_coverage_density(
        ["Storms hit Florida.", "Three people died."], "Storms hit Florida, three people died."
    )
    assert cov == pytest.approx(7 / 8)
    assert den == pytest.approx((9 + 16) / 8)
    # a fragment may run across the boundary of two concatenated articles
    cov, den = fr.cluster_coverage_density(["It rained in Paris", "today"], "rained in Paris today")
    assert (cov, den) == (pytest.approx(1.0), pytest.approx(16 / 4))
    assert fr.cluster_coverage_density(["Anything."], "") == (0.0, 0.0)


def literal_algorithm_1(article, summary):
    """Grusky et al.'s Algorithm 1 written as published (nested scans)."""
    out = []
    i = 0
    while i < len(summary):
        best = ()
        j = 0
        while j < len(article):
            if summary[i] == article[j]:
                i2, j2 = i, j
                while i2 < len(summary) and j2 < len(article) and summary[i2] == article[j2]:
                    i2, j2 = i2 + 1, j2 + 1
                if len(best) < i2 - i:
                    best = tuple(summary[i:i2])
                j = j2
            else:
                j += 1
        if best:
            out.append(best)
        i += max(len(best), 1)
    return out


def brute_longest(article, summary):
    out = []
    i = 0
    while i < len(summary):
        best = 0
        for j in range(len(article)):
            n = 0
            while i + n < len(summary) and j + n < len(article) and summary[i + n] == article[j + n]:
                n += 1
            best = max(best, n)
        if best:
            out.append(tuple(summary[i : i + best]))
        i += max(best, 1)
    return out


tokens = st.lists(st.sampled_from("a b c d e".split()), max_size=40)


@settings(max_examples=400, deadline=None)
@given(tokens, tokens)
def test_indexed_matching_equals_the_literal_algorithms(article, summary):
    assert fr.fragments(article, summary) == literal_algorithm_1(article, summary)
    assert fr.fragments(article, summary, exact_longest=True) == brute_longest(article, summary)
    cov = fr.coverage(article, summary)
    assert 0.0 <= cov <= 1.0
    assert fr.density(article, summary) >= cov
