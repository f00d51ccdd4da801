"""Random ROUGE evaluation configurations for checking wikiref.rouge.official against ROUGE-1.5.5.pl.

Shared by the parity tests (tests/test_rouge_official_parity.py) and the agreement benchmark
(bench/rouge_official.py): topics with 1-4 references, peers 1/2/B (some missing), SPL or SEE
files, optional NIST-style jackknife evaluation lists, and messy text (hyphens, punctuation,
non-ASCII bytes, odd whitespace, empty lines).
"""

from __future__ import annotations

import random
from pathlib import Path

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


def random_sentence(rng: random.Random) -> str:
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


def random_summary(rng: random.Random, non_empty: bool = False) -> list[str]:
    lines = [random_sentence(rng) for _ in range(rng.randint(1 if non_empty else 0, 12))]
    if non_empty:
        lines.append("a non empty closing sentence")
    if rng.random() < 0.1:
        lines.insert(rng.randint(0, len(lines)), "")
    return lines


def write_summary(path: Path, lines: list[str], fmt: str, rng: random.Random) -> None:
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


def make_config(
    root: Path,
    seed: int,
    *,
    fmt: str | None = None,
    jackknife: bool | None = None,
    numeric_ids: bool = True,
    non_empty_models: bool = False,
    texts=None,
) -> Path:
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
            model_texts = [random_summary(rng, non_empty_models) for _ in range(rng.randint(1, 4))]
            peer_texts = {p: random_summary(rng) for p in peers if not (len(peers) > 1 and rng.random() < 0.05)}
        models = []
        for k, lines in enumerate(model_texts):
            name = f"{eid}.M.250.{chr(65 + k)}.{chr(65 + k)}"
            write_summary(root / "models" / name, lines, fmt, rng)
            models.append((chr(65 + k), name))
        given = []
        for pid, lines in peer_texts.items():
            name = f"{eid}.M.250.{pid}"
            write_summary(root / "peers" / name, lines, fmt, rng)
            given.append((pid, name))
        # NIST's jackknifing: one evaluation per left-out reference
        subsets = [models] if not jackknife or len(models) == 1 else [[m for m in models if m != d] for d in models]
        for k, sub in enumerate(subsets):
            sid = eid if len(subsets) == 1 else f"{eid}-{chr(65 + k)}"
            xml += [
                f'<EVAL ID="{sid}">',
                f"<PEER-ROOT>\n{root / 'peers'}\n</PEER-ROOT>",
                f"<MODEL-ROOT>\n{root / 'models'}\n</MODEL-ROOT>",
                f'<INPUT-FORMAT TYPE="{fmt}">\n</INPUT-FORMAT>',
                "<PEERS>",
            ]
            xml += [f'<P ID="{pid}">{name}</P>' for pid, name in given]
            xml += ["</PEERS>", "<MODELS>"]
            xml += [f'<M ID="{mid}">{name}</M>' for mid, name in sub]
            xml += ["</MODELS>", "</EVAL>"]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "config.xml"
    cfg.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return cfg
