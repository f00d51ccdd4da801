"""The scorer's bi-encoder pairing (``ScorerConfig.pairing: bi``, :mod:`wikiref.model.biencoder`, issue 31)."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from emulated_device import assert_same_on_the_device
from training_stop import TrainingInterrupted, stop_after_epochs

from wikiref.model import biencoder, training
from wikiref.model.scorer import (
    CONFIG_FILE,
    ScorerConfig,
    build_scorer,
    load_scorer,
    make_packer,
    save_scorer,
    score_sentences,
    to_device,
)
from wikiref.model.scoring_task import ScoringExample

WORDS = "the campaign mayor city budget vote council school road tax plan river bridge park".split()


@pytest.fixture(autouse=True)
def _deterministic(torch_deterministic):
    yield


def _sentence(rng) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))) + " ."


def bi_scorer(**kw):
    torch.manual_seed(0)
    cfg = dict(encoder="tiny-random", pooling="mean", head="regression", pairing="bi", num_levels=4, **kw)
    return build_scorer(ScorerConfig(**cfg))


def cosines(model, tok, query: list[str], sentences: list[str]) -> np.ndarray:
    """The encoder's own cosine of the mean-pooled, separately encoded texts (what the bi scorer starts from)."""

    def emb(texts):
        b = tok(texts, padding=True, return_tensors="pt")
        with torch.no_grad():
            h = model.encoder(input_ids=b["input_ids"], attention_mask=b["attention_mask"]).last_hidden_state
        m = b["attention_mask"].unsqueeze(-1).float()
        return torch.nn.functional.normalize((h * m).sum(1) / m.sum(1), dim=-1)

    return (emb(sentences) @ emb([" ; ".join(query)])[0]).numpy()


def test_a_fresh_bi_scorer_ranks_by_the_encoders_cosine():
    rng = random.Random(1)
    model, tok = bi_scorer()
    model.eval()
    query, sents = [_sentence(rng), _sentence(rng)], [_sentence(rng) for _ in range(9)]
    got = score_sentences(model, tok, [(query, sents)])[0]
    cos = cosines(model, tok, query, sents)
    np.testing.assert_allclose(got, biencoder.COS_SCALE * cos, rtol=1e-5, atol=1e-5)
    assert list(np.argsort(-got)) == list(np.argsort(-cos))


def test_chunked_scoring_equals_one_pass_and_multi_document_examples_work():
    rng = random.Random(2)
    model, tok = bi_scorer()
    long = [_sentence(rng) for _ in range(biencoder.CHUNK + 7)]
    query = [_sentence(rng)]
    chunked = score_sentences(model, tok, [(query, long)])[0]
    assert not np.isnan(chunked).any()
    items = biencoder.make_items(model.config, tok, [(query, long)], chunk=None)
    assert len(items) == 1
    whole, _ = biencoder.score_items(
        model, items, [len(long)], batch_size=4, device=torch.device("cpu"), amp=False, pad_id=tok.pad_token_id
    )
    np.testing.assert_allclose(chunked, whole[0], rtol=1e-5, atol=1e-5)
    multi = score_sentences(model, tok, [(query, long[:5], [2, 3])])[0]  # doc lengths do not matter to bi
    np.testing.assert_allclose(multi, chunked[:5], rtol=1e-5, atol=1e-5)


def test_config_files_of_cross_scorers_do_not_change_and_bi_round_trips(tmp_path):
    torch.manual_seed(0)
    cross, tok = build_scorer(
        ScorerConfig(encoder="tiny-random", pooling="query", max_length=32, stride=8, num_levels=4)
    )
    save_scorer(cross, tok, tmp_path / "cross")
    saved = json.loads((tmp_path / "cross" / CONFIG_FILE).read_text())
    assert "pairing" not in saved and "sentence_tokens" not in saved  # old checkpoints' config.json: same keys
    model, tok = bi_scorer(sentence_tokens=16)
    save_scorer(model, tok, tmp_path / "bi")
    loaded, ltok = load_scorer(tmp_path / "bi")
    assert loaded.config.pairing == "bi" and loaded.config.sentence_tokens == 16
    pairs = [(["road tax"], ["the road tax plan .", "a park ."])]
    np.testing.assert_allclose(score_sentences(loaded, ltok, pairs)[0], score_sentences(model, tok, pairs)[0])
    with pytest.raises(ValueError, match="no packed windows"):
        make_packer(model.config, tok)
    with pytest.raises(ValueError, match="pairing"):
        ScorerConfig(encoder="tiny-random", pairing="poly")


def _examples(rng, n: int) -> list[ScoringExample]:
    out = []
    for i in range(n):
        sents = [_sentence(rng) for _ in range(rng.randint(2, 6))]
        targets = [float(len(s)) / 60 for s in sents]  # a learnable signal: longer sentences score higher
        out.append(ScoringExample([_sentence(rng)], sents, targets, f"e{i}"))
    return out


@pytest.mark.parametrize("loss", ["listwise", "pairwise", "mse"])
def test_bi_training_learns_saves_and_resumes(loss, tmp_path):
    rng = random.Random(3)
    train_ex, dev_ex = _examples(rng, 12), _examples(rng, 4)
    settings = training.TrainSettings(epochs=3, batch_size=4, lr=1e-3, head_lr_scale=10, progress=False)

    def fresh():
        m, tok = bi_scorer()
        m.config.use_loss(loss)
        return m, tok

    m, tok = fresh()
    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        training.train(m, tok, train_ex, dev_ex, settings, tmp_path)
    m, tok = fresh()
    result = training.train(m, tok, train_ex, dev_ex, settings, tmp_path)
    assert result.resumed_from_epoch == 1
    losses = [h["train_loss"] for h in result.history]
    assert losses[-1] < losses[0]
    assert float(m.head.weight.detach()[0, 1]) != 0.0  # the length feature's weight moved from its start at 0
    loaded, ltok = load_scorer(tmp_path)
    assert loaded.config.loss_name == loss and loaded.config.pairing == "bi"


def test_bi_scorer_runs_on_the_device_as_on_the_cpu():
    """Forward, loss and backward of the bi pairing create nothing on the wrong device (emulated accelerator)."""
    rng = random.Random(4)
    examples = [([_sentence(rng)], [_sentence(rng) for _ in range(5)]) for _ in range(2)]

    def run(device):
        model, tok = bi_scorer()
        model.config.use_loss("listwise")
        items = biencoder.make_items(model.config, tok, examples)
        batch = biencoder.collate(items, tok.pad_token_id, targets=[[0.1, 0.0, 0.3, 0.0, 0.2]] * 2)
        batch = to_device(batch, device)
        model = model.to(device)
        out = model(batch)
        loss = model.loss(out, batch["targets"], batch["sent_group"])
        loss.backward()
        return float(loss.detach()), model.to_scores(out).tolist()

    assert_same_on_the_device(run)


def test_length_buckets_cover_the_sorted_rows_and_pad_each_to_its_longest():
    lengths = np.array([3, 5, 8, 9, 16, 17, 40, 100, 128, 600])
    buckets = biencoder.length_buckets(lengths)
    # bounds 8, 16, 24, 32, 48, 64, 96, 128, ...: (<=8) (9, 16) (17) (40) (100, 128) (600, past the last bound)
    assert [b[:2] for b in buckets] == [(0, 3), (3, 5), (5, 6), (6, 7), (7, 9), (9, 10)]
    assert [b[2] for b in buckets] == [8, 16, 24, 40, 128, 600]
    assert all(isinstance(x, int) for b in buckets for x in b)
    assert biencoder.length_buckets(np.array([7])) == ((0, 1, 8),)


def test_length_buckets_give_the_scores_and_gradients_of_one_padded_block():
    """Sentences encoded per length bucket (sorted, each bucket padded to its own longest) score as the same
    sentences padded into one block, in the items' order, with the same loss and gradients."""
    rng = random.Random(6)
    examples = [
        ([_sentence(rng)], [" ".join([_sentence(rng)] * rng.randint(1, 8)) for _ in range(rng.randint(3, 9))])
        for _ in range(4)
    ]
    targets = [[rng.random() for _ in e[1]] for e in examples]

    def run(bucket: bool):
        model, tok = bi_scorer()
        model.config.use_loss("pairwise")
        model.eval()  # no dropout: the two layouts would draw different masks
        items = biencoder.make_items(model.config, tok, examples)
        batch = biencoder.collate(items, tok.pad_token_id, targets=targets, bucket=bucket)
        out = model(batch)
        loss = model.loss(out, batch["targets"], batch["sent_group"])
        loss.backward()
        grads = {n: p.grad.clone() for n, p in model.named_parameters() if p.grad is not None}
        return batch, out.detach(), float(loss.detach()), grads

    b1, out1, loss1, g1 = run(True)
    b0, out0, loss0, g0 = run(False)
    assert len(b1["sent_buckets"]) > 2 and b0["sent_buckets"] == ((0, len(out0), b0["sent_ids"].shape[1]),)
    assert sum((b - a) * w for a, b, w in b1["sent_buckets"]) < b0["sent_ids"].numel()  # fewer padded tokens
    for k in ("sent_example", "sent_index", "sent_query", "targets"):  # per-sentence keys keep the items' order
        assert torch.equal(b1[k], b0[k]), k
    torch.testing.assert_close(out1, out0, rtol=1e-5, atol=1e-5)
    assert loss1 == pytest.approx(loss0, rel=1e-5)
    assert g1.keys() == g0.keys()
    for n in g0:
        torch.testing.assert_close(g1[n], g0[n], rtol=1e-4, atol=1e-6, msg=n)


def test_training_batches_are_bucketed_on_the_cpu_and_one_padded_block_on_cuda(monkeypatch):
    """The training task asks biencoder.bucket_training_batches for its batches' layout: length buckets on the CPU,
    one padded block on CUDA (measured there at the paper recipe's batch: docs/gpu.md)."""
    from wikiref.model import scoring_task

    assert biencoder.bucket_training_batches("cpu") and biencoder.bucket_training_batches(torch.device("meta"))
    assert not biencoder.bucket_training_batches("cuda") and not biencoder.bucket_training_batches("cuda:1")
    rng = random.Random(5)
    m, tok = bi_scorer()
    lengths = (1, 4, 1, 9, 2, 1)  # sentences of 1 to 9 sentences' words: several length buckets
    train_ex = [
        ScoringExample([_sentence(rng)], [" ".join([_sentence(rng)] * k) for k in lengths], [0.1] * 6, f"e{i}")
        for i in range(3)
    ]
    task = scoring_task.BiEncoderTask(m, tok, train_ex, train_ex)
    monkeypatch.setattr(scoring_task, "batch_to_device", lambda batch, device: batch)  # no CUDA here: stay on the host
    idx = list(range(len(task.train_items)))
    on_cpu, on_cuda = task.batch(idx, torch.device("cpu")), task.batch(idx, torch.device("cuda"))
    assert len(on_cpu["sent_buckets"]) > 1
    assert on_cuda["sent_buckets"] == ((0, len(on_cuda["sent_ids"]), on_cuda["sent_ids"].shape[1]),)
    with torch.no_grad():
        m.eval()
        torch.testing.assert_close(m(on_cpu), m(on_cuda), rtol=1e-5, atol=1e-5)


def test_a_long_training_example_is_cut_into_items_that_keep_its_targets_and_group(monkeypatch):
    """An example longer than TRAIN_CHUNK sentences (a whole meeting) trains as several items, each at most that long:
    a step's size is bounded whatever the documents' lengths. Every sentence is in exactly one item, with its own
    target, and the items share the example's ranking group, so a batch holding two of them ranks across both."""
    from wikiref.model import losses, scoring_task

    monkeypatch.setattr(biencoder, "TRAIN_CHUNK", 4)
    rng = random.Random(6)
    m, tok = bi_scorer()
    targets = [[0.1 * j for j in range(10)], [0.5, 0.2]]
    train_ex = [
        ScoringExample([_sentence(rng)], [_sentence(rng) for _ in t], t, f"e{i}") for i, t in enumerate(targets)
    ]
    task = scoring_task.BiEncoderTask(m, tok, train_ex, train_ex)
    assert [(it.example, it.first, len(it.sentences)) for it in task.train_items] == [
        (0, 0, 4), (0, 4, 4), (0, 8, 2), (1, 0, 2)
    ]  # fmt: skip
    batch = task.batch([0, 1, 3], torch.device("cpu"))
    assert batch["targets"].tolist() == pytest.approx([*targets[0][:8], *targets[1]])
    assert batch["sent_group"].tolist() == [0] * 8 + [1] * 2
    out = m(batch)
    assert torch.isfinite(losses.pairwise(out, batch["targets"], batch["sent_group"]))
    # the first example's 28 ordered pairs: the 12 inside its two items and the 16 across them; the second's one
    same = batch["sent_group"].unsqueeze(0) == batch["sent_group"].unsqueeze(1)
    assert int((same & (batch["targets"].unsqueeze(1) > batch["targets"].unsqueeze(0))).sum()) == 28 + 1
