"""The training loop: batching, schedule, learning, determinism, resuming, hooks, dvclive."""

from __future__ import annotations

import pickle

import pytest
import torch
from safetensors.torch import load_file

from wikiref.stages import pretrain as pt
from wikiref.model import ScorerConfig, build_scorer, load_scorer, score_sentences
from wikiref.model.packing import PackedWindow
from wikiref.model.training import (
    TrainingInterrupted,
    TrainSettings,
    epoch_batches,
    lr_factor,
    param_groups,
    train,
)

torch.set_num_threads(1)


def _config(**kw):
    base = dict(encoder="tiny-random", pooling="query", head="classification", max_length=48, stride=16, num_levels=4)
    base.update(kw)
    return ScorerConfig(**base)


def _settings(**kw):
    base = dict(epochs=2, batch_size=4, lr=2e-3, seed=7, progress=False, device="cpu", bucket_batches=2)
    base.update(kw)
    return TrainSettings(**base)


@pytest.fixture(scope="module")
def data():
    train_df = pt.synthetic_oracle_frame(24, seed=1, prefix="tr")
    dev_df = pt.synthetic_oracle_frame(8, seed=2, prefix="dv")
    return pt.to_examples(train_df, "classification"), pt.to_examples(dev_df, "classification")


def _fresh(seed=0, **kw):
    torch.manual_seed(seed)
    return build_scorer(_config(**kw))


def test_epoch_batches_cover_everything_once_sorted_within_buckets():
    windows = [PackedWindow(0, [1] * n, [0] * n, (0, 0)) for n in (5, 9, 3, 7, 2, 8, 6, 4, 1, 10)]
    b = epoch_batches(windows, batch_size=2, bucket_batches=2, seed=1, epoch=0)
    assert sorted(i for batch in b for i in batch) == list(range(10))
    assert all(len(windows[x[0]]) <= len(windows[x[-1]]) for x in b)
    assert b == epoch_batches(windows, 2, 2, seed=1, epoch=0)
    assert b != epoch_batches(windows, 2, 2, seed=1, epoch=1)


def test_lr_schedule_linear_warmup_and_decay():
    assert [lr_factor(s, 10, 0) for s in (0, 5, 9, 10)] == [1.0, 0.5, 0.1, 0.0]
    assert [lr_factor(s, 10, 2) for s in (0, 1, 2, 6)] == [0.5, 1.0, 1.0, 0.5]


def test_no_weight_decay_for_bias_and_layernorm():
    model, _ = _fresh()
    decay, no_decay = param_groups(model, 0.01)
    names = {id(p): n for n, p in model.named_parameters()}
    assert all("LayerNorm" in names[id(p)] or names[id(p)].endswith("bias") or p.ndim < 2 for p in no_decay["params"])
    assert any(names[id(p)].endswith("w_q") for p in decay["params"])
    assert decay["weight_decay"] == 0.01 and no_decay["weight_decay"] == 0.0


def test_head_lr_scale_gives_pooler_and_head_their_own_groups():
    model, _ = _fresh()
    assert len(param_groups(model, 0.01)) == 2  # one lr for everything: BERT's two groups
    groups = param_groups(model, 0.01, head_lr_scale=10.0)
    names = {id(p): n for n, p in model.named_parameters()}
    task = [g for g in groups if g["lr_scale"] == 10.0]
    assert sorted(names[id(p)] for g in task for p in g["params"]) == ["head.bias", "head.weight", "pooler.w_q"]
    assert all(not names[id(p)].startswith(("pooler.", "head.")) for g in groups if g["lr_scale"] == 1.0
               for p in g["params"])
    assert sum(len(g["params"]) for g in groups) == len(list(model.parameters()))


def test_head_lr_scale_is_applied_through_the_schedule(data, tmp_path):
    """Encoder lr ~0, task lr x 1e9: after training only the pooler and head have moved (AdamW steps
    are ~lr in size whatever the gradient), so the scale survives every scheduled lr update."""
    tr, dv = data
    model, tok = _fresh()
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    train(model, tok, tr, dv, _settings(epochs=1, lr=1e-12, head_lr_scale=1e9, weight_decay=0.0), tmp_path / "m")
    moved = {n: float((p.detach() - before[n]).abs().max()) for n, p in model.named_parameters()}
    assert max(v for n, v in moved.items() if not n.startswith(("pooler.", "head."))) < 1e-9
    assert moved["pooler.w_q"] > 1e-5 and moved["head.weight"] > 1e-5


def test_training_learns_and_saves_best_checkpoint(data, tmp_path):
    tr, dv = data
    model, tok = _fresh()
    live = tmp_path / "live"
    result = train(model, tok, tr, dv, _settings(epochs=3), tmp_path / "m", live_dir=live)
    losses = [h["train_loss"] for h in result.history]
    assert losses[-1] < losses[0]
    assert result.history[-1]["dev_loss"] < result.history[0]["dev_loss"]
    assert (tmp_path / "m" / "model.safetensors").exists() and (tmp_path / "m" / "training.json").exists()
    assert not (tmp_path / "m" / "last").exists()  # removed after a complete run
    best = min(result.history, key=lambda h: h["dev_loss"])
    assert result.best_epoch == best["epoch"]
    # the saved checkpoint is the best epoch's: its dev loss reproduces the recorded one
    loaded, tok2 = load_scorer(tmp_path / "m")
    from wikiref.model.training import pack_examples, predict

    windows, _ = pack_examples(loaded.config, tok2, dv)
    _, dev_loss = predict(loaded, windows, [len(e.sentences) for e in dv], [e.targets for e in dv],
                          batch_size=8, device=torch.device("cpu"), amp=False, pad_id=0)
    assert dev_loss == pytest.approx(best["dev_loss"], rel=1e-5)
    # dvclive: metrics for `dvc plots show`
    assert (live / "metrics.json").exists()
    assert (live / "plots" / "metrics" / "dev" / "loss.tsv").exists()
    rows = (live / "plots" / "metrics" / "train" / "loss.tsv").read_text().split()
    assert rows[:2] == ["step", "loss"] and rows[2] == "10"  # x axis = optimizer steps, every log_every_steps


def test_same_seed_same_weights_and_select_fn(data, tmp_path):
    tr, dv = data
    calls = []

    def select_fn(scores):
        calls.append(len(scores))
        return -len(calls)  # first epoch is best

    outs = []
    for run in ("a", "b"):
        model, tok = _fresh()
        res = train(model, tok, tr, dv, _settings(), tmp_path / run, select_fn=select_fn)
        outs.append(load_file(str(tmp_path / run / "model.safetensors")))
        assert res.best_epoch == 1
    assert calls == [8, 8, 8, 8]
    assert outs[0].keys() == outs[1].keys()
    assert all(torch.equal(outs[0][k], outs[1][k]) for k in outs[0])
    assert (tmp_path / "a" / "model.safetensors").read_bytes() == (tmp_path / "b" / "model.safetensors").read_bytes()


def test_resume_after_interruption_gives_the_same_model(data, tmp_path, monkeypatch):
    tr, dv = data
    settings = _settings(epochs=2, keep_last=True)
    model, tok = _fresh()
    full = train(model, tok, tr, dv, settings, tmp_path / "full")

    model, tok = _fresh()
    with pytest.raises(TrainingInterrupted):
        train(model, tok, tr, dv, settings, tmp_path / "cut", stop_after_epochs=1)
    assert (tmp_path / "cut" / "last" / "state.json").exists()

    def no_unpickling(*a, **k):
        raise AssertionError("resuming must not unpickle")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(torch, "load", no_unpickling)
    model, tok = _fresh(seed=99)  # different init: everything must come from the checkpoint
    resumed = train(model, tok, tr, dv, settings, tmp_path / "cut")
    assert resumed.resumed_from_epoch == 1
    assert [h["train_loss"] for h in resumed.history] == pytest.approx([h["train_loss"] for h in full.history])
    a = load_file(str(tmp_path / "full" / "last" / "model.safetensors"))
    b = load_file(str(tmp_path / "cut" / "last" / "model.safetensors"))
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_changed_settings_do_not_resume(data, tmp_path):
    tr, dv = data
    model, tok = _fresh()
    with pytest.raises(TrainingInterrupted):
        train(model, tok, tr, dv, _settings(epochs=2), tmp_path / "m", stop_after_epochs=1)
    model, tok = _fresh()
    res = train(model, tok, tr, dv, _settings(epochs=2, lr=1e-3), tmp_path / "m")
    assert res.resumed_from_epoch == 0


def test_grad_hook_masks_updates_and_accumulation_counts_steps(data, tmp_path):
    tr, dv = data
    model, tok = _fresh(pooling="cls", head="regression")
    frozen = model.encoder.encoder.layer[0].attention.self.query.weight
    before = frozen.detach().clone()
    steps = []

    def grad_hook(m):
        m.encoder.encoder.layer[0].attention.self.query.weight.grad.zero_()
        steps.append(1)

    res = train(model, tok, tr[:12], dv, _settings(epochs=1, grad_accum_steps=2, weight_decay=0.0), tmp_path / "m",
                grad_hook=grad_hook)
    n_batches = -(-res.pack_stats["windows"] // 4)
    assert len(steps) == -(-n_batches // 2)
    assert torch.equal(frozen.detach(), before)
    assert not torch.equal(model.head.weight.detach(), torch.zeros_like(model.head.weight))


def test_no_query_variant_and_regression_scores(data, tmp_path):
    tr, dv = data
    reg_tr = [type(e)(e.query, e.sentences, [t * 0.5 for t in e.targets], e.id) for e in tr]
    model, tok = _fresh(pooling="mean", head="regression", use_query=False)
    train(model, tok, reg_tr, dv, _settings(epochs=1), tmp_path / "m")
    scores = score_sentences(model, tok, [(e.query, e.sentences) for e in dv])
    assert [len(s) for s in scores] == [len(e.sentences) for e in dv]


def test_bad_targets_are_a_clear_error(data, tmp_path):
    tr, dv = data
    bad = [type(tr[0])(tr[0].query, tr[0].sentences, [1.0], "bad")]
    model, tok = _fresh()
    with pytest.raises(ValueError, match="one target per sentence"):
        train(model, tok, bad, dv, _settings(), tmp_path / "m")
