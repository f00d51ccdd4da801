"""wikiref.rouge.official without perl: the script's rules, checked on hand-computed cases.

The cross-checks against the real ROUGE-1.5.5.pl are in test_rouge_official_parity.py.
"""

from __future__ import annotations

import pytest

from wikiref.rouge import official as o
from wikiref.rouge.official.counting import _finish
from wikiref.rouge.official.text import _Vocab


def test_porter_stemmer_known_words():
    # Porter (1980) examples plus the script's step-4 change (-ement before -ment/-ent).
    cases = {
        "caresses": "caress",
        "ponies": "poni",
        "cats": "cat",
        "feed": "feed",
        "agreed": "agre",
        "plastered": "plaster",
        "motoring": "motor",
        "hopping": "hop",
        "filing": "file",
        "happy": "happi",
        "relational": "relat",
        "conditional": "condit",
        "digitizer": "digit",
        "generalization": "gener",
        "hopefulness": "hope",
        "electrical": "electr",
        "adjustment": "adjust",
        "replacement": "replac",
        "dependent": "depend",
        "adoption": "adopt",
        "controll": "control",
        "roll": "roll",
        "yelling": "yell",
        "youth": "youth",
        "ski": "ski",
        "sky": "sky",
    }
    for word, stem in cases.items():
        assert o.porter_stem(word) == stem, word


def test_wordnet_exceptions_come_first_and_short_tokens_are_not_stemmed():
    table = o.load_exceptions()
    assert table["geese"] == "goose" and table["wrote"] == "write" and table["better"] == "well"
    opts = o.make_options(n=1, stem=True)
    vocab = _Vocab(opts)
    assert vocab.terms("geese wrote better runs was") == ["goose", "write", "well", "run", "was"]
    # MorphStem only applies to tokens longer than 3 characters
    assert vocab.terms("ran") == ["ran"]


def test_tokenisation_like_the_script():
    units = o.units_from_sentences(["U.S.-led  Forces' e-mail, café (2005)", "", "Second LINE"])
    # text is handled as bytes: é is the two bytes of its UTF-8 encoding
    assert units == ["u.s.-led  forces' e-mail, caf\xc3\xa9 (2005)", "second line"]
    text = o.truncated_text(units)
    # hyphens become tokens, every other non [A-Za-z0-9] byte (UTF-8 é is two bytes) a space
    assert text == "u s - led forces e - mail caf 2005 second line"
    vocab = _Vocab(o.Options())
    assert vocab.terms(text) == ["u", "s", "led", "forces", "e", "mail", "caf", "2005", "second", "line"]


def test_length_limit_counts_raw_words_before_punctuation_is_split():
    units = o.units_from_sentences(["one two-three four", "five six seven"])
    # 3 raw words in the first sentence (two-three is one), so -l 4 keeps one word of the second
    assert o.truncated_text(units, length=4) == "one two - three four five"
    assert o.truncated_units(units, length=4) == ["one two - three four", "five"]
    # a sentence that fills the limit exactly is still cut (the test is size + n < limit)
    assert o.truncated_text(units, length=3) == "one two - three four"
    # -b: bytes of the raw text, the joining space is not counted
    assert o.truncated_text(units, nbytes=20) == "one two - three four fi"


def test_skip_bigrams_and_the_last_unigram_edge_case():
    grams, count = o.skip_bigram_counts(["a", "b", "c"], skip=0, unigrams=True)
    # unigrams a, b (not c: the script's loop stops before the last token) + bigrams ab, bc
    assert count == 4 and set(grams) == {("a",), ("b",), ("a", "b"), ("b", "c")}
    grams, count = o.skip_bigram_counts(["a", "b", "c", "d"], skip=-1, unigrams=False)
    assert count == 6
    grams, count = o.skip_bigram_counts(["a"], skip=4, unigrams=True)
    assert count == 0 and not grams


def test_pooled_and_best_reference():
    peer = ["the cat sat on the mat"]
    m1 = ["the cat sat on the mat"]
    m2 = ["a dog ran"]
    a = o.score(peer, [m1, m2], n=1, lcs=False)["ROUGE-1"]
    # pooled: hits 6 + 0 over model tokens 6 + 3; precision over 2 x 6 peer tokens
    assert a["R"] == pytest.approx(round(6 / 9, 5)) and a["P"] == pytest.approx(0.5)
    b = o.score(peer, [m2, m1], n=1, lcs=False, formula="B")["ROUGE-1"]
    assert b == {"R": 1.0, "P": 1.0, "F": 1.0}


def test_f_is_computed_from_rounded_recall_and_precision():
    s = _finish(model_count=3, hit=1, peer_count=7, alpha=0.5)
    r, p = float(s.r), float(s.p)
    assert s.r == "0.33333" and s.p == "0.14286"
    assert s.f == format((p * r) / (0.5 * p + 0.5 * r), "7.5f")


def test_flags_parse_like_getopts():
    opts = o.Options.from_flags(o.DUC_FLAGS)
    assert opts.measures() == ["ROUGE-1", "ROUGE-2", "ROUGE-SU4"]
    assert (opts.stem, opts.length, opts.formula, opts.alpha, opts.resamples) == (True, 250, "A", 0.5, 1000)
    assert o.Options.from_flags("-n 1 -2 -1 -U").measures() == ["ROUGE-1", "ROUGE-L", "ROUGE-S*", "ROUGE-SU*"]
    assert o.Options.from_flags("-w 1.2 -x").measures() == ["ROUGE-W-1.2"]
    with pytest.raises(o.RougeError):
        o.Options.from_flags("-l 10 -b 10")
    with pytest.raises(o.RougeError):
        o.Options.from_flags("-3 HM")


def test_perl_drand48_reproduced():
    # srand(0); int(rand(N)) in perl 5.36: rand() = 0.17082803610628972, 0.74990198048496381, ...
    idx = o.perl_bootstrap_indices(10, 2)
    assert idx[0, :3].tolist() == [1, 7, 0]
    # srand(1): 0.041630344771878214, 0.45449244472862915, 0.8348172181669149
    assert idx[1, :3].tolist() == [0, 4, 8]


def test_averages_of_a_single_evaluation_are_its_scores():
    opts = o.Options.from_flags("-n 1 -r 20")
    av = o.compute_averages({"1.A": (0.5, 0.25, 0.33333)}, opts)
    assert (av.r, av.p, av.f) == ("0.50000", "0.25000", "0.33333")
    assert av.r_ci == ("0.50000", "0.50000")


def test_config_and_cli(tmp_path, capsys):
    from wikiref.cli import main

    (tmp_path / "m").mkdir()
    (tmp_path / "p").mkdir()
    (tmp_path / "m" / "D1.M.A").write_text("The cat sat on the mat.\nIt was happy.\n")
    (tmp_path / "m" / "D1.M.B").write_text("A cat was sitting on a mat.\n")
    (tmp_path / "p" / "D1.P.1").write_text("the cat sat\non a mat\n")
    cfg = tmp_path / "c.xml"
    cfg.write_text(
        f"""<ROUGE_EVAL version="1.55"><EVAL ID="D1"><PEER-ROOT>{tmp_path}/p</PEER-ROOT>
<MODEL-ROOT>{tmp_path}/m</MODEL-ROOT><INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>
<PEERS><P ID="1">D1.P.1</P></PEERS><MODELS><M ID="A">D1.M.A</M><M ID="B">D1.M.B</M></MODELS></EVAL></ROUGE_EVAL>"""
    )
    assert main(["rouge155", "-n", "2", "-m", "-2", "4", "-u", "-r", "10", "-d", str(cfg), "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    expected = o.score(
        ["the cat sat", "on a mat"],
        [["The cat sat on the mat.", "It was happy."], ["A cat was sitting on a mat."]],
        flags="-n 2 -m -2 4 -u",
    )
    line = next(ln for ln in out if ln.startswith("1 ROUGE-2 Eval D1.1 "))
    assert line == "1 ROUGE-2 Eval D1.1 R:{R:.5f} P:{P:.5f} F:{F:.5f}".format(**expected["ROUGE-2"])
    assert [ln.split()[1] for ln in out if "Average_R" in ln] == ["ROUGE-1", "ROUGE-2", "ROUGE-L", "ROUGE-SU4"]
    # a missing model file is a clear error, not a crash
    (tmp_path / "m" / "D1.M.B").unlink()
    assert main(["rouge155", "-n", "1", str(cfg), "1"]) == 2
    assert "Cannot find model summary" in capsys.readouterr().err
