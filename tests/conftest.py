"""Shared pytest fixtures."""

from __future__ import annotations

import os
import subprocess
import sys
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
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    return env


@pytest.fixture(scope="session")
def snakemake(repo, subprocess_env):
    """Run this venv's `snakemake` on the repo's Snakefile in a work directory:
    ``snakemake(workdir, *args, timeout=...)`` -> the completed process (output captured as text)."""

    def run(workdir: Path, *args: str, timeout: float) -> subprocess.CompletedProcess:
        cmd = [
            str(Path(sys.executable).parent / "snakemake"),
            "-s",
            str(repo / "Snakefile"),
            "--directory",
            str(workdir),
            *args,
        ]
        return subprocess.run(cmd, capture_output=True, text=True, env=subprocess_env, timeout=timeout)

    return run


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
