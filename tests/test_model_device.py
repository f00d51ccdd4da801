"""Device guards that run on CPU-only CI (issue 29): every model's forward, loss, backward, decoding and
save/load on an emulated accelerator (tests/emulated_device.py), where a tensor created on the CPU meeting the
model's tensors fails as it does on CUDA; and saving models whose weights share one storage the way cuDNN
flattens an RNN's weights on CUDA (the crash of ``abstractive train --run psg2sum-pgn`` on an H100).

The emulated runs compute on the CPU underneath, so their decoded ids must equal the CPU's, and their losses
and gradient norms too up to float rounding (under a dispatch mode some composite operators, e.g. ``linear``,
run as their decompositions, which round differently in the last bits).
"""

from __future__ import annotations

import pytest
import torch
from emulated_device import DeviceMismatch, assert_same_on_the_device, emulated_accelerator
from training_stop import TrainingInterrupted, stop_after_epochs

from wikiref.model import decoding, hiersumm, seq2seq
from wikiref.model.decoding import DecodeSettings
from wikiref.model.scorer import to_device
from wikiref.model.seq2seq import SPECIALS, Vocab

WORDS = "the river flows through city near old town bridge a is in of and north south big small".split()
SEQ_DATA = [
    ("the Zorblax river flows through the old city of Quimby".split(), "Zorblax flows through Quimby".split()),
    ("a big bridge near Ostrava is in the north".split(), "bridge near Ostrava".split()),
    ("north of the city the river flows".split(), "the river flows north".split()),
]
HIER_DATA = [
    ("where does the river flow".split(), ["the river flows north".split(), "a bridge".split()], "river".split()),
    ("what is near the town".split(), ["the small town is in the south".split()], "town in south".split()),
]
SEQ_VARIANTS = {"s2s": {}, "s2s+copy": {"copy": True}, "pgn": {"copy": True, "coverage": True}}
HIER_SWITCHES = ("decoder_local_global", "ordering", "query_encoder")
HIER_VARIANTS = {
    "baseline": {},
    **{k: {k: True} for k in HIER_SWITCHES},
    "joint": dict.fromkeys(HIER_SWITCHES, True),
}
DECODE = [DecodeSettings(beam=1), DecodeSettings(beam=3, min_length=2, block_trigrams=True, length_penalty=1.0)]


@pytest.fixture(autouse=True)
def _deterministic(torch_deterministic):
    """One thread, deterministic algorithms (conftest)."""


def vocab() -> Vocab:
    return Vocab([*SPECIALS, *WORDS])


def to(batch: dict, device) -> dict:
    return to_device(batch, device)  # as the package moves batches: tensors move, host facts stay


def spread(model: torch.nn.Module) -> torch.nn.Module:
    """Weights spread wider than the default init, so decoding does not stop at once."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, 1.5 / max(1, p.shape[-1]) ** 0.5)
    return model


def seq_model(variant: str, cell: str) -> tuple[seq2seq.Seq2Seq, dict]:
    cfg = seq2seq.Seq2SeqConfig(
        vocab_size=len(vocab()),
        embedding_size=16,
        hidden_size=32,
        max_target_length=8,
        cell=cell,
        **SEQ_VARIANTS[variant],
    )
    torch.manual_seed(0)
    model = spread(seq2seq.Seq2Seq(cfg))
    examples = [seq2seq.make_example(s, t, vocab(), cfg) for s, t in SEQ_DATA]
    return model, seq2seq.collate(examples, cfg.vocab_size)


def hier_model(variant: str) -> tuple[hiersumm.HierSumm, dict]:
    sizes = {"d_model": 32, "heads": 4, "ff_size": 64, "local_layers": 1, "global_layers": 1, "max_target_length": 8}
    cfg = hiersumm.HierSummConfig(vocab_size=len(vocab()), dropout=0.0, **sizes, **HIER_VARIANTS[variant])
    torch.manual_seed(0)
    model = spread(hiersumm.HierSumm(cfg))
    examples = [hiersumm.make_example(q, d, s, vocab(), cfg) for q, d, s in HIER_DATA]
    return model, hiersumm.collate(examples, cfg)


def run_model(model, batch, decode_fn, device) -> tuple[float, list[float], list[list[list[int]]]]:
    """Loss, gradient norms and decoded ids (greedy, beam) of ``model`` on ``batch`` on ``device``."""
    model = model.to(device).train()
    batch = to(batch, device)
    loss = model(batch).loss
    loss.backward()
    grads = [float(p.grad.norm()) for p in model.parameters() if p.grad is not None]
    model.eval()
    inputs = {k: v for k, v in batch.items() if not k.startswith("dec_")}
    decoded = [decode_fn(model, inputs, s) for s in DECODE]
    return float(loss.detach()), grads, decoded


def same_run(got, expected) -> None:
    loss, grads, decoded = got
    assert loss == pytest.approx(expected[0], rel=1e-5)
    assert grads == pytest.approx(expected[1], rel=1e-4, abs=1e-6)
    assert decoded == expected[2]


# --------------------------------------------------------------------------- the emulation itself


def test_emulation_catches_a_cpu_tensor_meeting_the_device():
    with emulated_accelerator() as device:
        x = torch.ones(4, device=device)
        assert x.device == device
        assert (x + torch.arange(4, device=x.device)).tolist() == [1.0, 2.0, 3.0, 4.0]
        assert float(x.sum()) == 4.0  # data-dependent code runs
        with pytest.raises(DeviceMismatch):
            x.index_select(0, torch.tensor([0, 1]))
        with pytest.raises(DeviceMismatch):
            x + torch.arange(4)
        with pytest.raises(TypeError):
            x.numpy()
        assert x.cpu().device.type == "cpu"


def test_the_old_beam_search_fails_under_emulation():
    """The pattern of the H100 crash (an index made on the CPU, used on the device's data) is caught."""
    model, batch = hier_model("joint")
    with emulated_accelerator() as device:
        enc = model.to(device).eval().encode(to(batch, device))
        with pytest.raises(DeviceMismatch):
            enc.index_select(torch.arange(2).repeat_interleave(3))


# --------------------------------------------------------------------------- every model on the device


@pytest.mark.parametrize("cell", seq2seq.CELLS)
@pytest.mark.parametrize("variant", sorted(SEQ_VARIANTS))
def test_seq2seq_runs_on_the_device_as_on_the_cpu(variant, cell, tmp_path):
    model, batch = seq_model(variant, cell)
    expected = run_model(model, batch, decoding.decode_batch, "cpu")
    model, batch = seq_model(variant, cell)
    with emulated_accelerator() as device:
        got = run_model(model, batch, decoding.decode_batch, device)
        seq2seq.save_seq2seq(model, vocab(), tmp_path)
        loaded, _ = seq2seq.load_seq2seq(tmp_path, device=device)
        assert next(loaded.parameters()).device == device
        again = [decoding.decode_batch(loaded.eval(), to({k: v for k, v in batch.items()}, device), s) for s in DECODE]
    same_run(got, expected)
    assert again == expected[2]


@pytest.mark.parametrize("variant", sorted(HIER_VARIANTS))
def test_hiersumm_runs_on_the_device_as_on_the_cpu(variant, tmp_path):
    model, batch = hier_model(variant)
    expected = run_model(model, batch, hiersumm.decode_batch, "cpu")
    model, batch = hier_model(variant)
    with emulated_accelerator() as device:
        got = run_model(model, batch, hiersumm.decode_batch, device)
        hiersumm.save_hiersumm(model, vocab(), tmp_path)
        loaded, _ = hiersumm.load_hiersumm(tmp_path, device=device)
        inputs = to({k: v for k, v in batch.items() if not k.startswith("dec_")}, device)
        again = [hiersumm.decode_batch(loaded.eval(), inputs, s) for s in DECODE]
    same_run(got, expected)
    assert again == expected[2]


@pytest.mark.parametrize("head", ["classification", "regression"])
@pytest.mark.parametrize("pooling", ["cls", "max", "mean", "attention", "query"])
def test_scorer_runs_on_the_device_as_on_the_cpu(pooling, head):
    from wikiref.model.scorer import ScorerConfig, build_scorer, make_packer
    from wikiref.model.scorer import collate as scorer_collate

    examples = [(["Ken Fields", "Campaign"], ["He announced a bid .", "His slogan mocks rivals ."])]

    def run(device):
        torch.manual_seed(0)
        model, tok = build_scorer(
            ScorerConfig(encoder="tiny-random", pooling=pooling, head=head, max_length=24, stride=8, num_levels=4)
        )
        windows, _ = make_packer(model.config, tok).pack_many(examples)
        batch = to(scorer_collate(windows, tok.pad_token_id, targets=[[1.0, 0.0]]), device)
        model = model.to(device)
        out = model(batch)
        loss = model.loss(out, batch["targets"])
        loss.backward()
        return float(loss.detach()), model.to_scores(out).tolist()

    assert_same_on_the_device(run)


# --------------------------------------------------------------------------- weights sharing one storage


def flatten_like_cudnn(rnn: torch.nn.RNNBase) -> None:
    """Make the RNN's parameters views into one flat buffer, as ``flatten_parameters()`` does on CUDA."""
    params = list(rnn.parameters())
    flat = torch.cat([p.detach().reshape(-1) for p in params])
    offset = 0
    for p in params:
        p.data = flat[offset : offset + p.numel()].view_as(p)
        offset += p.numel()
    assert len({p.untyped_storage().data_ptr() for p in params}) == 1


@pytest.mark.parametrize("cell", seq2seq.CELLS)
def test_save_and_load_rnn_weights_sharing_one_storage(cell, tmp_path):
    """Regression test of the psg2sum-pgn crash (safetensors: "None is covering the entire storage")."""
    model, batch = seq_model("pgn", cell)
    expected = float(model(batch).loss.detach())
    flatten_like_cudnn(model.encoder)
    flatten_like_cudnn(model.decoder)
    assert float(model(batch).loss.detach()) == expected
    seq2seq.save_seq2seq(model, vocab(), tmp_path / "a")
    loaded, _ = seq2seq.load_seq2seq(tmp_path / "a")
    assert float(loaded(batch).loss.detach()) == expected
    # loading into a model whose weights are flattened (resuming on CUDA) works too
    target, _ = seq_model("pgn", cell)
    flatten_like_cudnn(target.encoder)
    from wikiref.model.weights import load_weights

    load_weights(target, tmp_path / "a" / seq2seq.WEIGHTS_FILE)
    assert float(target(batch).loss.detach()) == expected


def test_training_state_of_a_flattened_rnn_saves_and_resumes(tmp_path):
    from wikiref.model.checkpoint import load_training_state, save_training_state

    model, batch = seq_model("s2s", "lstm")
    flatten_like_cudnn(model.encoder)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    model(batch).loss.backward()
    optimizer.step()
    save_training_state(tmp_path, model, optimizer, {"epoch": 0})
    fresh, _ = seq_model("s2s", "lstm")
    flatten_like_cudnn(fresh.encoder)
    opt2 = torch.optim.AdamW(fresh.parameters(), lr=1e-3)
    load_training_state(tmp_path, fresh, opt2, torch.device("cpu"))
    assert all(torch.equal(a, b) for a, b in zip(model.state_dict().values(), fresh.state_dict().values()))


def test_tied_weights_are_written_once_as_safetensors_save_model_does(tmp_path):
    from safetensors.torch import load_file, save_model

    from wikiref.model.weights import load_weights, save_weights

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    model[1].weight = model[0].weight
    save_weights(model, tmp_path / "ours.safetensors", metadata={"format": "x"})
    save_model(model, str(tmp_path / "theirs.safetensors"), metadata={"format": "x"})
    ours, theirs = load_file(tmp_path / "ours.safetensors"), load_file(tmp_path / "theirs.safetensors")
    assert ours.keys() == theirs.keys() and len(ours) == 1
    clone = torch.nn.Sequential(torch.nn.Embedding(5, 3), torch.nn.Linear(3, 5, bias=False))
    clone[1].weight = clone[0].weight
    load_weights(clone, tmp_path / "ours.safetensors")
    assert torch.equal(clone[1].weight, model[0].weight)


def test_untied_cpu_weights_file_is_byte_identical_to_save_model(tmp_path):
    """CPU outputs do not move: the file of an ordinary model is the one ``safetensors`` wrote before."""
    from safetensors.torch import save_model

    from wikiref.model.weights import save_weights

    model, _ = seq_model("pgn", "lstm")
    save_weights(model, tmp_path / "ours.safetensors", metadata={"format": seq2seq.FORMAT})
    save_model(model, str(tmp_path / "theirs.safetensors"), metadata={"format": seq2seq.FORMAT})
    assert (tmp_path / "ours.safetensors").read_bytes() == (tmp_path / "theirs.safetensors").read_bytes()


# --------------------------------------------------------------------------- the training loop on the device


def _sentence(rng) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(4, 9))) + " ."


def test_scorer_training_loop_with_subnetwork_hooks_runs_on_the_device(tmp_path):
    """train(): batches, AMP gate, optimizer, hooks, dev scoring, checkpoints, stop and resume, all on the device."""
    import random

    from wikiref.model import subnetworks as subnet
    from wikiref.model import training
    from wikiref.model.scorer import ScorerConfig, build_scorer, load_scorer
    from wikiref.model.scoring_task import ScoringExample

    rng = random.Random(0)
    examples = [
        ScoringExample([_sentence(rng)], [_sentence(rng) for _ in range(4)], [1.0, 0.0, 0.0, 1.0], f"e{i}")
        for i in range(6)
    ]
    settings = training.TrainSettings(epochs=2, batch_size=3, lr=1e-3, progress=False, device="meta")

    def model():
        torch.manual_seed(0)
        m, tok = build_scorer(
            ScorerConfig(encoder="tiny-random", pooling="query", max_length=64, stride=16, num_levels=4)
        )
        return m, tok, subnet.GradientMask(m, subnet.magnitude_masks(m, 0.1)).hooks()

    with emulated_accelerator() as device:
        m, tok, hooks = model()
        with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
            training.train(m, tok, examples[:4], examples[4:], settings, tmp_path, **hooks)
        m, tok, hooks = model()
        result = training.train(m, tok, examples[:4], examples[4:], settings, tmp_path, **hooks)
        loaded = load_scorer(tmp_path)[0].to(device)  # (safetensors cannot load onto "meta" itself; CUDA it can)
        assert next(loaded.parameters()).device == device
    assert result.resumed_from_epoch == 1


@pytest.mark.parametrize("family", ["seq2seq", "hiersumm"])
def test_abstractive_training_loop_runs_on_the_device(family, tmp_path):
    """abstractive.fit() with dev ROUGE-L selection (greedy decoding every epoch), stop and resume, reload, beam."""
    import random

    from wikiref.model import abstractive, training

    rng = random.Random(0)
    items = [
        abstractive.Item(f"i{i}", _sentence(rng).split(), [_sentence(rng).split(), _sentence(rng).split()], ["a", "b"])
        for i in range(5)
    ]
    voc = abstractive.build_vocab(items, 100)
    config = {
        "seq2seq": {"embedding_size": 16, "hidden_size": 32, "copy": True, "coverage": True, "max_target_length": 6},
        "hiersumm": {"d_model": 32, "heads": 4, "ff_size": 64, "local_layers": 1, "global_layers": 1,
                     "max_target_length": 6, **HIER_VARIANTS["joint"]},
    }[family]  # fmt: skip
    settings = training.TrainSettings(epochs=2, batch_size=2, lr=1e-3, progress=False, device="meta")
    with emulated_accelerator() as device:
        model = abstractive.build_model(family, voc, config, seed=0)
        with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
            abstractive.fit(family, model, voc, items[:3], items[3:], settings, tmp_path, select="rougeL")
        model = abstractive.build_model(family, voc, config, seed=0)
        result = abstractive.fit(family, model, voc, items[:3], items[3:], settings, tmp_path, select="rougeL")
        summariser = abstractive.load(tmp_path, device=device)
        beams = abstractive.summarise(summariser, items, DecodeSettings(beam=3, block_trigrams=True))
    assert result.resumed_from_epoch == 1
    assert len(beams) == len(items)
