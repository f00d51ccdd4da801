"""The training loop: batching, schedule, learning, determinism, resuming, hooks, dvclive."""

from __future__ import annotations

import pickle

import pytest
import torch
from safetensors.torch import load_file
from training_stop import TrainingInterrupted, stop_after_epochs

from wikiref.model import ScorerConfig, build_scorer, load_scorer, score_sentences
from wikiref.model.optim import lr_factor, param_groups
from wikiref.model.packing import PackedWindow
from wikiref.model.training import TrainSettings, epoch_batches, train
from wikiref.stages import pretrain as pt
from wikiref.supervised import pretraining as go

torch.set_num_threads(1)


def _config(**kw):
    base = {
        "encoder": "tiny-random",
        "pooling": "query",
        "head": "classification",
        "max_length": 48,
        "stride": 16,
        "num_levels": 4,
    }
    base.update(kw)
    return ScorerConfig(**base)


def _settings(**kw):
    base = {
        "epochs": 2,
        "batch_size": 4,
        "lr": 2e-3,
        "seed": 7,
        "progress": False,
        "device": "cpu",
        "bucket_batches": 2,
    }
    base.update(kw)
    return TrainSettings(**base)


@pytest.fixture(scope="module")
def data():
    train_df = pt.synthetic_oracle_frame(24, seed=1, prefix="tr")
    dev_df = pt.synthetic_oracle_frame(8, seed=2, prefix="dv")
    return go.to_examples(train_df, "classification"), go.to_examples(dev_df, "classification")


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
    assert all(
        not names[id(p)].startswith(("pooler.", "head.")) for g in groups if g["lr_scale"] == 1.0 for p in g["params"]
    )
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


@pytest.mark.slow
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
    from wikiref.model.scoring_task import pack_examples, predict

    windows, _ = pack_examples(loaded.config, tok2, dv)
    _, dev_loss = predict(
        loaded,
        windows,
        [len(e.sentences) for e in dv],
        [e.targets for e in dv],
        batch_size=8,
        device=torch.device("cpu"),
        amp=False,
        pad_id=0,
    )
    assert dev_loss == pytest.approx(best["dev_loss"], rel=1e-5)
    # dvclive: metrics for `dvc plots show`
    assert (live / "metrics.json").exists()
    assert (live / "plots" / "metrics" / "dev" / "loss.tsv").exists()
    rows = (live / "plots" / "metrics" / "train" / "loss.tsv").read_text().split()
    assert rows[:2] == ["step", "loss"] and rows[2] == "10"  # x axis = optimizer steps, every log_every_steps


@pytest.mark.slow
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


@pytest.mark.slow
def test_resume_after_interruption_gives_the_same_model(data, tmp_path, monkeypatch):
    tr, dv = data
    settings = _settings(epochs=2, keep_last=True)
    model, tok = _fresh()
    full = train(model, tok, tr, dv, settings, tmp_path / "full")

    model, tok = _fresh()
    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        train(model, tok, tr, dv, settings, tmp_path / "cut")
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


@pytest.mark.slow
def test_changed_settings_do_not_resume(data, tmp_path):
    tr, dv = data
    model, tok = _fresh()
    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        train(model, tok, tr, dv, _settings(epochs=2), tmp_path / "m")
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

    res = train(
        model,
        tok,
        tr[:12],
        dv,
        _settings(epochs=1, grad_accum_steps=2, weight_decay=0.0),
        tmp_path / "m",
        grad_hook=grad_hook,
    )
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


def _closed_form_lr(step: int, total: int, warmup: int, lr: float, scale: float) -> float:
    """The schedule written out: linear warm-up over the first ``warmup`` steps, then linear decay towards 0 at
    ``total``; lr x scale for the task groups. The float64 products in the order the hand-written loop used
    (lr * factor * scale), so the learning rates must match bit for bit."""
    factor = (step + 1) / warmup if step < warmup else (total - step) / (total - warmup)
    return lr * factor * scale


@pytest.mark.slow
def test_lr_at_every_step_is_the_closed_form_and_resuming_changes_nothing(data, tmp_path, monkeypatch):
    """Warm-up, head_lr_scale and gradient accumulation together: the lr of every group at every optimizer
    step equals the closed form (2e-3 x 10 rounds differently from 2e-3 x factor x 10 at about a quarter of the
    steps, so an lr_scale folded into the base lr fails this), and a run cut after epoch 1 and resumed, from a
    ``last/`` in today's format or in the one written before the LambdaLR schedule, takes the same steps at the
    same learning rates to the same bytes."""
    import json
    import math
    import shutil

    tr, dv = data
    settings = _settings(epochs=2, grad_accum_steps=2, warmup_ratio=0.3, head_lr_scale=10.0, keep_last=True)
    seen: list[list[tuple[float, float]]] = []
    adamw_step = torch.optim.AdamW.step

    def recording_step(self, *a, **k):
        seen.append([(g["lr"], g["lr_scale"]) for g in self.param_groups])
        return adamw_step(self, *a, **k)

    monkeypatch.setattr(torch.optim.AdamW, "step", recording_step)

    model, tok = _fresh()
    full = train(model, tok, tr, dv, settings, tmp_path / "full")
    full_lrs, seen[:] = list(seen), []
    batches = -(-full.pack_stats["windows"] // settings.batch_size)
    total = settings.epochs * -(-batches // settings.grad_accum_steps)
    warmup = math.floor(settings.warmup_ratio * total)
    assert len(full_lrs) == total and warmup >= 2
    assert [[s for _, s in step] for step in full_lrs] == [[1.0, 1.0, 10.0, 10.0]] * total
    expected = [[_closed_form_lr(k, total, warmup, settings.lr, s) for _, s in step] for k, step in enumerate(full_lrs)]
    assert [[lr for lr, _ in step] for step in full_lrs] == expected  # exact float equality
    assert expected[warmup - 1][0] == expected[warmup][0] == settings.lr and expected[0][0] == settings.lr / warmup

    model, tok = _fresh()
    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        train(model, tok, tr, dv, settings, tmp_path / "cut")
    cut_lrs, seen[:] = list(seen), []
    assert cut_lrs == full_lrs[: total // 2]
    # the same checkpoint as the code before LambdaLR wrote it: no initial_lr, lr = the last step's
    shutil.copytree(tmp_path / "cut", tmp_path / "cut_old")
    state_file = tmp_path / "cut_old" / "last" / "state.json"
    state = json.loads(state_file.read_text())
    for g, (lr, _) in zip(state["param_groups"], cut_lrs[-1]):
        assert g.pop("initial_lr") == g["lr_scale"]
        g["lr"] = lr
    state_file.write_text(json.dumps(state))

    for run in ("cut", "cut_old"):
        model, tok = _fresh(seed=99)  # different init: everything must come from the checkpoint
        resumed = train(model, tok, tr, dv, settings, tmp_path / run)
        assert resumed.resumed_from_epoch == 1
        assert cut_lrs + seen == full_lrs
        seen[:] = []
        assert resumed.history == full.history
        for name in ("model.safetensors", "last/model.safetensors", "last/state.safetensors"):
            assert (tmp_path / run / name).read_bytes() == (tmp_path / "full" / name).read_bytes(), (run, name)


def test_make_scheduler_set_for_a_step_count(data):
    """The scheduler built for ``done_steps`` gives the lr of that step at once, then follows the schedule."""
    from wikiref.model.optim import make_scheduler

    model, _ = _fresh()
    opt = torch.optim.AdamW(param_groups(model, 0.01, head_lr_scale=10.0), lr=1.0)
    lr, total, warmup = 3e-5, 23, 4
    for done in (0, 2, 4, 17):
        sched = make_scheduler(opt, lr, total, warmup, done_steps=done)
        for k in range(done, total):
            assert [g["lr"] for g in opt.param_groups] == [
                _closed_form_lr(k, total, warmup, lr, g["lr_scale"]) for g in opt.param_groups
            ]
            opt.step()
            sched.step()
        assert [g["lr"] for g in opt.param_groups] == [0.0] * len(opt.param_groups)


def test_dvclive_writes_its_files_and_leaves_the_repository_alone(tmp_path, monkeypatch):
    """A training job's dvclive neither reads nor initialises the enclosing Git/DVC repository (stock Live runs
    `dvc init` in a Git repository without DVC); it writes under its own folder only."""
    import subprocess

    from wikiref.model.training import _files_only_live

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    monkeypatch.chdir(tmp_path)
    live = _files_only_live()(dir="live", save_dvc_exp=False, dvcyaml=False)
    live.log_metric("loss", 1.0)
    live.next_step()
    live.end()
    assert (tmp_path / "live" / "metrics.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "live"]
