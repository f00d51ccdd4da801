"""Atomic, deterministic output helpers shared by every step.

Every file a step produces is written to a temporary sibling and renamed into place, so a killed
job never leaves a half-written output that a later run would mistake for a finished one.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_UMASK = os.umask(0)
os.umask(_UMASK)


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success rename it over ``path``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    os.chmod(tmp_path, 0o666 & ~_UMASK)  # mkstemp creates 0600; give outputs the usual permissions
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextlib.contextmanager
def atomic_dir(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary folder next to ``path``; on success it replaces ``path`` as a whole (the old
    folder, if any, is moved aside first and removed after), so a killed job never leaves a half-built
    folder under the final name."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent))
    try:
        yield tmp
        if path.exists():
            old = path.with_name(f".{path.name}.old")
            if old.exists():
                shutil.rmtree(old)
            os.replace(path, old)
            os.replace(tmp, path)
            shutil.rmtree(old)
        else:
            os.replace(tmp, path)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)


def write_text(path: str | os.PathLike, text: str) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")


def write_bytes(path: str | os.PathLike, data: bytes) -> None:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)


def write_json(path: str | os.PathLike, obj: Any) -> None:
    """Canonical JSON (sorted keys, 2-space indent, trailing newline): same object -> same bytes."""
    write_text(path, json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n")


def read_json(path: str | os.PathLike) -> Any:
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)


def write_parquet(path: str | os.PathLike, table_or_df) -> None:
    """Write a pandas DataFrame or pyarrow Table as Parquet, atomically and reproducibly.

    Parquet is the one on-disk format of the pipeline: typed columns (list<string> for queries and
    sentences), compression, column pruning on read, and pandas/pyarrow/DuckDB all read it.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = (
        table_or_df if isinstance(table_or_df, pa.Table) else pa.Table.from_pandas(table_or_df, preserve_index=False)
    )
    # Drop pandas metadata so identical data gives identical bytes whatever index pandas had.
    table = table.replace_schema_metadata(None)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression="zstd", write_statistics=True)


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None):
    import pandas as pd

    return pd.read_parquet(path, columns=columns)


def sha256_file(path: str | os.PathLike, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def stable_id(*parts: str, length: int = 16) -> str:
    """Short content-derived id (sha1 of the parts joined by U+001F)."""
    return hashlib.sha1("\x1f".join(parts).encode("utf-8")).hexdigest()[:length]
