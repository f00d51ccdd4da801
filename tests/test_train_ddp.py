"""Data-parallel training: 2 CPU processes (gloo) under torchrun stay in sync; a process group of one formed by
the caller trains through DistributedDataParallel to the same weights as a run without it (the path
scripts/gpu-check's ``ddp/one-process`` job takes with NCCL on one GPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

WORKER = textwrap.dedent(
    """
    import hashlib, json, os, sys
    import torch
    torch.set_num_threads(1)
    from wikiref.supervised.pretraining import to_examples
    from wikiref.stages import pretrain as pt
    from wikiref.model import ScorerConfig, build_scorer
    from wikiref.model.training import TrainSettings, train

    out = sys.argv[1]
    tr = to_examples(pt.synthetic_oracle_frame(16, seed=1, prefix="tr"), "classification")
    dv = to_examples(pt.synthetic_oracle_frame(4, seed=2, prefix="dv"), "classification")
    torch.manual_seed(0)
    model, tok = build_scorer(ScorerConfig(encoder="tiny-random", pooling="query", max_length=48, stride=16, num_levels=4))
    rank = int(os.environ["RANK"])
    if rank == 1:  # start out of sync on purpose: DDP must broadcast rank 0's weights
        with torch.no_grad():
            model.head.weight.add_(1.0)
    res = train(model, tok, tr, dv, TrainSettings(epochs=2, batch_size=2, lr=1e-3, seed=3, progress=False,
                                                   device="cpu"), out)
    h = hashlib.sha256()
    for name, p in sorted(model.state_dict().items()):
        h.update(name.encode()); h.update(p.detach().cpu().numpy().tobytes())
    with open(os.path.join(out, f"rank{rank}.json"), "w") as fh:
        json.dump({"digest": h.hexdigest(), "world": res.world_size, "steps": res.history[-1]["global_step"]
                   if res.history else None, "windows": res.pack_stats["windows"]}, fh)
    """
)


@pytest.mark.slow
def test_two_gloo_processes_stay_in_sync(tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    out = tmp_path / "out"
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", str(script), str(out)]
    res = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    r0 = json.loads((out / "rank0.json").read_text())
    r1 = json.loads((out / "rank1.json").read_text())
    assert r0["world"] == r1["world"] == 2
    assert r0["digest"] == r1["digest"]
    # each rank took half of the batches: rank 0 logged ceil(windows / 2 / batch) steps per epoch
    assert r0["steps"] == 2 * ((r0["windows"] + 1) // 2 // 2)
    assert (out / "model.safetensors").exists() and (out / "training.json").exists()


def _tiny_run(out, seed=3):
    import torch

    from wikiref.model import ScorerConfig, build_scorer
    from wikiref.model.training import TrainSettings, train
    from wikiref.stages import pretrain as pt
    from wikiref.supervised.pretraining import to_examples

    tr = to_examples(pt.synthetic_oracle_frame(8, seed=1, prefix="tr"), "classification")
    dv = to_examples(pt.synthetic_oracle_frame(2, seed=2, prefix="dv"), "classification")
    torch.manual_seed(0)
    model, tok = build_scorer(ScorerConfig(encoder="tiny-random", pooling="query", max_length=48, stride=16))
    settings = TrainSettings(epochs=2, batch_size=2, lr=1e-3, seed=seed, progress=False, device="cpu")
    res = train(model, tok, tr, dv, settings, out)
    return res, {k: v.detach().clone() for k, v in model.state_dict().items()}


@pytest.mark.slow
def test_a_process_group_of_one_trains_through_ddp_like_a_plain_run(tmp_path, monkeypatch):
    import torch
    import torch.distributed as dist

    from wikiref.model import training

    wrapped = []

    class Spy(torch.nn.parallel.DistributedDataParallel):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            wrapped.append(self)

    plain, plain_weights = _tiny_run(tmp_path / "plain")
    assert not training.in_process_group()
    monkeypatch.setattr(torch.nn.parallel, "DistributedDataParallel", Spy)
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'store'}", rank=0, world_size=1)
    try:
        assert training.in_process_group()
        grouped, grouped_weights = _tiny_run(tmp_path / "grouped")
    finally:
        dist.destroy_process_group()
    assert len(wrapped) == 1 and grouped.world_size == 1
    assert [h["train_loss"] for h in grouped.history] == [h["train_loss"] for h in plain.history]
    for name, w in plain_weights.items():
        torch.testing.assert_close(grouped_weights[name], w, rtol=1e-6, atol=1e-7, msg=name)
    assert (tmp_path / "grouped" / "model.safetensors").exists()
