"""bench/workflow_cost.py --rates: the paper grid's GPU rate read from scripts/gpu-check's rates file."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def bench(load_bench):
    return load_bench("workflow_cost")


def test_gpu_rate_from_the_rates_file(bench, tmp_path):
    path = tmp_path / "rates.json"
    path.write_text(json.dumps({"device": "NVIDIA H100", "finetune_windows_per_second_bert-base": 1234.5}))
    assert bench.gpu_rate_from(path, "finetune_windows_per_second_bert-base") == 1234.5
    with pytest.raises(SystemExit, match="finetune_windows_per_second_minilm"):
        bench.gpu_rate_from(path, "finetune_windows_per_second_minilm")
