"""Whole evaluations, as ROUGE-1.5.5.pl runs them: ROUGE's XML configuration files (:func:`read_config`) and
``-z`` file lists (:func:`read_file_list`), scoring every peer on every evaluation (:func:`evaluate`, or
:func:`evaluate_summaries` for in-memory summaries), writing summaries as an SPL configuration
(:func:`write_spl_config`) and the script's text report, line for line (:func:`format_report`)."""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from wikiref.rouge.official.bootstrap import Averages, compute_averages
from wikiref.rouge.official.counting import score_measure, score_measure_batch
from wikiref.rouge.official.options import Options, RougeError, _perl_num
from wikiref.rouge.official.text import (
    _FORMATS,
    Summary,
    _perl_split,
    _Vocab,
    prepare,
    read_units,
    units_from_sentences,
)

# --------------------------------------------------------------------------------------------
# Evaluation configuration files (ROUGE's XML, or the -z file list)
# --------------------------------------------------------------------------------------------


@dataclass
class Eval:
    id: str
    fmt: str | None = None
    peer_root: str | None = None
    model_root: str | None = None
    peers: dict = dataclasses.field(default_factory=dict)  # peer id -> file name
    model_ids: list = dataclasses.field(default_factory=list)
    models: dict = dataclasses.field(default_factory=dict)  # model id -> file name
    file_list: bool = False  # -z: paths are complete

    def peer_path(self, peer_id: str) -> str:
        if self.file_list:
            return self.peers[peer_id]
        return f"{self.peer_root if self.peer_root is not None else ''}/{self.peers[peer_id]}"

    def model_paths(self) -> list[str]:
        if self.file_list:
            return [self.models[m] for m in self.model_ids]
        root = self.model_root if self.model_root is not None else ""
        return [f"{root}/{self.models[m]}" for m in self.model_ids]


def _strip_ws(s: str) -> str:
    return re.sub(r"[\n\s]+$", "", re.sub(r"^[\n\s]+", "", s))


def read_config(path: str | Path) -> tuple[list[Eval], list[str]]:
    """Parse a ROUGE XML evaluation file like readEvals(): returns (evals in order, all peer ids)."""
    from xml.dom import minidom
    from xml.parsers.expat import ExpatError

    try:
        doc = minidom.parse(str(path))
    except (OSError, ExpatError) as exc:
        raise RougeError(f"cannot parse ROUGE configuration {path}: {exc}") from None
    evals: dict[str, Eval] = {}
    order: list[str] = []
    peer_ids: dict[str, None] = {}

    def need(eval_id, what) -> Eval:
        if eval_id is None or eval_id not in evals:
            raise RougeError(f"({what}) Evaluation database does not contain entry for this evaluation ID: {eval_id}")
        return evals[eval_id]

    def text_of(node) -> str | None:
        val = None
        for ch in node.childNodes:
            if ch.nodeType == ch.TEXT_NODE:
                val = _strip_ws(ch.data)
        return val

    def walk(node, eval_id):
        if node.nodeType == node.ELEMENT_NODE:
            name = node.nodeName.upper()
            if name == "EVAL":
                eid = node.getAttribute("ID")
                if eid not in evals:
                    evals[eid] = Eval(id=eid)
                    order.append(eid)
                for ch in node.childNodes:
                    walk(ch, eid)
            elif name == "INPUT-FORMAT":
                fmt = node.getAttribute("TYPE")
                if fmt.upper() not in _FORMATS:
                    raise RougeError(f"Unknown input type: {fmt}")
                need(eval_id, "INPUT-FORMAT").fmt = fmt
            elif name in ("PEER-ROOT", "MODEL-ROOT"):
                for ch in node.childNodes:
                    if ch.nodeType == ch.TEXT_NODE:
                        ev = need(eval_id, name)
                        if name == "PEER-ROOT":
                            ev.peer_root = _strip_ws(ch.data)
                        else:
                            ev.model_root = _strip_ws(ch.data)
            elif name == "PEERS":
                for ch in node.childNodes:
                    if ch.nodeType == ch.ELEMENT_NODE and ch.nodeName.upper() == "P":
                        pid = ch.getAttribute("ID")
                        peer_ids.setdefault(pid)
                        ev = need(eval_id, "PEERS")
                        f = text_of(ch)
                        if f is not None:
                            ev.peers[pid] = f
            elif name == "MODELS":
                for ch in node.childNodes:
                    if ch.nodeType == ch.ELEMENT_NODE and ch.nodeName.upper() == "M":
                        mid = ch.getAttribute("ID")
                        ev = need(eval_id, "MODELS")
                        ev.model_ids.append(mid)
                        f = text_of(ch)
                        if f is not None:
                            ev.models[mid] = f
            else:
                for ch in node.childNodes:
                    walk(ch, eval_id)
        else:
            for ch in node.childNodes or ():
                walk(ch, eval_id)

    walk(doc, None)
    return [evals[e] for e in order], list(peer_ids)


def read_file_list(path: str | Path, fmt: str, system_id: str) -> tuple[list[Eval], list[str]]:
    """-z mode: each non-comment line is 'peer model1 model2 ...'; eval ids 1, 2, ..."""
    evals = []
    eid = 1
    with open(path, encoding="latin-1") as fh:
        for line in fh:
            if line.startswith("#") or not line.strip():
                continue
            files = _perl_split(line.strip())
            if len(files) < 2:
                raise RougeError("File list has to have at least 2 filenames per line (peer model1 model2 ... modelN)")
            ev = Eval(id=str(eid), fmt=fmt, file_list=True)
            ev.peers[system_id] = files[0]
            for k, mf in enumerate(files[1:], start=1):
                ev.model_ids.append(f"M.{k}")
                ev.models[f"M.{k}"] = mf
            evals.append(ev)
            eid += 1
    return evals, [system_id]


def _by_eval_id_key():
    lead = re.compile(r"^([0-9]+)")

    def cmp(a: str, b: str) -> int:
        ma, mb = lead.match(a), lead.match(b)
        if ma and mb:
            x, y = int(ma.group(1)), int(mb.group(1))
            return (x > y) - (x < y)
        return (a > b) - (a < b)

    return functools.cmp_to_key(cmp)


# --------------------------------------------------------------------------------------------
# Whole evaluations (what ROUGE-1.5.5.pl does with a configuration file)
# --------------------------------------------------------------------------------------------


@dataclass
class MeasureResult:
    peer_id: str
    measure: str
    per_eval: dict  # test id ("<eval id>.<peer id>") -> EvalScore
    averages: Averages


class _SummaryCache:
    def __init__(self, opts: Options, vocab: _Vocab, warn: Callable[[str], None]):
        self.opts, self.vocab, self.warn = opts, vocab, warn
        self._items: dict = {}

    def get(self, path: str, fmt: str | None) -> Summary:
        key = (path, (fmt or "").upper())
        s = self._items.get(key)
        if s is None:
            if fmt is None:
                raise RougeError(f"Unknown input format: (no INPUT-FORMAT for {path})")
            s = prepare(read_units(path, fmt), self.opts, self.vocab)
            if s.empty:
                self.warn(f"readText: {path} -> empty text")
            self._items[key] = s
        return s


def _score_evals(
    evals: Sequence[Eval],
    peer_ids: Sequence[str],
    opts: Options,
    data_dir: str | None,
    warn: Callable[[str], None],
    warn_read: Callable[[str], None],
) -> list[tuple]:
    """Score the peers on these evaluations, in order: [(peer id, measure, test id, EvalScore)]. ``warn`` gets the
    missing-peer warnings, ``warn_read`` the empty-text ones (emitted once per summary file)."""
    cache = _SummaryCache(opts, _Vocab(opts, data_dir), warn_read)
    measures = opts.measures()
    out: list[tuple] = []
    checked: set = set()
    for ev in evals:
        present = []
        for pid in dict.fromkeys(peer_ids):
            if pid in ev.peers:
                present.append(pid)
            else:
                warn(f"*ROUGE Warning: test instance for peer {pid} does not exist for evaluation {ev.id}")
        if not present:
            continue
        model_paths = ev.model_paths()
        for mp in model_paths:
            if mp not in checked:
                if not os.path.exists(mp):
                    raise RougeError(f"Cannot find model summary: {mp}")
                checked.add(mp)
        peers = [cache.get(ev.peer_path(pid), ev.fmt) for pid in present]
        models = [cache.get(mp, ev.fmt) for mp in model_paths]
        for measure in measures:
            for pid, sc in zip(present, score_measure_batch(measure, peers, models, opts)):
                out.append((pid, measure, f"{ev.id}.{pid}", sc))
    return out


def _score_chunk(args) -> tuple[list, list, RougeError | None]:
    """Worker of ``evaluate(jobs > 1)``: one run of consecutive evaluations. The warnings are recorded (in order,
    the empty-text ones tagged so the parent prints each file's once) and a RougeError is handed back, so the parent
    reproduces the serial run's stderr and failure exactly."""
    evals, peer_ids, opts, data_dir = args
    events: list[tuple[bool, str]] = []
    try:
        scored = _score_evals(
            evals,
            peer_ids,
            opts,
            data_dir,
            lambda msg: events.append((False, msg)),
            lambda msg: events.append((True, msg)),
        )
    except RougeError as exc:
        return events, [], exc
    return events, scored, None


def _chunks(evals: Sequence[Eval], peer_ids: Sequence[str], parts: int) -> list[list[Eval]]:
    """Consecutive runs of evaluations with about the same work each (peers x references per evaluation);
    consecutive, so one topic's jackknife evaluations (the same summaries) mostly stay in one process."""
    wanted = set(peer_ids)
    cost = [max(1, len(wanted & ev.peers.keys()) * max(1, len(ev.model_ids))) for ev in evals]
    total = sum(cost)
    out: list[list[Eval]] = [[]]
    acc = 0
    for ev, c in zip(evals, cost):
        if out[-1] and acc >= total * len(out) / parts and len(out) < parts:
            out.append([])
        out[-1].append(ev)
        acc += c
    return out


def _warm_kernels(opts: Options) -> None:
    """Load the compiled LCS kernels before forking, so the workers inherit them instead of each loading them."""
    if opts.lcs or opts.wlcs is not None:
        from wikiref.rouge.official import lcs

        if lcs.fast_available() and not lcs.REFERENCE:
            lcs.union_marks([[1]], [[1]])
            lcs.union_marks([[1]], [[1]], 1.0)


def _score_parallel(evals, peer_ids, opts, data_dir, warn, jobs: int) -> list[tuple]:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    _warm_kernels(opts)
    # fork where there is one (the workers inherit the loaded modules and kernels); spawn elsewhere
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    parts = _chunks(evals, peer_ids, jobs * 4)  # more parts than workers: an early finisher takes another
    scored: list[tuple] = []
    read_warned: set = set()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=ctx) as pool:
        for events, part, error in pool.map(_score_chunk, [(c, list(peer_ids), opts, data_dir) for c in parts]):
            for is_read, msg in events:
                if is_read:
                    if msg in read_warned:  # another part already read this file (the serial run warns once)
                        continue
                    read_warned.add(msg)
                warn(msg)
            if error is not None:
                raise error
            scored.extend(part)
    return scored


def evaluate(
    evals: Sequence[Eval],
    peer_ids: Sequence[str],
    opts: Options,
    *,
    data_dir: str | None = None,
    warn: Callable[[str], None] | None = None,
    jobs: int = 1,
) -> list[MeasureResult]:
    """Score every peer in ``peer_ids`` on every evaluation; one result per (peer, measure) in the
    script's order. (The work is done evaluation by evaluation, all peers of one evaluation at once.)
    ``jobs`` > 1: the evaluations are scored in that many processes; same results, same warnings."""
    if not isinstance(jobs, int) or jobs < 1:
        raise RougeError(f"jobs must be a whole number >= 1, got {jobs!r}")
    warn = warn or (lambda msg: print(msg, file=sys.stderr))
    measures = opts.measures()
    if jobs == 1 or len(evals) < 2:
        scored = _score_evals(evals, peer_ids, opts, data_dir, warn, warn)
    else:
        scored = _score_parallel(evals, peer_ids, opts, data_dir, warn, jobs)
    per: dict = {(pid, m): {} for pid in peer_ids for m in measures}
    for pid, measure, test_id, sc in scored:
        per[(pid, measure)].setdefault(test_id, sc)
    results = []
    for pid in peer_ids:
        for measure in measures:
            per_eval = per[(pid, measure)]
            if opts.count_mode == 0:
                values = {t: (float(s.r), float(s.p), float(s.f)) for t, s in per_eval.items()}
            else:
                values = {t: (s.model_count, s.peer_count, s.hit) for t, s in per_eval.items()}
            results.append(MeasureResult(pid, measure, per_eval, compute_averages(values, opts)))
    return results


def evaluate_summaries(
    items: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]],
    opts: Options,
    *,
    peer_id: str = "1",
    data_dir: str | None = None,
) -> dict[str, MeasureResult]:
    """In-memory evaluation: ``items`` are ``(eval_id, peer_sentences, [model_sentences, ...])``.

    Returns ``{measure: MeasureResult}`` with exactly what ROUGE-1.5.5.pl reports for a configuration
    listing these summaries as SPL files (one sentence per line) with peer id ``peer_id``.
    """
    vocab = _Vocab(opts, data_dir)
    per: dict = {m: {} for m in opts.measures()}
    for eval_id, peer, models in items:
        p = prepare(units_from_sentences(peer), opts, vocab)
        ms = [prepare(units_from_sentences(m), opts, vocab) for m in models]
        for measure in per:
            per[measure].setdefault(f"{eval_id}.{peer_id}", score_measure(measure, p, ms, opts))
    out = {}
    for measure, per_eval in per.items():
        if opts.count_mode == 0:
            values = {t: (float(s.r), float(s.p), float(s.f)) for t, s in per_eval.items()}
        else:
            values = {t: (s.model_count, s.peer_count, s.hit) for t, s in per_eval.items()}
        out[measure] = MeasureResult(peer_id, measure, per_eval, compute_averages(values, opts))
    return out


def write_spl_config(
    root: str | Path, items: Sequence[tuple[str, Sequence[str], Sequence[Sequence[str]]]], *, peer_id: str = "1"
) -> Path:
    """Write ``items`` (as for :func:`evaluate_summaries`) as SPL files plus a ROUGE XML configuration
    under ``root`` (peers/, models/, rouge.xml), so the real ROUGE-1.5.5.pl can be run on them."""
    from xml.sax.saxutils import escape

    root = Path(root)
    (root / "peers").mkdir(parents=True, exist_ok=True)
    (root / "models").mkdir(parents=True, exist_ok=True)
    xml = ['<ROUGE_EVAL version="1.55">']
    for eval_id, peer, models in items:
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", eval_id)
        pname = f"{safe}.{peer_id}"
        (root / "peers" / pname).write_text("".join(s + "\n" for s in peer), encoding="utf-8")
        xml += [
            f'<EVAL ID="{escape(eval_id)}">',
            f"<PEER-ROOT>{escape(str(root / 'peers'))}</PEER-ROOT>",
            f"<MODEL-ROOT>{escape(str(root / 'models'))}</MODEL-ROOT>",
            '<INPUT-FORMAT TYPE="SPL"></INPUT-FORMAT>',
            f'<PEERS><P ID="{escape(peer_id)}">{escape(pname)}</P></PEERS>',
            "<MODELS>",
        ]
        for k, m in enumerate(models):
            mname = f"{safe}.M.{k + 1}"
            (root / "models" / mname).write_text("".join(s + "\n" for s in m), encoding="utf-8")
            xml.append(f'<M ID="{k + 1}">{escape(mname)}</M>')
        xml += ["</MODELS>", "</EVAL>"]
    xml.append("</ROUGE_EVAL>")
    cfg = root / "rouge.xml"
    cfg.write_text("\n".join(xml) + "\n", encoding="utf-8")
    return cfg


def format_report(results: Sequence[MeasureResult], opts: Options, per_eval: bool = False) -> str:
    """The script's stdout for these results (printResults), line for line."""
    lines = []
    conf = opts.confidence_text
    for res in results:
        av = res.averages
        pid, tag = res.peer_id, res.measure
        lines.append("---------------------------------------------")
        if opts.count_mode in (0, 1):
            lines.append(f"{pid} {tag} Average_R: {av.r} ({conf}%-conf.int. {av.r_ci[0]} - {av.r_ci[1]})")
            lines.append(f"{pid} {tag} Average_P: {av.p} ({conf}%-conf.int. {av.p_ci[0]} - {av.p_ci[1]})")
            lines.append(f"{pid} {tag} Average_F: {av.f} ({conf}%-conf.int. {av.f_ci[0]} - {av.f_ci[1]})")
        else:
            lines.append(f"{pid} {tag} M_count: {int(av.m_cnt)} P_count: {int(av.p_cnt)} H_count: {int(av.h_cnt)}")
        if per_eval:
            lines.append(".............................................")
            for test_id in sorted(sorted(res.per_eval), key=_by_eval_id_key()):
                s = res.per_eval[test_id]
                if opts.count_mode == 0:
                    r, p, f = s.r, s.p, s.f
                else:
                    r, p, f = _perl_num(s.model_count), _perl_num(s.peer_count), _perl_num(s.hit)
                lines.append(f"{pid} {tag} Eval {test_id} R:{r} P:{p} F:{f}")
    return "\n".join(lines) + ("\n" if lines else "")
