"""The package layout keeps its contracts: paths in one module, table schemas in one module, no stdlib names."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pyarrow as pa

from wikiref import layout, schemas

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "src" / "wikiref"
# An artefact path between stages spelled out as a string literal ("data/...", 'results/...', f"models/...").
PATH_LITERAL = re.compile(r"""[rbf]?["'](data|models|results|logs)/""")


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py")) + sorted((REPO / "workflow" / "rules").glob("*.smk")) + [REPO / "Snakefile"]


def test_artefact_paths_are_spelled_only_in_layout():
    offenders = []
    for path in _sources():
        if path == PACKAGE / "layout.py":
            continue
        for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if PATH_LITERAL.search(line):
                offenders.append(f"{path.relative_to(REPO)}:{no}: {line.strip()}")
    assert not offenders, "use wikiref.layout instead of a literal path:\n" + "\n".join(offenders)


def test_path_check_sees_a_literal(tmp_path):
    assert PATH_LITERAL.search('out = "data/oracle/train.parquet"')
    assert PATH_LITERAL.search("f'results/tables/{stem}.csv'")
    assert not PATH_LITERAL.search("from wikiref import layout  # the data/ folder")


def test_no_module_is_named_after_a_stdlib_module():
    clashes = [
        str(p.relative_to(REPO))
        for p in PACKAGE.rglob("*")
        if (p.suffix == ".py" and p.stem in sys.stdlib_module_names)
        or (p.is_dir() and p.name in sys.stdlib_module_names)
    ]
    assert not clashes


def test_table_schemas_are_declared_only_in_schemas():
    """Stages build the tables between stages from wikiref.schemas (collect's checkpoint files are internal)."""
    internal = {PACKAGE / "stages" / "collect" / "pipeline.py"}  # candidate/document checkpoints, not between stages
    offenders = [
        f"{p.relative_to(REPO)}:{no}"
        for p in sorted(PACKAGE.rglob("*.py"))
        if p != PACKAGE / "schemas.py" and p not in internal
        for no, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"\bpa\.schema\(\s*\[", line)
    ]
    assert not offenders


def test_layout_templates_format_and_schemas_agree():
    assert layout.RAW_PART.format(part="p1") == "data/raw/p1.parquet"
    assert layout.table_stem(layout.table_files(layout.TABLE4)) == layout.TABLE4
    assert schemas.CURATED.names[: len(schemas.RAW)] == schemas.RAW.names
    assert schemas.ORACLE.field("oracle_indices").type == pa.list_(pa.int32())
    assert set(schemas.RAW_REQUIRED) <= set(schemas.RAW.names)
    assert set(schemas.CURATE_STATISTICS) <= set(schemas.CURATE_ADDED.names)
