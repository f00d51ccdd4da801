"""The docs say how to do things and what is true now; history lives in CHANGELOG.md and bench/results/.

* ``docs/`` stays within MAX_DOC_LINES lines of Markdown in all (long material goes to the code's docstrings,
  measurement logs beside their raw results in ``bench/results/``);
* no issue or pull-request number in ``docs/`` or ``src/`` (``issue 12``, ``issue #12``, ``(#12)``,
  ``owner/repo#12``): a reference to a tracker ages badly and says nothing to a reader of the code;
* the README's map from each paper table and figure to its target names outputs that target's stage writes.

Each checker runs on the repository and on a planted violation it must catch.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wikiref import config, registry

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
SRC = REPO / "src"
README = REPO / "README.md"
MAX_DOC_LINES = 1800

ISSUE_REFERENCE = re.compile(
    r"\b(?:issues?|pull request|PR)[\s-]*#?\d+"  # issue 12, issue #12, issues 29, issue-33, PR #4
    r"|[\w.-]+/[\w.-]+#\d+"  # owner/repo#12
    r"|(?<![\w&#/])#\d{1,5}\b",  # (#12), #12: not an HTML entity (&#58;), a fragment (war#2019) or a colour (#000000)
    re.IGNORECASE,
)


def doc_lines(folder: Path) -> dict[str, int]:
    """Lines of every Markdown page under ``folder``."""
    return {str(p.relative_to(folder)): len(p.read_text(encoding="utf-8").splitlines()) for p in folder.rglob("*.md")}


def issue_references(files) -> list[str]:
    """``path:line: match`` for every issue reference in ``files``."""
    out = []
    for path in files:
        for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            out += [f"{path}:{n}: {m.group(0)}" for m in ISSUE_REFERENCE.finditer(line)]
    return out


def checked_files(root: Path) -> list[Path]:
    return sorted([*(root / "docs").rglob("*.md"), *(root / "src").rglob("*.py")])


# ------------------------------------------------------------------------------------------ line budget
def test_docs_stay_within_their_line_budget():
    lines = doc_lines(DOCS)
    total = sum(lines.values())
    per_page = ", ".join(f"{k} {v}" for k, v in sorted(lines.items(), key=lambda kv: -kv[1]))
    assert total <= MAX_DOC_LINES, f"docs/ has {total} lines (at most {MAX_DOC_LINES}): {per_page}"


def test_the_line_budget_catches_a_long_page(tmp_path):
    (tmp_path / "short.md").write_text("# a page\n" * 10)
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "long.md").write_text("line\n" * MAX_DOC_LINES)
    assert sum(doc_lines(tmp_path).values()) == MAX_DOC_LINES + 10 > MAX_DOC_LINES


# ------------------------------------------------------------------------------------- issue references
def test_no_issue_references_in_docs_or_src():
    found = issue_references(checked_files(REPO))
    assert not found, "issue references (history belongs in CHANGELOG.md):\n" + "\n".join(found)


@pytest.mark.parametrize(
    "text",
    [
        "Fixed in issue 29.",
        "see issue #18 for the walker",
        "the crashes (#16) of the GPU run",
        "Issues 30 and 31",
        "after the issue-33 refactor",
        "DVC bug treeverse/dvc#9021",
        "#12: the first try",
    ],
)
def test_a_planted_issue_reference_is_found(tmp_path, text):
    (tmp_path / "docs").mkdir()
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "docs" / "page.md").write_text("# Page\n\nAll fine here.\n")
    (tmp_path / "src" / "pkg" / "mod.py").write_text(f'"""A module.\n\n{text}\n"""\n')
    found = issue_references(checked_files(tmp_path))
    assert len(found) == 1 and found[0].endswith(":3: " + ISSUE_REFERENCE.search(text).group(0)), found


@pytest.mark.parametrize(
    "text",
    [
        'color="#000000"',  # a colour
        "BLUE = '#1f77b4'",
        'text.replace("\'", "&#39;")',  # an HTML entity
        '``"syrian_civil war#2019"``',  # a link fragment
        "[the environment](docs/workflow.md#the-environment)",
        "`[L#]` markers; ROUGE-2 of issue-free text",
        "see https://github.com/treeverse/dvc/issues/9021",  # a URL says where, not a bare number
    ],
)
def test_what_is_not_an_issue_reference(text):
    assert not ISSUE_REFERENCE.search(text), text


# ------------------------------------------------------------------------------------- the README's map
def readme_map() -> list[tuple[set[str], list[str]]]:
    """(targets named, output stems) of every row of the README's "Where each paper table lands" table."""
    text = README.read_text(encoding="utf-8")
    section = text.split("## Where each paper table lands", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or not line.startswith("|") or set(cells[0]) <= {"-"} or cells[0] == "paper":
            continue
        targets = set(re.findall(r"`(\w+)_all`", line))
        stems, folder = [], ""
        for path in re.findall(r"`([\w/]+)\.\*`", cells[3]):
            folder = path.rsplit("/", 1)[0] if "/" in path else folder
            stems.append(path if "/" in path else f"{folder}/{path}")
        rows.append((targets, stems))
    return rows


def test_the_readme_map_names_what_each_target_writes():
    rows = readme_map()
    assert len(rows) >= 15 and all(t and s for t, s in rows), rows
    stages = {st.name: st for st in registry.stages(config.load_params(REPO / "params.yaml"))}
    for targets, stems in rows:
        assert {t for t in targets} <= set(stages), f"no stage for {targets - set(stages)}"
        written = {f.rsplit(".", 1)[0] for t in targets for f in (*stages[t].outs, *stages[t].targets)}
        missing = [s for s in stems if s not in written]
        assert not missing, f"{', '.join(sorted(targets))}_all write no {missing}"
