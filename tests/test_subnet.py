"""Sparse subnetwork fine-tuning (ST): masks, the freezing hooks under AdamW, gradual magnitude pruning."""

from __future__ import annotations

import pytest
import torch

from wikiref.model import ScorerConfig, build_scorer
from wikiref.model import subnetworks as subnet
from wikiref.model.training import TrainSettings, train
from wikiref.stages import pretrain as pt
from wikiref.supervised import pretraining as go

torch.set_num_threads(1)


def _model(seed=0, pooling="query"):
    torch.manual_seed(seed)
    return build_scorer(
        ScorerConfig(encoder="tiny-random", pooling=pooling, head="regression", max_length=48, stride=16, num_levels=4)
    )


@pytest.fixture(scope="module")
def data():
    tr = go.to_examples(pt.synthetic_oracle_frame(16, seed=1, prefix="tr"), "regression")
    dv = go.to_examples(pt.synthetic_oracle_frame(4, seed=2, prefix="dv"), "regression")
    return tr, dv


def _settings(**kw):
    # A high learning rate and weight decay: every unfrozen entry moves visibly.
    base = dict(
        epochs=1,
        batch_size=4,
        lr=5e-3,
        weight_decay=0.1,
        seed=3,
        progress=False,
        device="cpu",
        bucket_batches=2,
        max_grad_norm=1.0,
    )
    base.update(kw)
    return TrainSettings(**base)


# --------------------------------------------------------------------------- pure functions


def test_keep_count():
    assert subnet.keep_count(100, 0.1) == 10
    assert subnet.keep_count(10, 1 - 0.9) == 1  # binary noise of 1 - 0.9 does not lose an entry
    assert subnet.keep_count(15, 0.1) == 2  # 1.5 rounds half up
    assert subnet.keep_count(14, 0.1) == 1
    assert subnet.keep_count(3, 0.1) == 1  # never an empty tensor when fraction > 0
    assert subnet.keep_count(7, 0.0) == 0 and subnet.keep_count(7, 1.0) == 7 and subnet.keep_count(0, 0.5) == 0


def test_topk_mask_exact_count_and_deterministic_ties():
    w = torch.tensor([[0.5, -0.5, 0.1], [0.5, -2.0, 0.5]])
    m = subnet.topk_mask(w, 3)
    # |-2.0| first, then the 0.5s in flat-index order: (0,0) and (0,1); (1,0), (1,2) lose the tie.
    assert m.tolist() == [[True, True, False], [False, True, False]]
    assert int(subnet.topk_mask(torch.zeros(4, 5), 7).sum()) == 7
    assert subnet.topk_mask(torch.zeros(4, 5), 7).reshape(-1).tolist() == [True] * 7 + [False] * 13
    eligible = torch.tensor([[False, True, True], [True, False, True]])
    assert subnet.topk_mask(w, 2, eligible=eligible).tolist() == [[False, True, False], [True, False, False]]
    assert int(subnet.topk_mask(w, 10, eligible=eligible).sum()) == 4  # capped at the eligible entries


def test_magnitude_masks_cover_encoder_layers_only_with_exact_fractions():
    model, _ = _model()
    masks = subnet.magnitude_masks(model, 0.1)
    names = [n for n, _ in model.named_parameters()]
    assert set(masks) == {n for n in names if n.startswith("encoder.encoder.layer.")}
    assert not any("embeddings" in n or n.startswith(("head.", "pooler.")) for n in masks)
    assert subnet.check_fractions(masks, 0.1) == []
    params = dict(model.named_parameters())
    for name, m in masks.items():
        p = params[name].detach().abs().reshape(-1)
        kept, dropped = p[m.reshape(-1)], p[~m.reshape(-1)]
        assert m.dtype == torch.bool and m.shape == params[name].shape
        if dropped.numel():
            assert kept.min() >= dropped.max()  # the largest magnitudes are the ones kept
    stats = subnet.mask_stats(model, masks)
    assert stats["masked_trainable"] == sum(subnet.keep_count(m.numel(), 0.1) for m in masks.values())
    assert 0.099 < stats["masked_trainable_fraction"] < 0.11
    frozen_vectors = subnet.magnitude_masks(model, 0.1, vectors="frozen")
    assert all(not m.any() for n, m in frozen_vectors.items() if params[n].ndim == 1)
    with pytest.raises(ValueError):
        subnet.magnitude_masks(model, 1.5)


def test_masks_round_trip(tmp_path):
    model, _ = _model()
    masks = subnet.magnitude_masks(model, 0.25)
    subnet.save_masks(tmp_path / "m.safetensors", masks, {"fraction": "0.25"})
    back = subnet.load_masks(tmp_path / "m.safetensors")
    assert set(back) == set(masks) and all(torch.equal(back[n], masks[n]) for n in masks)


# --------------------------------------------------------------------------- freezing under AdamW


def _snapshot(model):
    return {n: p.detach().clone() for n, p in model.named_parameters()}


def test_masked_entries_do_not_move_under_adamw_with_weight_decay(tmp_path, data):
    model, tok = _model()
    masks = subnet.magnitude_masks(model, 0.1)
    before = _snapshot(model)
    gm = subnet.GradientMask(model, masks)
    train(model, tok, *data, _settings(), tmp_path / "st", **gm.hooks())
    after = _snapshot(model)
    moved_trainable = 0
    for name, m in masks.items():
        assert torch.equal(after[name][~m], before[name][~m]), f"frozen entries of {name} moved"
        moved_trainable += int((after[name][m] != before[name][m]).sum())
    assert moved_trainable > 0.5 * sum(int(m.sum()) for m in masks.values())
    # Embeddings, pooling and head are fully trainable and did learn.
    assert not torch.equal(
        after["encoder.embeddings.word_embeddings.weight"], before["encoder.embeddings.word_embeddings.weight"]
    )
    assert not torch.equal(after["head.weight"], before["head.weight"])
    assert not torch.equal(after["pooler.w_q"], before["pooler.w_q"])
    # The saved best checkpoint has the same frozen entries.
    from wikiref.model import load_scorer

    saved, _ = load_scorer(tmp_path / "st")
    sp = dict(saved.named_parameters())
    assert all(torch.equal(sp[n].detach()[~m], before[n][~m]) for n, m in masks.items())


def test_gradient_masking_alone_is_not_enough_with_weight_decay(tmp_path, data):
    """Why the step hook exists: AdamW's decoupled weight decay moves masked matrix entries."""
    model, tok = _model()
    masks = subnet.magnitude_masks(model, 0.1)
    before = _snapshot(model)
    gm = subnet.GradientMask(model, masks)
    train(model, tok, *data, _settings(), tmp_path / "grad-only", grad_hook=gm.grad_hook)
    after = _snapshot(model)
    name = next(n for n in masks if before[n].ndim == 2)
    assert not torch.equal(after[name][~masks[name]], before[name][~masks[name]])


# --------------------------------------------------------------------------- Zhu & Gupta schedule


def test_cubic_schedule_hand_checked():
    s = subnet.PruningSchedule(final_sparsity=0.9, begin_step=10, n_steps=4, frequency=5)
    # s_t = 0.9 + (0 - 0.9) (1 - k/4)^3 at t = 10 + 5k
    expected = {
        0: 0.0,
        9: 0.0,
        10: 0.0,
        14: 0.0,
        15: 0.5203125,
        17: 0.5203125,
        20: 0.7875,
        25: 0.8859375,
        30: 0.9,
        31: 0.9,
        1000: 0.9,
    }
    for t, v in expected.items():
        assert s.sparsity(t) == pytest.approx(v, abs=1e-12), t
    assert [t for t in range(40) if s.is_pruning_step(t)] == [10, 15, 20, 25, 30]
    assert s.end_step == 30
    s2 = subnet.PruningSchedule(final_sparsity=0.5, initial_sparsity=0.2, begin_step=0, n_steps=2, frequency=1)
    assert [s2.sparsity(t) for t in range(4)] == pytest.approx([0.2, 0.5 - 0.3 * 0.125, 0.5, 0.5])
    one_shot = subnet.PruningSchedule(final_sparsity=0.9, begin_step=3, n_steps=0)
    assert [one_shot.sparsity(t) for t in (2, 3, 4)] == [0.0, 0.9, 0.9]
    with pytest.raises(ValueError):
        subnet.PruningSchedule(final_sparsity=0.3, initial_sparsity=0.5)
    f = subnet.schedule_from_fractions(100, 0.9, begin=0.0, end=0.5, frequency=10)
    assert (f.begin_step, f.end_step, f.n_steps) == (0, 40, 4)


@pytest.mark.slow
def test_gradual_pruning_during_training(tmp_path, data):
    model, tok = _model()
    settings = _settings(epochs=2, batch_size=2)
    sched = subnet.PruningSchedule(final_sparsity=0.9, begin_step=1, n_steps=3, frequency=2)
    pruner = subnet.MagnitudePruner(model, sched)
    history_masks = []
    hooks = pruner.hooks()

    def step_hook(m):
        hooks["step_hook"](m)
        history_masks.append({n: x.clone() for n, x in pruner.masks.items()})

    train(model, tok, *data, settings, tmp_path / "gmp", grad_hook=hooks["grad_hook"], step_hook=step_hook)
    assert pruner.done and pruner.step > sched.end_step
    # t0 = 1 is a pruning step at s_i = 0 (nothing to prune); then 3, 5, 7.
    assert [h["step"] for h in pruner.history] == [3, 5, 7]
    assert [h["sparsity"] for h in pruner.history] == pytest.approx([sched.sparsity(t) for t in (3, 5, 7)])
    assert subnet.check_fractions(pruner.masks, 0.1) == []
    params = dict(model.named_parameters())
    for name, m in pruner.masks.items():
        assert torch.count_nonzero(params[name].detach()[~m]) == 0  # pruned entries are zero
    for prev, nxt in zip(history_masks, history_masks[1:]):
        for name in prev:
            assert not (nxt[name] & ~prev[name]).any(), "a pruned entry came back"
    # Fine-tuning the surviving subnetwork afterwards keeps the pruned entries at zero.
    gm = subnet.GradientMask(model, pruner.masks)
    train(model, tok, *data, _settings(seed=4), tmp_path / "ft", **gm.hooks())
    params = dict(model.named_parameters())
    assert all(torch.count_nonzero(params[n].detach()[~m]) == 0 for n, m in pruner.masks.items())
