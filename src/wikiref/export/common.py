"""What the dataset and model exports share: the error, the output folder, card pieces (YAML header,
Markdown tables, the numbers of a metrics file)."""

from __future__ import annotations

import contextlib
import json
import math
import shutil
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

CARD = "README.md"
# The card's first body line: an existing output folder is replaced only when its README.md has it, so an
# export never deletes a folder it did not write.
MARKER = "<!-- written by `wikiref export`; regenerate it rather than editing it -->"
METRICS_DIR = "metrics"  # inside an export: the metrics files the card quotes, copied as they are
MAX_NUMBERS = 40  # rows of one metrics file's table in a card (the whole file is copied beside it)
# Metrics keys whose values are long lists or bookkeeping, not results: left out of the cards' tables.
SKIPPED_KEYS = frozenset(
    {"history", "threshold_candidates", "pack_stats", "dev_pack_stats", "config", "label", "locations"}
)


class ExportError(ValueError):
    """Input an export cannot use (a missing folder or file, an unreadable split, an output in the way)."""


def read_json(path: str | Path, what: str) -> dict:
    """A JSON object from ``path``; :class:`ExportError` naming ``what`` when it is missing or not JSON."""
    try:
        with open(path, encoding="utf-8") as fh:
            obj = json.load(fh)
    except FileNotFoundError:
        raise ExportError(f"{what} {path} does not exist") from None
    except (OSError, ValueError) as exc:
        raise ExportError(f"{what} {path} is not readable JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise ExportError(f"{what} {path} is not a JSON object")
    return obj


def check_output(out_dir: Path, *inputs: Path) -> None:
    """Refuse an output folder that is, holds or lies inside one of ``inputs``, or that exists and was not
    written by an export (replacing it would delete what it holds)."""
    out = out_dir.resolve()
    for src in inputs:
        src = src.resolve()
        if out == src or out in src.parents or src in out.parents:
            raise ExportError(f"output {out_dir} overlaps the input {src}: choose a folder outside it")
    if out_dir.is_file():
        raise ExportError(f"output {out_dir} is a file")
    if out_dir.is_dir() and any(out_dir.iterdir()):
        card = out_dir / CARD
        if not (card.is_file() and MARKER in card.read_text(encoding="utf-8", errors="replace")):
            raise ExportError(f"output {out_dir} exists and is not an earlier export: choose a new or empty folder")


@contextlib.contextmanager
def output_folder(out_dir: Path, *inputs: Path) -> Iterator[Path]:
    """A scratch folder that replaces ``out_dir`` as a whole when the block succeeds (:func:`check_output` first)."""
    from wikiref.files import atomic_dir

    check_output(out_dir, *inputs)
    with atomic_dir(out_dir) as tmp:
        yield tmp


def copy_file(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)


def write_export(
    out_dir: Path, inputs: tuple[Path, ...], files: Mapping[str, Path], card: Callable[[Path], str]
) -> None:
    """Write ``out_dir`` as a whole (:func:`output_folder`: refused when it overlaps one of ``inputs``): ``files``
    (path in the export -> the file copied there), then the card, ``card(folder)`` (it lists the copied files)."""
    from wikiref.files import write_text

    with output_folder(out_dir, *inputs) as tmp:
        for rel, src in files.items():
            copy_file(src, tmp / rel)
        write_text(tmp / CARD, card(tmp))


def front_matter(header: Mapping[str, Any]) -> str:
    """The card's YAML header (between ``---`` lines), keys in the given order."""
    import yaml

    body = yaml.safe_dump(dict(header), sort_keys=False, allow_unicode=True, width=1000, default_flow_style=False)
    return f"---\n{body}---\n"


def card_text(
    header: Mapping[str, Any],
    title: str,
    standin: bool | None,
    sections: Iterable[str],
    folder: Path,
    files: Iterable[str],
) -> str:
    """A card: the YAML ``header``, the title (marked STAND-IN when ``standin``), :data:`MARKER`, the non-empty
    ``sections`` and the table of the ``files`` of ``folder``."""
    parts = [
        front_matter(header),
        f"# {title}" + (" (STAND-IN)" if standin else "") + "\n",
        MARKER + "\n",
        *sections,
        "## Files\n\n" + file_list(folder, files) + "\n",
    ]
    return "\n".join(p for p in parts if p)


def cell(value: Any) -> str:
    """A value as a Markdown table cell (floats to 4 significant digits, pipes escaped)."""
    if isinstance(value, float):
        text = "n/a" if math.isnan(value) else f"{value:.4g}"
    elif value is None:
        text = ""
    else:
        text = str(value)
    return text.replace("|", "\\|").replace("\n", " ")


def md_table(columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def numbers(obj: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """The scalar leaves of a metrics object as (dotted key, value), lists and :data:`SKIPPED_KEYS` left out."""
    if isinstance(obj, Mapping):
        out: list[tuple[str, Any]] = []
        for k in sorted(obj, key=str):
            if str(k) not in SKIPPED_KEYS:
                out += numbers(obj[k], f"{prefix}.{k}" if prefix else str(k))
        return out
    if isinstance(obj, (bool, int, float, str)) or obj is None:
        return [(prefix, obj)] if prefix else []
    return []


def metrics_section(name: str, metrics: Mapping, copied_as: str) -> str:
    """One metrics file in a card: its scalar results (at most :data:`MAX_NUMBERS`) and where the whole file is."""
    rows = [(f"`{k}`", v) for k, v in numbers(metrics) if not isinstance(v, str) or len(v) <= 80]
    more = len(rows) - MAX_NUMBERS
    text = f"**{name}** (the whole file: [{copied_as}]({copied_as}))\n\n"
    text += md_table(("key", "value"), rows[:MAX_NUMBERS]) if rows else "(no scalar values)"
    if more > 0:
        text += f"\n\n... and {more} more in {copied_as}."
    return text + "\n"


def file_list(folder: Path, names: Iterable[str]) -> str:
    """A Markdown table of files of ``folder``: name, bytes, SHA-256."""
    from wikiref.files import sha256_file

    rows = [(f"`{n}`", (folder / n).stat().st_size, f"`{sha256_file(folder / n)}`") for n in sorted(names)]
    return md_table(("file", "bytes", "sha256"), rows)
