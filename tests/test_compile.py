"""``model.compile`` (``TrainSettings.compile``, docs/gpu.md): the scorer compiled in place with torch.compile
trains as the eager one does, stops and resumes from ``last/``, and its checkpoint has the eager model's keys (no
``_orig_mod.``) and loads with :func:`wikiref.model.load_scorer`.

The compiled runs use the ``aot_eager`` backend: dynamo's graph capture (dynamic shapes) and AOTAutograd's
forward and backward graphs, without inductor's C++ code generation (about a minute for this tiny encoder on two
cores); inductor itself is measured on the GPU by ``bench/train_gpu.py`` (modes ``real-compiled``,
``bare-compiled``). The encoder and data are ``scripts/gpu-check``'s (a tiny random BERT, synthetic documents)."""

from __future__ import annotations

import dataclasses
import math

import pytest
import torch
from safetensors import safe_open
from test_finetune import _optimisation
from training_stop import TrainingInterrupted, stop_after_epochs

from wikiref.model import load_scorer
from wikiref.model.checkpoint import LAST_DIR, STATE_JSON
from wikiref.model.training import TrainSettings, train

BACKEND = "aot_eager"


@pytest.fixture(scope="module")
def gc(load_bench):
    return load_bench("train_gpu").gpu_check_module()


@pytest.fixture
def dynamo():
    """A clean dynamo cache and counters for the test, and none left for the next one."""
    torch._dynamo.reset()
    torch._dynamo.utils.counters.clear()
    yield torch._dynamo.utils.counters
    torch._dynamo.reset()


def _settings(**kw) -> TrainSettings:
    base = dict(epochs=2, batch_size=4, lr=1e-3, seed=5, device="cpu", amp=False, progress=False, eval_batch_size=8)
    return TrainSettings(**{**base, **kw})


@pytest.mark.slow
def test_compiled_scorer_trains_resumes_and_saves_like_the_eager_one(gc, dynamo, tmp_path):
    data = gc.Data(seed=13)
    encoder = gc.encoder_dir(tmp_path, "tiny", data)
    train_ex, dev_ex = data.scoring(12, 6, "classification"), data.scoring(4, 6, "classification")

    def scorer():  # the same seeded weights on every call
        return gc.scorer(None, "classification", "query", encoder=encoder, max_length=64)

    model, tok = scorer()
    eager = train(model, tok, train_ex, dev_ex, _settings(), tmp_path / "eager")
    eager_keys = set(model.state_dict())
    assert dynamo["stats"]["unique_graphs"] == 0

    settings = _settings(compile=True, compile_backend=BACKEND)
    out = tmp_path / "compiled"
    model, tok = scorer()
    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        train(model, tok, train_ex, dev_ex, settings, out)
    assert (out / LAST_DIR / STATE_JSON).exists()
    model, tok = scorer()  # a fresh model resumes from the compiled run's last/
    compiled = train(model, tok, train_ex, dev_ex, settings, out)
    assert compiled.resumed_from_epoch == 1

    # it was compiled, once: dynamic shapes, so no graph per padded length (the batches here have several); dev
    # scoring runs eagerly; the resumed run's fresh model reused the graph
    assert dynamo["stats"]["unique_graphs"] == 1, dict(dynamo["stats"])
    for e, c in zip(eager.history, compiled.history, strict=True):
        assert math.isclose(c["train_loss"], e["train_loss"], rel_tol=1e-4), (c, e)
        assert math.isclose(c["dev_loss"], e["dev_loss"], rel_tol=1e-4), (c, e)
    assert compiled.best_epoch == eager.best_epoch

    # in-place compilation: the same state_dict keys, in the model and in the saved file; it loads uncompiled
    assert set(model.state_dict()) == eager_keys
    with safe_open(str(out / "model.safetensors"), "pt") as fh:
        assert set(fh.keys()) == eager_keys
    loaded, _ = load_scorer(out)
    assert set(loaded.state_dict()) == eager_keys
    if compiled.best_epoch == 2:  # the model in memory is the best epoch's
        for k, v in model.state_dict().items():
            assert torch.equal(loaded.state_dict()[k], v), k


def test_compile_is_read_from_params_and_left_out_of_the_fingerprint():
    section = dict(_optimisation(), epochs=1, bucket_batches=2)  # the finetune section's training keys
    model = dict(device="cpu", amp=False, eval_batch_size=8)
    off = TrainSettings.from_params(1, model, section)  # absent (the abstractive jobs' model keys): off
    on = TrainSettings.from_params(1, {**model, "compile": True}, section)
    assert (off.compile, on.compile) == (False, True)
    assert TrainSettings.from_params(1, {**model, "compile": False}, section) == off
    assert on.fingerprint_dict() == off.fingerprint_dict()  # last/ of either resumes the other
    assert not {"compile", "compile_backend"} & set(off.fingerprint_dict())


@pytest.mark.slow
def test_a_compiled_bi_scorer_compiles_its_encoder_once_whatever_the_length_buckets(gc, dynamo, tmp_path):
    """The bi pairing's forward loops over its batch's length buckets (plain ints that change every batch): its
    encoder is what is compiled, so the buckets cost no recompilation; training matches the eager run."""
    data = gc.Data(seed=17)
    encoder = gc.encoder_dir(tmp_path, "tiny", data)

    def varied(examples):  # sentences repeated 1-7 times: 10-130 tokens, so batches have 1 to 6 length buckets
        return [
            dataclasses.replace(e, sentences=[" ".join([s] * (1 + (i + j) % 7)) for j, s in enumerate(e.sentences)])
            for i, e in enumerate(examples)
        ]

    train_ex, dev_ex = varied(data.scoring(12, 6, "regression")), varied(data.scoring(4, 6, "regression"))

    def scorer():
        return gc.scorer(None, "regression", "mean", encoder=encoder, pairing="bi", loss="pairwise")

    model, tok = scorer()
    eager = train(model, tok, train_ex, dev_ex, _settings(), tmp_path / "eager")
    model, tok = scorer()
    compiled = train(model, tok, train_ex, dev_ex, _settings(compile=True, compile_backend=BACKEND), tmp_path / "c")
    # dynamic shapes: one graph, and one more for a dimension of size 1 (a bucket of one sentence, say)
    assert 1 <= dynamo["stats"]["unique_graphs"] <= 2, dict(dynamo["stats"])
    for e, c in zip(eager.history, compiled.history, strict=True):
        assert math.isclose(c["train_loss"], e["train_loss"], rel_tol=1e-4), (c, e)
        assert math.isclose(c["dev_loss"], e["dev_loss"], rel_tol=1e-4), (c, e)


@pytest.mark.slow
def test_a_compiled_scorer_compiles_one_graph_under_bf16_autocast(gc, dynamo, tmp_path, monkeypatch):
    """On CUDA the loop trains under bf16 autocast (``model.amp``), which the CPU runs never enter
    (``autocast_context`` is a no-op off CUDA). Here the loop's autocast is CPU bf16, the nearest this machine has:
    the casts autocast inserts must not specialise a dimension either (one graph over every padded length and
    sentence count, query pooling), and the losses stay finite and close to the float32 run's."""
    import contextlib

    from wikiref.model import training
    from wikiref.model.scoring_task import pack_examples

    data = gc.Data(seed=13)
    encoder = gc.encoder_dir(tmp_path, "tiny", data)
    train_ex, dev_ex = data.scoring(16, 6, "classification"), data.scoring(4, 6, "classification")

    def scorer():
        return gc.scorer(None, "classification", "query", encoder=encoder, max_length=64)

    model, tok = scorer()
    fp32 = train(model, tok, train_ex, dev_ex, _settings(), tmp_path / "fp32")

    def cpu_bf16(device, amp):
        return torch.autocast("cpu", dtype=torch.bfloat16) if amp else contextlib.nullcontext()

    monkeypatch.setattr(training, "autocast_context", cpu_bf16)
    model, tok = scorer()
    settings = _settings(amp=True, compile=True, compile_backend=BACKEND)
    bf16 = train(model, tok, train_ex, dev_ex, settings, tmp_path / "bf16")
    assert dynamo["stats"]["unique_graphs"] == 1, dict(dynamo["stats"])
    assert len({len(w) for w in pack_examples(model.config, tok, train_ex)[0]}) > 1  # several lengths
    for a, b in zip(fp32.history, bf16.history, strict=True):
        assert math.isfinite(b["train_loss"]) and math.isclose(b["train_loss"], a["train_loss"], rel_tol=0.05), (a, b)


@pytest.mark.slow
def test_cudagraphs_compiles_the_encoder_alone_over_batches_padded_to_64(gc, dynamo, tmp_path, monkeypatch):
    """``model.compile: cudagraphs``: the encoder alone is compiled (its inputs' shapes come from a small set: each
    is a CUDA graph on CUDA), the pooling and head stay eager, training batches are padded to a multiple of 64 (not
    past ``max_length``), every forward pass starts a new graph iteration, and training gives the losses of the
    eager loop over the same padded batches. The graphs themselves exist only on CUDA (bench/train_gpu.py's
    ``real-cudagraphs`` mode); here the mode compiles as on the GPU, without them."""
    from wikiref.model import scoring_task, training

    data = gc.Data(seed=13)
    encoder = gc.encoder_dir(tmp_path, "tiny", data)
    # documents of 6 sentences fill their windows (96 tokens), those of 1 sentence do not (under 64)
    train_ex = data.scoring(10, 6, "classification") + data.scoring(6, 1, "classification")
    dev_ex = data.scoring(4, 6, "classification")

    def scorer():
        return gc.scorer(None, "classification", "query", encoder=encoder, max_length=96)

    widths: list[int] = []
    collate = scoring_task.collate

    def recording_collate(*args, **kw):  # the training batches' widths (dev scoring collates without max_pad)
        batch = collate(*args, **kw)
        if "max_pad" in kw:
            widths.append(batch["input_ids"].shape[1])
        return batch

    monkeypatch.setattr(scoring_task, "collate", recording_collate)
    steps = [0]
    monkeypatch.setattr(torch.compiler, "cudagraph_mark_step_begin", lambda: steps.__setitem__(0, steps[0] + 1))

    model, tok = scorer()  # the eager loop over batches padded the same way
    eager = training.fit(
        model, scoring_task.ScorerTask(model, tok, train_ex, dev_ex, pad_multiple=64), _settings(), tmp_path / "e"
    )
    eager_widths, widths[:] = sorted(set(widths)), []
    assert steps[0] == 0

    model, tok = scorer()
    settings = _settings(compile="cudagraphs", compile_backend=BACKEND)
    graphed = train(model, tok, train_ex, dev_ex, settings, tmp_path / "g")
    assert model.encoder._compiled_call_impl is not None and model._compiled_call_impl is None
    assert model.pooler._compiled_call_impl is None
    assert sorted(set(widths)) == eager_widths and set(widths) <= {64, 96}, widths  # 96: max_length, not 128
    assert len(set(widths)) == 2  # the data has windows on both sides of 64
    assert steps[0] == graphed.history[-1]["global_step"]  # one per optimizer step
    # dynamic shapes: one graph, one more for a batch of one window (dynamo specialises sizes 1)
    assert 1 <= dynamo["stats"]["unique_graphs"] <= 2, dict(dynamo["stats"])
    for e, g in zip(eager.history, graphed.history, strict=True):
        assert math.isclose(g["train_loss"], e["train_loss"], rel_tol=1e-4), (g, e)
        assert math.isclose(g["dev_loss"], e["dev_loss"], rel_tol=1e-4), (g, e)

    # with gradient accumulation: one graph iteration per optimizer step (the micro-batches' gradients of a step
    # are recorded around each other on CUDA), not one per micro-batch
    steps[0], widths[:] = 0, []
    model, tok = scorer()
    accumulated = train(model, tok, train_ex, dev_ex, dataclasses.replace(settings, grad_accum_steps=3), tmp_path / "a")
    per_epoch = len(widths) // settings.epochs  # micro-batches
    assert steps[0] == accumulated.history[-1]["global_step"] == settings.epochs * math.ceil(per_epoch / 3) > 0


def test_cudagraphs_is_refused_for_the_bi_pairing_and_unknown_compile_values(gc, tmp_path):
    from wikiref.model.compiling import compile_setting

    data = gc.Data(seed=17)
    encoder = gc.encoder_dir(tmp_path, "tiny", data)
    model, tok = gc.scorer(None, "regression", "mean", encoder=encoder, pairing="bi", loss="pairwise")
    ex = data.scoring(4, 4, "regression")
    with pytest.raises(ValueError, match="cudagraphs needs a cross-pairing scorer"):
        train(model, tok, ex, ex, _settings(compile="cudagraphs", compile_backend=BACKEND), tmp_path / "bi")
    assert [compile_setting(v) for v in (False, True, "cudagraphs")] == [False, True, "cudagraphs"]
    for bad in ("yes", "reduce-overhead", 1, None):
        with pytest.raises(ValueError, match="model.compile must be false, true or 'cudagraphs'"):
            _settings(compile=bad)
    section = dict(_optimisation(), epochs=1, bucket_batches=2)
    model_keys = dict(device="cpu", amp=False, eval_batch_size=8)
    graphs = TrainSettings.from_params(1, {**model_keys, "compile": "cudagraphs"}, section)
    assert graphs.compile == "cudagraphs"
    assert graphs.fingerprint_dict() == TrainSettings.from_params(1, model_keys, section).fingerprint_dict()
