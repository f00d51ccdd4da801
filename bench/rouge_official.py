"""Agreement of wikiref.rouge.official with ROUGE-1.5.5.pl on many random configurations.

For each flag set, N random evaluation configurations (1-8 topics, 1-4 references, 1-3 peers,
SPL/SEE, optional NIST-style jackknife lists, messy text: hyphens, punctuation, non-ASCII bytes,
odd whitespace, empty lines) are scored by the Perl script and by the Python scorer. Prints one JSON
line per flag set: cases, per-Eval R/P/F triples compared, the largest absolute difference per
measure and field, and how many Average/confidence-interval lines agree exactly.

    python bench/rouge_official.py --cases 20
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from pathlib import Path

from wikiref.rouge import official as o

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


def _sentence(rng):
    words = [rng.choice(WORDS) for _ in range(rng.randint(0, 25))]
    words = [w.upper() if rng.random() < 0.05 else (w.capitalize() if rng.random() < 0.1 else w) for w in words]
    out = ""
    for i, w in enumerate(words):
        out += (rng.choice([" "] * 20 + ["  ", "\t", " , ", "-", "--"]) if i else "") + w
    if rng.random() < 0.05:
        out = "  " + out
    return out


def _write(path: Path, lines, fmt, rng):
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "SPL":
        text = "\n".join(lines) + ("\n" if lines and rng.random() < 0.8 else "")
    else:
        text = '<html>\n<body bgcolor="white">\n' + "".join(
            f'<a name="{i}">[{i}]</a> <a href="#{i}" id={i}>{ln.replace("<", " ")}</a>\n'
            for i, ln in enumerate(lines, 1) if ln.strip()) + "</body>\n</html>\n"
    path.write_bytes(text.encode("utf-8"))


def make_config(root: Path, seed: int, non_empty_models: bool) -> Path:
    rng = random.Random(seed)
    fmt = rng.choice(["SPL", "SPL", "SEE"])
    jackknife = rng.random() < 0.3
    peers = ["1", "2", "B"][: rng.randint(1, 3)]
    xml = ['<ROUGE_EVAL version="1.55">']
    for e in range(rng.randint(1, 8)):
        eid = f"D{601 + e:04d}"
        models = []
        for k in range(rng.randint(1, 4)):
            lines = [_sentence(rng) for _ in range(rng.randint(1 if non_empty_models else 0, 12))]
            if non_empty_models:
                lines.append("a closing sentence")
            name = f"{eid}.M.250.A.{chr(65 + k)}"
            _write(root / "models" / name, lines, fmt, rng)
            models.append((chr(65 + k), name))
        given = []
        for p in peers:
            if len(peers) > 1 and rng.random() < 0.05:
                continue
            name = f"{eid}.M.250.A.{p}"
            _write(root / "peers" / name, [_sentence(rng) for _ in range(rng.randint(0, 12))], fmt, rng)
            given.append((p, name))
        subsets = [models] if not jackknife or len(models) == 1 else [[m for m in models if m != d] for d in models]
        for k, sub in enumerate(subsets):
            sid = eid if len(subsets) == 1 else f"{eid}-{chr(65 + k)}"
            xml += [f'<EVAL ID="{sid}">', f"<PEER-ROOT>{root / 'peers'}</PEER-ROOT>",
                    f"<MODEL-ROOT>{root / 'models'}</MODEL-ROOT>", f'<INPUT-FORMAT TYPE="{fmt}"></INPUT-FORMAT>',
                    "<PEERS>", *(f'<P ID="{p}">{n}</P>' for p, n in given), "</PEERS>", "<MODELS>",
                    *(f'<M ID="{m}">{n}</M>' for m, n in sub), "</MODELS>", "</EVAL>"]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "config.xml"
    cfg.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return cfg


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=20, help="random configurations per flag set")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    reason = o.perl_rouge_available()
    if reason:
        print(json.dumps({"bench": "rouge_official", "skipped": reason}))
        return 0
    total = {"cases": 0, "per_eval_triples": 0, "max_abs_diff": 0.0, "avg_lines": 0, "avg_lines_equal": 0}
    with tempfile.TemporaryDirectory() as tmp:
        release = o.prepare_perl_rouge(Path(tmp) / "perl")
        for fi, flags in enumerate(FLAG_SETS):
            rec = {"bench": "rouge_official", "flags": flags, "cases": 0, "perl_errors_matched": 0,
                   "per_eval_triples": {}, "max_abs_diff": {}, "avg_lines": 0, "avg_lines_equal": 0,
                   "perl_s": 0.0, "python_s": 0.0}
            for c in range(args.cases):
                seed = args.seed + 1000 * fi + c
                root = Path(tmp) / f"case{seed}"
                cfg = make_config(root, seed, non_empty_models="-w" in flags)
                t0 = time.perf_counter()
                try:
                    perl = o.run_perl_rouge(release, cfg, flags + " -a -d")
                except o.RougeError:
                    perl = None
                t1 = time.perf_counter()
                try:
                    opts = o.Options.from_flags(flags)
                    evals, peers = o.read_config(cfg)
                    py = o.format_report(o.evaluate(evals, sorted(peers), opts, warn=lambda m: None), opts, per_eval=True)
                except o.RougeError:
                    py = None
                t2 = time.perf_counter()
                rec["cases"] += 1
                if perl is None or py is None:
                    assert perl is None and py is None, f"only one side failed (seed {seed}, {flags})"
                    rec["perl_errors_matched"] += 1
                    continue
                rec["perl_s"] += t1 - t0
                rec["python_s"] += t2 - t1
                a, b = o.parse_report(perl), o.parse_report(py)
                assert a["eval"].keys() == b["eval"].keys(), f"different evaluations (seed {seed})"
                for key, (r, p, f) in a["eval"].items():
                    measure = key[1]
                    rec["per_eval_triples"][measure] = rec["per_eval_triples"].get(measure, 0) + 1
                    for name, x, y in zip("RPF", (r, p, f), b["eval"][key]):
                        d = abs(float(x) - float(y))
                        k = f"{measure} {name}"
                        rec["max_abs_diff"][k] = max(rec["max_abs_diff"].get(k, 0.0), d)
                rec["avg_lines"] += len(a["avg"]) + len(a["counts"])
                rec["avg_lines_equal"] += sum(1 for k, v in a["avg"].items() if b["avg"].get(k) == v)
                rec["avg_lines_equal"] += sum(1 for k, v in a["counts"].items() if b["counts"].get(k) == v)
            rec["perl_s"] = round(rec["perl_s"], 2)
            rec["python_s"] = round(rec["python_s"], 2)
            print(json.dumps(rec), flush=True)
            total["cases"] += rec["cases"]
            total["per_eval_triples"] += sum(rec["per_eval_triples"].values())
            total["max_abs_diff"] = max([total["max_abs_diff"], *rec["max_abs_diff"].values()])
            total["avg_lines"] += rec["avg_lines"]
            total["avg_lines_equal"] += rec["avg_lines_equal"]
    print(json.dumps({"bench": "rouge_official", "total": total}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
