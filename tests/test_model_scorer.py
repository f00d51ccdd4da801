"""Encoders, the scorer (batches, heads, scoring API) and its files (safetensors + JSON only)."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest
import torch
from transformers import AutoTokenizer

from wikiref import layout
from wikiref.model import ScorerConfig, build_scorer, collate, load_scorer, save_scorer, score_sentences
from wikiref.model.encoders import MINILM, add_level_tokens, minilm_dir, resolve_source

torch.set_num_threads(1)

EXAMPLES = [
    (
        ["Marina Beach", "Incidents"],
        ["The beach flooded in 2004 .", "Shelters were built .", "Fishermen sleep on the sand ."],
    ),
    (["Ken Fields"], ["He announced a bid .", "His slogan mocks Trump ."]),
]


@pytest.fixture(scope="module")
def tiny():
    torch.manual_seed(0)
    return build_scorer(
        ScorerConfig(
            encoder="tiny-random", pooling="query", head="classification", max_length=24, stride=8, num_levels=4
        )
    )


def test_minilm_resolves_to_the_installed_package():
    d = minilm_dir()
    assert (d / "config.json").exists() and (d / "model.safetensors").exists()
    assert resolve_source(MINILM) == str(d) == resolve_source("random:" + MINILM)
    assert resolve_source("bert-base-uncased") == "bert-base-uncased"


def test_tiny_encoder_shape_and_level_tokens(tiny):
    model, tok = tiny
    cfg = model.encoder.config
    assert (cfg.num_hidden_layers, cfg.hidden_size) == (2, 64)
    assert model.encoder.get_input_embeddings().num_embeddings == len(tok) == 30522 + 4
    assert model.config.encoder_config["hidden_size"] == 64
    # the golden 30522 + 4, counted another way: the base vocabulary plus [L1]..[L4], each one new token after it
    levels = [f"[L{i}]" for i in range(1, 5)]
    assert tok.convert_tokens_to_ids(levels) == list(range(tok.vocab_size, tok.vocab_size + 4))
    assert tok.tokenize(" ".join(levels)) == levels


def test_config_validation():
    with pytest.raises(ValueError):
        ScorerConfig(encoder="tiny-random", pooling="query", use_query=False)
    with pytest.raises(ValueError):
        ScorerConfig(encoder="tiny-random", head="ranking")
    with pytest.raises(ValueError):
        ScorerConfig.from_dict({"encoder": "x", "surprise": 1})


def test_collate_positions_targets_and_fixed_padding(tiny):
    from wikiref.model import make_packer

    model, tok = tiny
    windows, _ = make_packer(model.config, tok).pack_many(EXAMPLES)
    targets = [[1, 0, 0], [0, 1]]
    batch = collate(windows, tok.pad_token_id, targets)
    n_sent = sum(len(w.sentences) for w in windows)
    assert batch["positions"].shape[0] == n_sent == 5
    assert batch["input_ids"].shape[1] % 8 == 0
    for i in range(n_sent):  # each sentence span starts at its [CLS]
        w = int(batch["sent_window"][i])
        assert int(batch["input_ids"][w, batch["positions"][i, 0]]) == tok.cls_token_id
    got = {(int(e), int(j)): float(t) for e, j, t in zip(batch["sent_example"], batch["sent_index"], batch["targets"])}
    assert got == {(0, 0): 1.0, (0, 1): 0.0, (0, 2): 0.0, (1, 0): 0.0, (1, 1): 1.0}
    fixed = collate(windows, tok.pad_token_id, pad_to=24)
    assert fixed["input_ids"].shape[1] == 24
    with pytest.raises(ValueError):
        collate(windows, tok.pad_token_id, pad_to=4)


def _collate_per_sentence(windows, pad_id, targets=None, pad_to=None, groups=None):
    """The batch spelled out one window and one sentence at a time (the collate before it was vectorised)."""
    longest = max(len(w) for w in windows)
    T = pad_to if pad_to is not None else -(-longest // 8) * 8
    B = len(windows)
    ids = torch.full((B, T), pad_id, dtype=torch.long)
    attention, segments = torch.zeros((B, T), dtype=torch.long), torch.zeros((B, T), dtype=torch.long)
    query_mask = torch.zeros((B, T), dtype=torch.bool)
    sw, se, si, spans, tgt = [], [], [], [], []
    for b, w in enumerate(windows):
        n = len(w.input_ids)
        ids[b, :n], attention[b, :n], segments[b, :n] = torch.tensor(w.input_ids), 1, torch.tensor(w.token_type_ids)
        query_mask[b, w.query_span[0] : w.query_span[1]] = True
        for j, span in zip(w.sentences, w.spans):
            sw.append(b), se.append(w.example), si.append(j), spans.append(span)
            if targets is not None:
                tgt.append(float(targets[w.example][j]))
    P = max(e - s for s, e in spans)
    positions, pos_mask = torch.zeros((len(spans), P), dtype=torch.long), torch.zeros((len(spans), P), dtype=torch.bool)
    for i, (s, e) in enumerate(spans):
        positions[i, : e - s], positions[i, e - s :], pos_mask[i, : e - s] = torch.arange(s, e), s, True
    out = {
        "input_ids": ids,
        "attention_mask": attention,
        "token_type_ids": segments,
        "query_mask": query_mask,
        "sent_window": torch.tensor(sw),
        "positions": positions,
        "pos_mask": pos_mask,
        "sent_example": torch.tensor(se),
        "sent_index": torch.tensor(si),
        "sent_group": torch.tensor(se if groups is None else [groups[e] for e in se]),
    }
    if targets is not None:
        out["targets"] = torch.tensor(tgt, dtype=torch.float32)
    return out


@pytest.mark.parametrize("variant", ["targets", "no-targets", "groups", "pad_to"])
def test_collate_equals_the_batch_built_sentence_by_sentence(tiny, variant):
    from wikiref.model import make_packer

    model, tok = tiny
    rng = np.random.default_rng(3)
    words = ["beach", "storm", "city", "vote", "river", "bridge", "song", "team"]
    examples = [
        (
            [str(rng.choice(words)) for _ in range(int(rng.integers(1, 3)))],
            [" ".join(rng.choice(words, size=int(rng.integers(1, 9)))) + " ." for _ in range(int(rng.integers(1, 7)))],
        )
        for _ in range(9)
    ]
    windows, _ = make_packer(model.config, tok).pack_many(examples)
    targets = [rng.random(len(sents)).round(3).tolist() for _, sents in examples]
    kw = {
        "targets": {"targets": targets},
        "no-targets": {},
        "groups": {"targets": targets, "groups": [i // 3 for i in range(len(examples))]},
        "pad_to": {"targets": targets, "pad_to": 40},
    }[variant]
    got, want = collate(windows, tok.pad_token_id, **kw), _collate_per_sentence(windows, tok.pad_token_id, **kw)
    assert got.keys() == want.keys()
    for k in want:
        assert got[k].dtype == want[k].dtype and torch.equal(got[k], want[k]), k


def test_padding_does_not_change_scores(tiny):
    from wikiref.model import make_packer

    model, tok = tiny
    model.eval()
    windows, _ = make_packer(model.config, tok).pack_many(EXAMPLES)
    with torch.no_grad():
        a = model(collate(windows, tok.pad_token_id))
        b = model(collate(windows, tok.pad_token_id, pad_to=64))
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_score_sentences_one_probability_per_sentence(tiny):
    model, tok = tiny
    scores = score_sentences(model, tok, EXAMPLES, batch_size=2)
    assert [len(s) for s in scores] == [3, 2]
    assert all(np.all((s > 0) & (s < 1)) for s in scores)


def test_heads_and_losses():
    torch.manual_seed(0)
    reg, _ = build_scorer(
        ScorerConfig(encoder="tiny-random", head="regression", pooling="mean", max_length=32, stride=8)
    )
    out = torch.tensor([0.5, -1.0])
    assert torch.equal(reg.to_scores(out), out)
    assert float(reg.loss(out, torch.tensor([0.5, 0.0]))) == pytest.approx(0.5)
    clf, _ = build_scorer(
        ScorerConfig(encoder="tiny-random", head="classification", pooling="max", max_length=32, stride=8)
    )
    assert float(clf.loss(torch.tensor([0.0]), torch.tensor([1.0]))) == pytest.approx(np.log(2))
    assert float(clf.to_scores(torch.tensor([0.0]))) == 0.5


def test_save_load_roundtrip_without_pickle(tiny, tmp_path, monkeypatch):
    model, tok = tiny
    before = score_sentences(model, tok, EXAMPLES)
    save_scorer(model, tok, tmp_path)
    names = {p.name for p in tmp_path.iterdir()}
    # exactly the files the rules declare for a checkpoint (a file more would be read without being declared)
    assert names == set(layout.CHECKPOINT_FILES)
    assert not any(n.endswith((".bin", ".pt", ".pkl")) for n in names)
    cfg = json.loads((tmp_path / "config.json").read_text())
    assert cfg["pooling"] == "query" and cfg["encoder_config"]["num_hidden_layers"] == 2

    def no_unpickling(*a, **k):
        raise AssertionError("loading must not unpickle")

    monkeypatch.setattr(pickle, "load", no_unpickling)
    monkeypatch.setattr(pickle, "loads", no_unpickling)
    monkeypatch.setattr(torch, "load", no_unpickling)
    loaded, tok2 = load_scorer(tmp_path)
    after = score_sentences(loaded, tok2, EXAMPLES)
    for a, b in zip(before, after):
        np.testing.assert_array_equal(a, b)
    assert tok2.convert_tokens_to_ids("[L4]") == tok.convert_tokens_to_ids("[L4]")


def test_saved_files_do_not_depend_on_how_the_tokenizer_was_loaded(tiny, tmp_path):
    """transformers records local_files_only (True under HF_HUB_OFFLINE=1, which `make` exports) in the tokenizer's
    init kwargs, and saved it into tokenizer_config.json: the tiny profile's files differed between a run under
    `make` and one without. The same model saved after either load gives the same files."""
    model, _ = tiny
    written = []
    for offline in (True, False):
        tok = AutoTokenizer.from_pretrained(resolve_source(model.config.encoder))
        add_level_tokens(tok, model.config.num_levels)
        tok.init_kwargs["local_files_only"] = offline  # what from_pretrained records from the environment
        save_scorer(model, tok, tmp_path / str(offline))
        written.append({p.name: p.read_bytes() for p in sorted((tmp_path / str(offline)).iterdir())})
    assert written[0] == written[1]
    assert "local_files_only" not in json.loads(written[0]["tokenizer_config.json"])


def test_random_init_differs_from_pretrained_minilm():
    torch.manual_seed(0)
    pre, _ = build_scorer(ScorerConfig(encoder=MINILM, max_length=64, stride=16))
    rnd, _ = build_scorer(ScorerConfig(encoder=MINILM, init="random", max_length=64, stride=16))
    assert pre.encoder.config.hidden_size == rnd.encoder.config.hidden_size == 384
    assert pre.encoder.config.num_hidden_layers == rnd.encoder.config.num_hidden_layers == 6
    w_pre = pre.encoder.encoder.layer[0].attention.self.query.weight
    w_rnd = rnd.encoder.encoder.layer[0].attention.self.query.weight
    assert not torch.allclose(w_pre, w_rnd)
    from safetensors import safe_open

    with safe_open(str(minilm_dir() / "model.safetensors"), "pt") as f:
        key = next(k for k in f.keys() if k.endswith("layer.0.attention.self.query.weight"))  # noqa: SIM118 (a safetensors handle, not a dict)
        torch.testing.assert_close(f.get_tensor(key), w_pre.detach())
    # "random:<name>" is the same as init: random
    assert ScorerConfig(encoder="random:" + MINILM).random_init


def test_train_flop_per_window_of_bert_base():
    """The one FLOP count behind every benchmark's TFLOP/s (bench/train.py, bench/train_gpu.py, gpu-check):
    bert-base (12 x 768) on a 512-token window, about 0.29 TFLOP forward + backward (issue 29: ~0.28)."""
    from types import SimpleNamespace

    from wikiref.model.encoders import train_flop_per_window

    cfg = SimpleNamespace(num_hidden_layers=12, hidden_size=768)
    assert train_flop_per_window(cfg, 512) == (6 * 12 * 12 * 768**2 + 12 * 12 * 512 * 768) * 512 == 289_910_292_480
