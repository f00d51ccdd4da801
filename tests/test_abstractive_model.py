"""wikiref.model.abstractive: items from the common schema, training through the shared loop, decoding."""

from __future__ import annotations

import json

import pytest
import torch
from training_stop import TrainingInterrupted, stop_after_epochs

from wikiref.model import abstractive as A
from wikiref.model.decoding import DecodeSettings
from wikiref.model.training import TrainSettings

pytestmark = pytest.mark.usefixtures("torch_deterministic")

TINY = {
    "seq2seq": {"embedding_size": 16, "hidden_size": 32, "copy": True, "coverage": True},
    "hiersumm": {
        "d_model": 32,
        "heads": 2,
        "ff_size": 64,
        "local_layers": 1,
        "global_layers": 1,
        "dropout": 0.0,
        "decoder_local_global": True,
        "ordering": True,
        "query_encoder": True,
    },
}
WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu".split()


def _items(n: int, offset: int = 0) -> list[A.Item]:
    out = []
    for i in range(offset, offset + n):
        doc = [WORDS[(i * 5 + k * 3) % len(WORDS)] for k in range(12)]
        out.append(A.Item(f"ex{i}", ["topic", WORDS[i % len(WORDS)]], [doc[:6], doc[6:]], [*doc[:3], "."]))
    return out


def _settings(**kw) -> TrainSettings:
    base = {"epochs": 60, "batch_size": 4, "lr": 1e-2, "warmup_ratio": 0.0, "progress": False, "bucket_batches": 2}
    return TrainSettings(**{**base, **kw})


def _fit(family, tmp_path, name="m", items=None, **kw):
    items = items or _items(4)
    vocab = A.build_vocab(items, 100)
    model = A.build_model(family, vocab, TINY[family], seed=3)
    res = A.fit(family, model, vocab, items, items, _settings(**kw), tmp_path / name)
    return model, vocab, res


def test_items_from_the_common_schema_and_sentences():
    row = {
        "id": "qmdscnn:1",
        "query": ["Storm Hits Coast", "Damage"],
        "documents": [{"sentences": ["The storm hit.", "Roofs flew!"]}, {"sentences": ["   "]}],
        "summary": ["A storm hit the coast."],
    }
    it = A.item_from_example(row)
    assert it.query == ["storm", "hits", "coast", "damage"]
    assert it.documents == [["the", "storm", "hit", ".", "roofs", "flew", "!"]]  # the empty document is dropped
    assert it.summary == ["a", "storm", "hit", "the", "coast", "."]
    assert A.split_sentences(["a", "b", ".", "c", "!", "d"]) == ["a b .", "c !", "d"]
    assert A.source_tokens(it, use_query=False) == it.documents[0]
    assert A.source_tokens(it, use_query=True)[:4] == it.query
    with pytest.raises(ValueError, match="no document"):
        A.item_from_example({**row, "documents": [{"sentences": [" "]}]})


def test_errors_are_clear(tmp_path):
    items = _items(2)
    vocab = A.build_vocab(items, 50)
    with pytest.raises(ValueError, match="unknown abstractive model family"):
        A.build_model("bart", vocab, {})
    with pytest.raises(ValueError, match="vocab_size comes from the vocabulary"):
        A.build_model("seq2seq", vocab, {"vocab_size": 10})
    model = A.build_model("seq2seq", vocab, TINY["seq2seq"])
    with pytest.raises(ValueError, match="no dev example"):
        A.fit("seq2seq", model, vocab, items, [], _settings(epochs=1), tmp_path / "x")
    with pytest.raises(ValueError, match="no summary"):
        A.fit("seq2seq", model, vocab, [A.Item("e", ["q"], [["a"]], [])], items, _settings(epochs=1), tmp_path / "x")
    with pytest.raises(ValueError, match="unknown dev selection"):
        A.fit("seq2seq", model, vocab, items, items, _settings(epochs=1), tmp_path / "x", select="bleu")


@pytest.mark.parametrize("family", A.FAMILIES)
@pytest.mark.slow
def test_tiny_model_overfits_through_the_shared_loop(family, tmp_path):
    model, vocab, res = _fit(family, tmp_path, lr=2e-2)
    losses = [h["train_loss"] for h in res.history]
    # The thresholds: mean per-step loss below 0.25 nats for HierSumm; the PGN's loss adds the coverage term
    # (eq. 13, weight 1), which does not vanish when attention revisits the source, so below 0.5.
    threshold = 0.5 if family == "seq2seq" else 0.25
    assert losses[-1] < threshold < losses[0]
    assert res.extra["family"] == family and res.tokens_per_second > 0
    saved = json.loads((tmp_path / "m" / "training.json").read_text())
    assert saved["best_epoch"] == res.best_epoch
    summariser = A.load(tmp_path / "m")
    items = _items(4)
    assert A.summarise(summariser, items) == [it.summary for it in items]


@pytest.mark.parametrize("family", A.FAMILIES)
def test_decoding_does_not_depend_on_batch_size_and_load_round_trips(family, tmp_path):
    model, vocab, _ = _fit(family, tmp_path, epochs=5)
    items = _items(7, offset=2)
    beam = DecodeSettings(beam=3, length_penalty=0.4, block_trigrams=True, max_length=8)
    in_memory = A.summarise(A.Summariser(family, model, vocab, True), items, beam, batch_size=7)
    loaded = A.load(tmp_path / "m")
    assert A.summarise(loaded, items, beam, batch_size=1) == in_memory
    assert A.summarise(loaded, items, beam, batch_size=3) == in_memory


def test_deterministic_and_resumable(tmp_path):
    _fit("seq2seq", tmp_path, "a", epochs=4)
    _fit("seq2seq", tmp_path, "b", epochs=4)
    weights = (tmp_path / "a" / "model.safetensors").read_bytes()
    assert (tmp_path / "b" / "model.safetensors").read_bytes() == weights
    items = _items(4)
    vocab = A.build_vocab(items, 100)
    model = A.build_model("seq2seq", vocab, TINY["seq2seq"], seed=3)
    with stop_after_epochs(2), pytest.raises(TrainingInterrupted):
        A.fit("seq2seq", model, vocab, items, items, _settings(epochs=4), tmp_path / "c")
    assert (tmp_path / "c" / "last" / "state.json").exists()
    model = A.build_model("seq2seq", vocab, TINY["seq2seq"], seed=99)  # overwritten by the checkpoint
    res = A.fit("seq2seq", model, vocab, items, items, _settings(epochs=4), tmp_path / "c")
    assert res.resumed_from_epoch == 2
    a = json.loads((tmp_path / "a" / "training.json").read_text())
    assert [h["train_loss"] for h in res.history] == [h["train_loss"] for h in a["history"]]
    best = (tmp_path / "c" / "model.safetensors").read_bytes()
    if res.best_epoch == a["best_epoch"]:
        assert best == weights


@pytest.mark.slow
def test_rouge_l_selection_decodes_dev(tmp_path):
    items = _items(4)
    vocab = A.build_vocab(items, 100)
    model = A.build_model("hiersumm", vocab, TINY["hiersumm"], seed=3)
    res = A.fit("hiersumm", model, vocab, items, items, _settings(epochs=40), tmp_path / "r", select="rougeL")
    metrics = [h["dev_metric"] for h in res.history]
    assert min(metrics) >= 0.0 and max(metrics) <= 1.0
    assert res.best_metric == max(metrics) == pytest.approx(1.0)  # the overfit model reproduces dev = train
    assert res.history[res.best_epoch - 1]["best"]


def test_build_model_leaves_the_global_rng_alone():
    vocab = A.build_vocab(_items(2), 50)
    torch.manual_seed(5)
    expected = torch.rand(3)
    torch.manual_seed(5)
    a = A.build_model("hiersumm", vocab, TINY["hiersumm"], seed=1)
    assert torch.equal(torch.rand(3), expected)
    b = A.build_model("hiersumm", vocab, TINY["hiersumm"], seed=1)
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))
