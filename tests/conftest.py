"""Shared pytest fixtures."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = Path(os.environ.get("WIKIREF_SHARED_DATA", REPO.parent / "shared" / "data"))

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def subprocess_env() -> dict:
    """Environment for tests that run `snakemake` / `wikiref` as subprocesses: this venv's bin
    first on PATH, offline model hub."""
    import sys

    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data when present; tests using it skip cleanly otherwise."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def cloze_examples(shared_data):
    """25 real WikiRef-style examples (WikiCite / Summary Cloze, Apache-2.0) from ../shared/data."""
    import json

    path = shared_data / "wikicite-sample" / "cloze.jsonl"
    if not path.exists():
        pytest.skip(f"{path} missing")
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]
