"""Speed of `wikiref rouge155` against ROUGE-1.5.5.pl on the same configuration, same run.

A DUC-shaped evaluation: T topics, 4 reference summaries each, S systems (peers) per topic, every
summary about 250 words, the paper's flags (-n 2 -x -m -2 4 -u -c 95 -r 1000 -f A -p 0.5 -t 0
-l 250 -a -d). Both commands run as subprocesses (so the Python timing includes interpreter start
and imports) and their outputs are compared. Prints one JSON line.

    python bench/rouge155.py --topics 50 --systems 8     # 400 peer summaries
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from wikiref.rouge import official as o
from wikiref.rouge.parity import parse_report, perl_rouge_available, prepare_perl_rouge, run_perl_rouge

_SYL = [
    "ka",
    "lo",
    "mi",
    "ne",
    "ru",
    "sa",
    "ti",
    "vo",
    "ber",
    "con",
    "dis",
    "ex",
    "gen",
    "in",
    "ment",
    "pro",
    "tion",
    "ing",
    "ed",
    "er",
    "al",
    "ous",
    "ive",
    "ness",
]


def _vocab(rng: random.Random, size: int = 6000) -> list[str]:
    """Pseudo-English vocabulary (Zipf-ranked) so overlaps between summaries look like news text's."""
    words = ["the", "of", "and", "to", "in", "a", "is", "that", "for", "on", "was", "with", "said", "by"]
    while len(words) < size:
        w = "".join(rng.choice(_SYL) for _ in range(rng.randint(1, 4)))
        if w not in words:
            words.append(w)
    return words


def _text(rng: random.Random, vocab: list[str], weights: list[float], words: int) -> list[str]:
    out, left = [], words
    while left > 0:
        n = min(left, rng.randint(8, 30))
        sent = " ".join(rng.choices(vocab, weights, k=n))
        out.append(sent[0].upper() + sent[1:] + rng.choice([".", ".", ",", " ;"]))
        left -= n
    return out


def build(root: Path, topics: int, systems: int, seed: int, jackknife: bool = False) -> Path:
    """One EVAL per topic (4 references), or with ``jackknife`` NIST's layout: one EVAL per left-out
    reference (each peer scored against 3 references, 4 times)."""
    rng = random.Random(seed)
    vocab = _vocab(rng)
    weights = [1.0 / (r + 1) for r in range(len(vocab))]
    (root / "models").mkdir(parents=True)
    (root / "peers").mkdir()
    xml = ['<ROUGE_EVAL version="1.55">']
    for t in range(topics):
        tid = f"D{601 + t:04d}"
        peers = []
        for s in range(systems):
            name = f"{tid}.M.250.A.{s + 1}"
            (root / "peers" / name).write_text("\n".join(_text(rng, vocab, weights, rng.randint(240, 270))) + "\n")
            peers.append(f'<P ID="{s + 1}">{name}</P>')
        models = []
        for m in "ABCD":
            name = f"{tid}.M.250.A.{m}"
            (root / "models" / name).write_text("\n".join(_text(rng, vocab, weights, rng.randint(230, 260))) + "\n")
            models.append((m, f'<M ID="{m}">{name}</M>'))
        subsets = (
            [(tid, models)] if not jackknife else [(f"{tid}-{d}", [x for x in models if x[0] != d]) for d, _ in models]
        )
        for eid, sub in subsets:
            xml += [
                f'<EVAL ID="{eid}">',
                f"<PEER-ROOT>{root / 'peers'}</PEER-ROOT>",
                f"<MODEL-ROOT>{root / 'models'}</MODEL-ROOT>",
                '<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>',
                "<PEERS>",
                *peers,
                "</PEERS>",
                "<MODELS>",
                *(x[1] for x in sub),
                "</MODELS>",
                "</EVAL>",
            ]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "config.xml"
    cfg.write_text("\n".join(xml) + "\n")
    return cfg


def _children_cpu() -> float:
    import resource

    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--topics", type=int, default=50)
    ap.add_argument("--systems", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jackknife", action="store_true", help="NIST-style jackknife evaluation list")
    ap.add_argument("--flags", default=o.DUC_FLAGS + " -a -d")
    ap.add_argument("--work", help="folder for the generated files and the Perl copy (default: a temp dir)")
    args = ap.parse_args()
    reason = perl_rouge_available()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(args.work or tmp)
        cfg = build(
            work / f"eval-{args.topics}x{args.systems}{'-jk' if args.jackknife else ''}",
            args.topics,
            args.systems,
            args.seed,
            args.jackknife,
        )
        release = None if reason else prepare_perl_rouge(work / "perl")
        py_cmd = [sys.executable, "-m", "wikiref", "rouge155", *args.flags.split(), str(cfg)]
        cpu0 = _children_cpu()
        t0 = time.perf_counter()
        py = subprocess.run(py_cmd, capture_output=True, text=True, check=True).stdout
        t_py = time.perf_counter() - t0
        cpu_py = _children_cpu() - cpu0
        rec = {
            "bench": "rouge155",
            "topics": args.topics,
            "systems": args.systems,
            "jackknife": args.jackknife,
            "peer_summaries": args.topics * args.systems,
            "flags": args.flags,
            "python_s": round(t_py, 3),
        }
        if reason:
            rec["perl"] = f"unavailable: {reason}"
        else:
            cpu0 = _children_cpu()
            t0 = time.perf_counter()
            perl = run_perl_rouge(release, cfg, args.flags)
            t_perl = time.perf_counter() - t0
            cpu_perl = _children_cpu() - cpu0
            a, b = parse_report(perl), parse_report(py)
            rec.update(
                perl_s=round(t_perl, 3),
                speedup=round(t_perl / t_py, 1),
                python_cpu_s=round(cpu_py, 3),
                perl_cpu_s=round(cpu_perl, 3),
                cpu_speedup=round(cpu_perl / cpu_py, 1),
                identical_output=perl == py,
                per_eval_lines=len(a["eval"]),
                per_eval_equal=a["eval"] == b["eval"],
                averages_equal=a["avg"] == b["avg"],
            )
    print(json.dumps(rec))
    return 0


if __name__ == "__main__":
    sys.exit(main())
