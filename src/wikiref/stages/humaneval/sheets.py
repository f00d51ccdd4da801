"""Rating files: one per rater and study, written by the web page after every item or filled offline as CSV.

* the items file (``data/humaneval/<study>/items.json``, written by the sample job) holds what raters see:
  the study's instructions and questions (value, label) and its items; never a system's identity;
* a rater's answers: ``<ratings>/<study>/<rater>.json`` (``{"study", "rater", "digest", "submitted",
  "answers": {item: {question: value}}}``, saved atomically after every item by ``wikiref humaneval serve``)
  or ``<ratings>/<study>/<rater>.csv`` (a blank sheet of ``wikiref humaneval export`` / the sample job, filled
  in a spreadsheet). :func:`load` reads either and checks it against the items: every problem (an unknown or
  repeated item, a value outside the scale, an unanswered question, a sheet of another sample) is reported
  with the rater and the item, and the file is never changed.
"""

from __future__ import annotations

import csv
import io
import random
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


class SheetError(ValueError):
    """A rating file that does not fit its sample: the message names the rater and the items."""


@dataclass
class Ratings:
    rater: str
    answers: dict[str, dict[str, str]]  # item -> question -> value
    submitted: bool
    path: str


def rater_order(sample: Mapping, rater: str) -> list[str]:
    """The order in which ``rater`` sees the items: a shuffle seeded by the sample's seed and the rater's name
    (raters see different orders, so position effects average out)."""
    ids = [it["id"] for it in sample["items"]]
    random.Random(f"{sample['seed']}:{sample['study']}:{rater}").shuffle(ids)
    return ids


def column(question: Mapping) -> str:
    """A question's CSV column: ``<id> [<value>|<value>...]`` (the allowed values in the header)."""
    return f"{question['id']} [{'|'.join(v for v, _ in question['scale'])}]"


def blank_sheet(sample: Mapping, rater: str) -> str:
    """The CSV sheet of ``rater``: one row per item in the rater's order, the texts, empty answer columns."""
    items = {it["id"]: it for it in sample["items"]}
    labels = list(dict.fromkeys(f["label"] for it in sample["items"] for f in it["fields"]))
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["item", *labels, *(column(q) for q in sample["questions"])])
    for iid in rater_order(sample, rater):
        texts = {f["label"]: f["text"] for f in items[iid]["fields"]}
        w.writerow([iid, *(texts.get(lb, "") for lb in labels), *([""] * len(sample["questions"]))])
    return buf.getvalue()


def _question_columns(header: list[str], sample: Mapping, where: str) -> dict[str, int]:
    out = {}
    for q in sample["questions"]:
        idx = [i for i, h in enumerate(header) if h.strip() in (q["id"], column(q))]
        if not idx:
            raise SheetError(f"{where}: no column for question {q['id']!r} (expected {column(q)!r})")
        out[q["id"]] = idx[0]
    return out


def read_csv(path: str | Path, sample: Mapping, rater: str) -> dict[str, dict[str, str]]:
    """The answers of a CSV sheet (blank cells are unanswered). Raises :class:`SheetError`."""
    where = f"rater {rater} ({path})"
    rows = list(csv.reader(io.StringIO(Path(path).read_text(encoding="utf-8-sig"))))
    if not rows or "item" not in [h.strip() for h in rows[0]]:
        raise SheetError(f"{where}: not a rating sheet (no 'item' column in the first row)")
    header = [h.strip() for h in rows[0]]
    cols, item_col = _question_columns(header, sample, where), header.index("item")
    answers: dict[str, dict[str, str]] = {}
    problems = []
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        iid = row[item_col].strip() if item_col < len(row) else ""
        if iid in answers:
            problems.append(f"item {iid} appears twice (line {n})")
            continue
        answers[iid] = {q: row[i].strip() for q, i in cols.items() if i < len(row) and row[i].strip()}
    if problems:
        raise SheetError(f"{where}: " + "; ".join(problems))
    return answers


def check(sample: Mapping, rater: str, answers: Mapping, *, where: str, complete: bool = True) -> None:
    """Raise :class:`SheetError` listing every problem of ``answers`` (rater, item, question): unknown items,
    values outside a question's scale and, with ``complete``, items or questions left unanswered."""
    questions = {q["id"]: {v for v, _ in q["scale"]} for q in sample["questions"]}
    known = [it["id"] for it in sample["items"]]
    problems = [f"item {i}: not in the sample" for i in answers if i not in set(known)]
    for iid, ans in answers.items():
        for q, v in ans.items():
            if q not in questions:
                problems.append(f"item {iid}: unknown question {q!r}")
            elif v not in questions[q]:
                problems.append(f"item {iid}: {q} = {v!r} is not one of {sorted(questions[q])}")
    if complete:
        for iid in known:
            missing = [q for q in questions if q not in answers.get(iid, {})]
            if missing:
                problems.append(f"item {iid}: unanswered {', '.join(missing)}")
    if problems:
        shown = problems[:12] + ([f"... and {len(problems) - 12} more"] if len(problems) > 12 else [])
        raise SheetError(f"rater {rater} ({where}): {len(problems)} problem(s): " + "; ".join(shown))


def load(path: str | Path, sample: Mapping, *, complete: bool = True) -> Ratings:
    """A rater's file (``.json`` from the web page or ``.csv`` sheet; the rater is the file's stem), checked
    against ``sample``. A web-page file that was not submitted is an error when ``complete``."""
    from wikiref.files import read_json

    path = Path(path)
    rater = path.stem
    if path.suffix == ".csv":
        answers, submitted = read_csv(path, sample, rater), True
    elif path.suffix == ".json":
        data = read_json(path)
        if data.get("study") != sample["study"] or data.get("digest") != sample["digest"]:
            raise SheetError(
                f"rater {rater} ({path}): answers to another sample (study {data.get('study')!r}, digest "
                f"{data.get('digest')!r}; this sample: {sample['study']!r}, {sample['digest']!r})"
            )
        answers, submitted = {k: dict(v) for k, v in data.get("answers", {}).items()}, bool(data.get("submitted"))
    else:
        raise SheetError(f"rater {rater} ({path}): a rating file is .json (web page) or .csv (sheet)")
    check(sample, rater, answers, where=str(path), complete=complete)
    if complete and not submitted:
        raise SheetError(f"rater {rater} ({path}): every item is answered but the sheet was not submitted yet")
    return Ratings(rater, answers, submitted, str(path))


def save(path: str | Path, sample: Mapping, rater: str, answers: Mapping, *, submitted: bool = False) -> None:
    """Write a rater's answers atomically (what the web page does after every item)."""
    from wikiref.files import write_json

    check(sample, rater, answers, where=str(path), complete=submitted)
    write_json(
        path,
        {
            "study": sample["study"],
            "rater": rater,
            "digest": sample["digest"],
            "submitted": bool(submitted),
            "answers": {i: dict(answers[i]) for i in sorted(answers)},
        },
    )


def rating_files(folder: str | Path) -> list[Path]:
    """The rating files of one study's folder (``*.json``, ``*.csv``), sorted; two files of one rater are an
    error (which one counts would be a guess)."""
    folder = Path(folder)
    files = (
        sorted(p for p in folder.glob("*") if p.suffix in (".json", ".csv") and p.is_file()) if folder.is_dir() else []
    )
    return one_file_per_rater(files, folder)


def one_file_per_rater(files: list[Path], where: str | Path) -> list[Path]:
    """``files`` (one study's rating files), sorted; a rater with two files is an error naming ``where``."""
    files = sorted(Path(f) for f in files)
    stems = [p.stem for p in files]
    twice = sorted({s for s in stems if stems.count(s) > 1})
    if twice:
        raise SheetError(f"{where}: raters with both a .json and a .csv file: {twice} (keep one)")
    return files
