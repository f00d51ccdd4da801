"""ROUGE-L / ROUGE-W: the compiled kernels (bit-parallel LCS, compiled WLCS programme) against the pure-Python
reference of the script's tables (wikiref.rouge.official.lcs), without perl.

Checked: the hit marks themselves (hand-derived cases of the script's tie-breaking, then random inputs: ties,
repeated tokens, empty sentences, sentences of hundreds of tokens across the 64-bit word boundaries, several
weights), the clipped hits of whole summary pairs, whole evaluations (every output line), that evaluate() really
uses the kernels, and that --jobs N prints what --jobs 1 prints. The cross-checks against ROUGE-1.5.5.pl itself are
in test_rouge_official_parity.py.
"""

from __future__ import annotations

import random

import pytest

from wikiref.rouge import official as o
from wikiref.rouge.official import lcs
from wikiref.rouge.official.text import _Vocab
from wikiref.rouge.parity import WORDS, make_config, random_summary

WEIGHTS = [None, 1.2, 1.5, 2.0, 0.5, 3.0]


@pytest.fixture(scope="module", autouse=True)
def kernels():
    # numba is a dependency: the fast path must be there (this fails when it is removed or cannot load)
    assert lcs.fast_available()


def marks_three_ways(model, peer, weight):
    ref = lcs.union_marks_reference(model, peer, weight)
    fast = lcs.union_marks(model, peer, weight)
    if weight is None:  # the cell-by-cell kernel must agree with the bit-parallel one too
        assert lcs.union_marks(model, peer, None, bit_parallel=False) == ref
    return ref, fast


@pytest.mark.parametrize(
    "model, peer, expected",
    [
        # a tie: both "a" and "b" are an LCS; markLCS goes up first from the corner, so it marks "a"
        (["a b"], ["b a"], [[1, 0]]),
        # a repeated model token: the walk takes the diagonal at the last row, so the last "a" is marked
        (["a a"], ["a"], [[0, 1]]),
        (["a"], ["a a"], [[1]]),
        # up beats left on equal values all the way back to the first row
        (["x a y"], ["a x"], [[1, 0, 0]]),
        # the union over the peer sentences
        (["a b"], ["b", "a"], [[1, 1]]),
        # empty sentences on either side mark nothing
        (["", "a b"], ["", "b a", ""], [[], [1, 0]]),
        (["a b"], [], [[0, 0]]),
    ],
)
def test_hand_derived_marks(model, peer, expected):
    model = [s.split() for s in model]
    peer = [s.split() for s in peer]
    for weight in (None, 1.2):
        ref, fast = marks_three_ways(model, peer, weight)
        assert fast == ref == expected


def _sentence(rng: random.Random, vocab: int, length: int) -> list[int]:
    return [rng.randrange(vocab) for _ in range(length)]


def test_random_marks_equal_the_reference():
    """Small vocabularies (many ties and repeats), lengths around the 64-bit word boundaries, empty sentences."""
    rng = random.Random(19)
    lengths = [0, 1, 2, 5, 17, 63, 64, 65, 127, 128, 129]
    for case in range(120):
        vocab = rng.choice([1, 2, 3, 5, 12, 40])
        model = [_sentence(rng, vocab, rng.choice(lengths[:6]) if case % 3 else rng.choice(lengths)) for _ in range(3)]
        peer = [_sentence(rng, vocab, rng.choice(lengths)) for _ in range(rng.randint(0, 3))]
        weight = WEIGHTS[case % len(WEIGHTS)]
        ref, fast = marks_three_ways(model, peer, weight)
        assert fast == ref, (case, weight)


def test_long_sentences_with_repeated_tokens():
    """Hundreds of tokens (several 64-bit words per row), a few distinct tokens repeated many times."""
    rng = random.Random(5)
    for case, (m_len, p_len) in enumerate([(300, 257), (190, 320), (129, 400), (256, 256)]):
        vocab = [4, 9, 30, 3][case]
        model = [_sentence(rng, vocab, m_len), _sentence(rng, vocab, 40)]
        peer = [_sentence(rng, vocab, p_len), _sentence(rng, vocab, 70)]
        for weight in (None, 1.2, 2.0):
            ref, fast = marks_three_ways(model, peer, weight)
            assert fast == ref, (case, weight)


def _summary(rng: random.Random, opts: o.Options, vocab: _Vocab, long: bool):
    lines = random_summary(rng, non_empty=True)
    if long:  # one sentence of a few hundred tokens, with the short vocabulary of WORDS repeating
        lines.append(" ".join(rng.choice(WORDS) for _ in range(rng.randint(150, 400))))
    return o.prepare(o.units_from_sentences(lines), opts, vocab)


@pytest.mark.parametrize("weight", WEIGHTS)
def test_clipped_hits_of_summary_pairs_equal_the_reference(weight):
    rng = random.Random(str(weight))
    opts = o.make_options(n=1, stem=True, wlcs=weight, lcs=weight is None)
    vocab = _Vocab(opts)
    for case in range(12):
        model = _summary(rng, opts, vocab, long=case % 4 == 0)
        peer = _summary(rng, opts, vocab, long=case % 3 == 0)
        fast = lcs.pair_hits(model, peer, weight, reference=False)
        ref = lcs.pair_hits(model, peer, weight, reference=True)
        assert fast == ref and type(fast[0]) is type(ref[0]), (case, fast, ref)


def _report(cfg, flags: str, reference: bool, **kw) -> str:
    opts = o.Options.from_flags(flags)
    evals, peers = o.read_config(cfg)
    old = lcs.REFERENCE
    lcs.REFERENCE = reference
    try:
        return o.format_report(o.evaluate(evals, sorted(peers), opts, warn=lambda m: None, **kw), opts, per_eval=True)
    finally:
        lcs.REFERENCE = old


WEIGHTED_FLAGS = [
    "-n 2 -w 1.2 -m -2 4 -u -r 50",
    "-n 1 -w 1.5 -f B -r 20 -l 40",
    "-x -w 2 -s -m -r 20 -b 150",
    "-n 1 -w 0.5 -t 1 -r 20",
    "-n 1 -w 3 -t 2",
]


@pytest.mark.parametrize("case", range(len(WEIGHTED_FLAGS)))
def test_whole_evaluations_equal_the_reference(tmp_path, case):
    """Every output line of random configurations (SPL/SEE, jackknife lists, truncation) is the same with the
    kernels and with the reference."""
    flags = WEIGHTED_FLAGS[case]
    cfg = make_config(tmp_path, 4000 + case, non_empty_models=True)
    assert _report(cfg, flags, reference=False) == _report(cfg, flags, reference=True)


def test_evaluate_uses_the_kernels(tmp_path, monkeypatch):
    """With the reference out of reach, ROUGE-L and ROUGE-W still score: the fast path did the work."""
    cfg = make_config(tmp_path, 11, non_empty_models=True)
    expected = _report(cfg, "-n 1 -w 1.2 -r 10", reference=True)

    def forbidden(*args, **kwargs):
        raise AssertionError("the reference path was used")

    monkeypatch.setattr(lcs, "pair_hits_reference", forbidden)
    monkeypatch.setattr(lcs, "mark_reference", forbidden)
    assert _report(cfg, "-n 1 -w 1.2 -r 10", reference=False) == expected


def test_jobs_give_the_serial_output_and_warnings(tmp_path, capsys):
    """--jobs 3 prints the same lines, and the same warnings in the same order, as --jobs 1 (missing peers, empty
    summaries read by several processes); a missing reference fails the same way."""
    from wikiref.cli import main

    cfg = make_config(tmp_path, 23, jackknife=True, fmt="SPL", non_empty_models=True)
    (tmp_path / "peers" / "empty").write_text("\n")
    text = cfg.read_text()
    # every evaluation lists one more peer "E" whose file is empty: the script warns once per file
    cfg.write_text(text.replace("</PEERS>", '<P ID="E">empty</P></PEERS>'))
    flags = ["-n", "2", "-w", "1.2", "-m", "-2", "4", "-u", "-r", "30", "-l", "100", "-a", "-d"]
    outs = []
    for jobs in ("1", "3"):
        assert main(["rouge155", "--jobs", jobs, *flags, str(cfg)]) == 0
        outs.append(capsys.readouterr())
    assert outs[0].out == outs[1].out and outs[0].out
    assert outs[0].err == outs[1].err and outs[0].err.count("peers/empty -> empty text") == 1

    models = sorted((tmp_path / "models").iterdir())
    models[-1].unlink()
    for jobs in ("1", "3"):
        assert main(["rouge155", "--jobs", jobs, *flags, str(cfg)]) == 2
        assert "Cannot find model summary" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["rouge155", "--jobs", "0", *flags, str(cfg)])
    with pytest.raises(o.RougeError, match="jobs"):
        o.evaluate([], [], o.Options(), jobs=0)
