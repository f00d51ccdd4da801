"""The seq2seq family of Psg2Sum's Table 4 (s2s, s2s+copy, pointer-generator with coverage; issue #16).

Acceptance tests: the copy distribution sums to one over the extended vocabulary; the coverage loss
matches a hand computation; beam 1 equals greedy; batched decoding equals one-at-a-time decoding; each
variant overfits a handful of toy examples (the copying ones reproducing OOV words through the pointer);
runs are deterministic with a seed; padding changes neither an example's loss nor its attention.
The decoding and overfitting tests run with both cells (LSTM, GRU: ``Seq2SeqConfig.cell``).
Tiny models only (embedding 16, hidden 32), one thread.
"""

from __future__ import annotations

import dataclasses
import json

import pytest
import torch

from wikiref.model.decoding import DecodeSettings, beam_search, decode, greedy_decode, normalised_score
from wikiref.model.seq2seq import (
    CELLS,
    EOS_ID,
    SPECIALS,
    UNK_ID,
    Seq2Seq,
    Seq2SeqConfig,
    Vocab,
    collate,
    coverage_loss,
    load_seq2seq,
    make_example,
    save_seq2seq,
    source_ids_extended,
    target_ids_extended,
    words_from_ids,
)

VARIANTS = {
    "s2s": {"copy": False, "coverage": False},
    "s2s+copy": {"copy": True, "coverage": False},
    "pgn": {"copy": True, "coverage": True},
}

# In-vocabulary words; the capitalised names in the copy data below are not in the vocabulary.
WORDS = "the river flows through city near old town bridge a is in of and north south big small".split()


def pairs(text: str) -> list[tuple[list[str], list[str]]]:
    """(source, target) word lists from ``source -> target`` lines."""
    return [tuple(side.split() for side in line.split(" -> ")) for line in text.strip().splitlines()]


# (source, target) pairs for the copying variants: each target copies out-of-vocabulary names of its source.
COPY_DATA = pairs("""
the Zorblax river flows through the old city of Quimby -> Zorblax flows through Quimby
a big bridge near Ostrava is in the north -> bridge near Ostrava
the small town of Plinth is near the Varna river and a bridge -> Plinth is near Varna
north of the city the river flows -> the river flows north
Kessel is a town in the south of Drummond -> Kessel is in Drummond
the old bridge of Yarrow -> old bridge of Yarrow
""")
# For s2s (no copying): targets in the vocabulary.
S2S_DATA = pairs("""
the river flows through the old city -> river flows through city
a big bridge near the town is in the north -> bridge near town
the small town is near the river and a bridge -> town is near river
north of the city the river flows -> the river flows north
a town in the south -> town in south
the old bridge -> old bridge
""")


@pytest.fixture(autouse=True)
def _deterministic(torch_deterministic):
    """Every test here runs on one thread with deterministic algorithms (conftest)."""


def vocab() -> Vocab:
    return Vocab([*SPECIALS, *WORDS])


def config(variant: str = "pgn", **kw) -> Seq2SeqConfig:
    base = {"vocab_size": len(vocab()), "embedding_size": 16, "hidden_size": 32, "max_target_length": 12}
    return Seq2SeqConfig(**{**base, **VARIANTS[variant], **kw})


def spread_weights(model: torch.nn.Module, scale: float) -> torch.nn.Module:
    """``model`` in eval mode, its weights redrawn wider than the default init (so that its outputs vary)."""
    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, scale / max(1, p.shape[-1]) ** 0.5)
    return model.eval()


def random_model(variant: str, seed: int = 0, scale: float = 1.5, **kw) -> Seq2Seq:
    """A random tiny model whose outputs vary (weights spread wider than the default init)."""
    torch.manual_seed(seed)
    return spread_weights(Seq2Seq(config(variant, **kw)), scale)


def batch_of(pairs, cfg: Seq2SeqConfig, with_target: bool = True):
    voc = vocab()
    examples = [make_example(s, t if with_target else None, voc, cfg) for s, t in pairs]
    return examples, collate(examples, cfg.vocab_size)


@pytest.fixture
def fit(full_batch_fit):
    """Full-batch AdamW on a toy batch (conftest), lr 0.01 unless given, gradients clipped at 2."""
    return lambda model, batch, steps, lr=0.01: full_batch_fit(model, batch, steps, lr, 2.0)


# --------------------------------------------------------------------------- vocabulary and ids


def test_vocab_is_deterministic_ties_by_word_and_round_trips(tmp_path):
    texts = [["b", "a", "c", "c"], ["a", "b", "d"], ["<s>", "e"]]
    v = Vocab.build(texts, 3)
    assert v.words == (*SPECIALS, "a", "b", "c")  # a, b, c twice each: ties by word; d, e cut
    assert Vocab.build(list(reversed(texts)), 3) == v
    v.save(tmp_path / "vocab.json")
    assert Vocab.load(tmp_path / "vocab.json") == v
    with pytest.raises(ValueError, match="starts with"):
        Vocab(["a", "b"])
    with pytest.raises(ValueError, match="twice"):
        Vocab([*SPECIALS, "a", "a"])
    with pytest.raises(TypeError):
        Vocab.build(["a string"], 3)


def test_extended_ids_of_source_and_target():
    v = vocab()
    n = len(v)
    ids, ext, oovs = source_ids_extended("the Zorblax river Quimby Zorblax".split(), v)
    assert oovs == ["Zorblax", "Quimby"]
    assert ids == [v.id("the"), UNK_ID, v.id("river"), UNK_ID, UNK_ID]
    assert ext == [v.id("the"), n, v.id("river"), n + 1, n]
    assert target_ids_extended("Quimby river Nowhere".split(), v, oovs) == [n + 1, v.id("river"), UNK_ID]
    assert words_from_ids([n + 1, v.id("river"), UNK_ID, EOS_ID, n], v, oovs) == ["Quimby", "river", "<unk>"]
    with pytest.raises(ValueError, match="past the extended vocabulary"):
        words_from_ids([n + 2], v, oovs)


def test_config_and_input_errors():
    with pytest.raises(ValueError, match="coverage"):
        config("s2s", coverage=True, attention=False)
    with pytest.raises(ValueError, match="copy"):
        config("s2s+copy", attention=False)
    with pytest.raises(ValueError, match="coverage_weight"):
        config("s2s", coverage_weight=0.5)
    with pytest.raises(ValueError, match="unknown"):
        Seq2SeqConfig.from_dict({**config().to_dict(), "heads": 2})
    cfg = config("pgn", max_source_length=4, max_target_length=2)
    e = make_example("the river flows through the city".split(), "river flows north".split(), vocab(), cfg)
    assert e.truncated_source and e.truncated_target and len(e.source_ids) == 4 and len(e.target_ext) == 2
    with pytest.raises(ValueError, match="empty source"):
        make_example([], ["a"], vocab(), cfg)
    with pytest.raises(TypeError):
        make_example("the river", "river", vocab(), cfg)
    # without copying a target OOV is <unk> even when the source has it
    e = make_example(["Zorblax"], ["Zorblax"], vocab(), config("s2s"))
    assert e.target_ext == (UNK_ID,)
    with pytest.raises(ValueError, match="mixes"):
        collate([e, make_example(["river"], None, vocab(), config("s2s"))], len(vocab()))
    model = Seq2Seq(config("s2s"))
    _, batch = batch_of(COPY_DATA[:2], config("pgn"))
    with pytest.raises(ValueError, match="copying model"):
        model(batch)
    with pytest.raises(ValueError, match="eval mode"):
        greedy_decode(model.train(), batch)


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_host_facts_hold_what_the_tensors_hold_and_change_nothing(variant):
    """collate()'s ``host`` facts (what the model checks, the lengths packing needs: no device-to-host copy on an
    accelerator, tests/test_host_syncs.py) equal what the device path reads from the tensors, the loss and its
    gradients are the same bit for bit with and without them, and the checks fire on either path."""
    cfg = config(variant)
    data = COPY_DATA if cfg.copy else S2S_DATA
    for pairs in (data, data[3:4], [data[5], data[0], data[3]]):  # padded rows, one example, unsorted lengths
        _, batch = batch_of(pairs, cfg)
        host = batch["host"]
        dec_out = batch["dec_out"]
        assert host.lengths == tuple(batch["src_len"].tolist())
        assert host.max_source_id == int(batch["src"].max())
        assert host.max_target_id == int(dec_out.max())
        assert host.max_target_past_oovs == int((dec_out - batch["n_oov"][:, None]).max())
        _, without = batch_of(pairs, cfg, with_target=False)
        assert without["host"].max_target_id == -1 and without["host"].lengths == host.lengths
        grads = []
        for b in (batch, {k: v for k, v in batch.items() if k != "host"}):
            model = random_model(variant, seed=3).train()
            torch.manual_seed(0)  # the same dropout masks
            out = model(b)
            out.loss.backward()
            grads.append((out.loss.detach(), [p.grad.clone() for p in model.parameters()]))
        assert torch.equal(grads[0][0], grads[1][0])
        assert all(torch.equal(a, b) for a, b in zip(grads[0][1], grads[1][1], strict=True))
    # a target past its example's extended vocabulary: the same error from the facts and from the tensors
    n = cfg.vocab_size + 5
    _, batch = batch_of(COPY_DATA[:2], config("pgn"))
    batch["dec_out"][0, 0] = n
    facts = dataclasses.replace(batch["host"], max_target_id=n, max_target_past_oovs=n)  # what collate would say
    for b in (dict(batch, host=facts), {k: v for k, v in batch.items() if k != "host"}):
        with pytest.raises(ValueError, match="past its example's extended vocabulary|copying model"):
            random_model(variant)(b)


# --------------------------------------------------------------------------- acceptance


def test_copy_distribution_sums_to_one_over_extended_vocab():
    model = random_model("pgn")
    pairs = [
        ("the river flows".split(), None),  # no OOV
        ("the Zorblax river flows through the old city".split(), None),  # 1 OOV
        ("Aa Bb the Cc Bb".split(), None),  # 3 OOVs, one repeated
    ]
    examples, batch = batch_of(pairs, model.config, with_target=False)
    assert batch["n_oov"].tolist() == [0, 1, 3]
    n = model.config.vocab_size
    with torch.no_grad():
        enc, state = model.encode(batch["src"], batch["src_len"], batch["src_ext"], batch["n_oov"])
        inputs = torch.tensor([2, 2, 2])
        for _ in range(4):
            step = model.step(enc, state, inputs)
            state = step.state
            p = model.final_distribution(enc, step)
            assert p.shape == (3, n + 3)
            torch.testing.assert_close(p.sum(-1), torch.ones(3), rtol=0, atol=1e-6)
            assert (p >= 0).all()
            # the extended slots past an example's own OOVs are empty; its own OOVs get copy mass
            assert (p[0, n:] == 0).all() and (p[1, n + 1 :] == 0).all()
            assert (p[1, n] > 0) and (p[2, n : n + 3] > 0).all()
            # the copied mass of a repeated OOV is the sum of its positions' attention (eq. 9)
            p_gen = torch.sigmoid(step.gen_logit)
            torch.testing.assert_close(
                p[2, n + 1], (1 - p_gen[2]) * (step.attention[2, 1] + step.attention[2, 4]), rtol=1e-5, atol=1e-7
            )
            # the log-space versions agree with it
            lp = model.log_distribution(enc, step)
            torch.testing.assert_close(lp.exp(), p, rtol=1e-5, atol=1e-7)
            for target in (torch.tensor([4, n, n + 2]), torch.tensor([EOS_ID, 5, n + 1])):
                torch.testing.assert_close(
                    model.target_log_prob(enc, step, target), p.gather(1, target[:, None]).squeeze(1).log()
                )
            inputs = torch.tensor([4, UNK_ID, 5])


class _FixedAttention:
    """Replaces Seq2Seq.attend: the given attention per step, recording the coverage it is given."""

    def __init__(self, model: Seq2Seq, attentions: torch.Tensor) -> None:
        self.model, self.attentions, self.t, self.seen = model, attentions, 0, []

    def __call__(self, enc, s_t, coverage):
        a = self.attentions[:, self.t]
        self.seen.append(coverage.clone())
        self.t += 1
        return a, torch.bmm(a.unsqueeze(1), enc.states).squeeze(1)


def test_coverage_loss_matches_hand_computation():
    model = random_model("pgn", coverage_weight=0.5).train()
    model.dropout.p = 0.0
    # example 0: source of 3 words, target of 2 words (+ </s>: 3 steps);
    # example 1: source of 2 words (1 padding), target of 1 word (+ </s>: 2 steps, step 3 past its end)
    pairs = [("the river flows".split(), "river flows".split()), ("old town".split(), ["town"])]
    _, batch = batch_of(pairs, model.config)
    a = torch.tensor(
        [
            [[0.5, 0.3, 0.2], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]],
            [[0.7, 0.3, 0.0], [0.4, 0.6, 0.0], [0.9, 0.1, 0.0]],
        ]
    )
    # By hand, eq. 10 + 12: c^1 = 0; c^2 = a^1; c^3 = a^1 + a^2; covloss_t = sum_i min(a_i^t, c_i^t).
    # example 0: 0; min([.1,.6,.3], [.5,.3,.2]) = .1+.3+.2 = .6; min([.2,.2,.6], [.6,.9,.5]) = .2+.2+.5 = .9
    # example 1: 0; min([.4,.6], [.7,.3]) = .4+.3 = .7; step 3 is past the target: 0
    expected = torch.tensor([[0.0, 0.6, 0.9], [0.0, 0.7, 0.0]])
    model.attend = _FixedAttention(model, a)
    out = model(batch)
    torch.testing.assert_close(out.coverage_loss, expected)
    torch.testing.assert_close(torch.stack(model.attend.seen[1:], 1), torch.stack([a[:, 0], a[:, 0] + a[:, 1]], 1))
    # eq. 13 with lambda = 0.5, averaged over each example's steps
    steps = torch.tensor([3.0, 2.0])
    torch.testing.assert_close(out.example_loss, (out.nll + 0.5 * expected).sum(1) / steps)
    torch.testing.assert_close(coverage_loss(a, torch.tensor([[1, 1, 1], [1, 1, 0]])), expected)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("variant", ["s2s", "pgn"])
def test_beam_one_equals_greedy(variant, cell):
    model = random_model(variant, seed=1, cell=cell)
    pairs = [(s, None) for s, _ in COPY_DATA]
    _, batch = batch_of(pairs, model.config, with_target=False)
    settings = (
        DecodeSettings(max_length=10),
        DecodeSettings(min_length=3, max_length=12, block_trigrams=True, length_penalty=1.0),
    )
    check_beam_one_is_greedy(model, batch, settings)


def check_beam_one_is_greedy(model, batch, settings, greedy=greedy_decode, beam=beam_search) -> None:
    """A beam of one (``beam`` with ``beam=1``) decodes ``batch`` as ``greedy`` does under each of ``settings``,
    and some output is longer than one token."""
    for s in settings:
        out = greedy(model, batch, s)
        assert beam(model, batch, DecodeSettings(**{**s.__dict__, "beam": 1})) == out
        assert any(len(g) > 1 for g in out)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_batched_decoding_equals_one_at_a_time(variant, cell):
    model = random_model(variant, seed=2 if cell == "lstm" else 3, cell=cell)  # seeds whose outputs copy OOVs
    sources = [s for s, _ in COPY_DATA] + [["river"], "the Zorblax river flows through Quimby and Quimby".split()]
    for settings in (
        DecodeSettings(beam=1, max_length=10, block_trigrams=True),
        DecodeSettings(beam=4, min_length=2, max_length=10, block_trigrams=True, length_penalty=1.0),
    ):
        together = decode(model, vocab(), sources, settings, batch_size=len(sources))
        alone = decode(model, vocab(), sources, settings, batch_size=1)
        assert together == alone
        assert len({tuple(t) for t in together}) > 1  # the outputs are not all alike
        # unsorted batch (the order of the input) too, as ids
        _, batch = batch_of([(s, None) for s in sources], model.config, with_target=False)
        ids = beam_search(model, batch, settings) if settings.beam > 1 else greedy_decode(model, batch, settings)
        singles = []
        for s in sources:
            _, one = batch_of([(s, None)], model.config, with_target=False)
            singles += beam_search(model, one, settings) if settings.beam > 1 else greedy_decode(model, one, settings)
        assert ids == singles
    if model.config.copy:  # copied OOV source words come back as words
        assert any(w[0].isupper() for out in together for w in out)


def test_decoding_constraints():
    model = random_model("s2s+copy", seed=5)
    sources = [s for s, _ in COPY_DATA]
    free = decode(model, vocab(), sources, DecodeSettings(beam=3, max_length=12))
    assert any(len(set(zip(o, o[1:], o[2:]))) < len(o) - 2 for o in free)  # the random model repeats itself
    for beam in (1, 3):
        out = decode(model, vocab(), sources, DecodeSettings(beam=beam, max_length=12, block_trigrams=True))
        assert all(len(set(zip(o, o[1:], o[2:]))) == len(o) - 2 for o in out if len(o) > 2)
    eager = random_model("s2s+copy", seed=5)
    with torch.no_grad():
        eager.out_vocab.bias[EOS_ID] += 6.0  # </s> early
    for beam in (1, 3):
        assert any(len(o) < 5 for o in decode(eager, vocab(), sources, DecodeSettings(beam=beam, max_length=7)))
        out = decode(eager, vocab(), sources, DecodeSettings(beam=beam, min_length=5, max_length=7))
        assert all(5 <= len(o) <= 7 for o in out)
    with pytest.raises(ValueError, match="no room"):
        DecodeSettings(min_length=5, max_length=5)
    assert normalised_score(-6.0, 3, 1.0) == -2.0 and normalised_score(-6.0, 4, 0.0) == -6.0


def test_plain_s2s_without_attention():
    torch.manual_seed(0)
    model = Seq2Seq(config("s2s", attention=False))
    _, batch = batch_of(S2S_DATA, model.config)
    out = model(batch)
    assert out.attention is None and out.coverage_loss is None and torch.isfinite(out.loss)
    model = random_model("s2s", seed=6, attention=False)
    sources = [s for s, _ in S2S_DATA]
    settings = DecodeSettings(beam=3, max_length=8, block_trigrams=True)
    assert decode(model, vocab(), sources, settings, batch_size=6) == decode(
        model, vocab(), sources, settings, batch_size=1
    )


# (steps, loss threshold, learning rate): the tiny models reach the threshold on the 6 toy examples within the
# step budget. The GRU ones learn faster; at lr 0.01 they get so peaked that beam 4 fills its finished list
# with early-</s> hypotheses before the right one ends (See et al.'s stopping rule), hence the lower rates.
OVERFIT = {
    ("s2s", "lstm"): (80, 0.02, 0.01),
    ("s2s+copy", "lstm"): (150, 0.02, 0.01),
    ("pgn", "lstm"): (150, 0.02, 0.01),
    ("s2s", "gru"): (120, 0.02, 0.003),
    ("s2s+copy", "gru"): (150, 0.02, 0.005),
    ("pgn", "gru"): (150, 0.02, 0.005),
}


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.slow
def test_tiny_model_overfits_toy_examples(variant, cell, fit):
    steps, threshold, lr = OVERFIT[variant, cell]
    data = S2S_DATA if variant == "s2s" else COPY_DATA
    torch.manual_seed(0)
    model = Seq2Seq(config(variant, cell=cell))
    _, batch = batch_of(data, model.config)
    if model.config.copy:  # the copy data needs the pointer: target words out of the vocabulary
        assert (batch["dec_out"] >= model.config.vocab_size).sum() >= 8
    losses = fit(model, batch, steps, lr)
    assert losses[-1] < threshold, losses[-10:]
    model.eval()
    for beam in (1, 4):
        assert decode(model, vocab(), [s for s, _ in data], DecodeSettings(beam=beam)) == [t for _, t in data]


def test_deterministic_with_seed(fit):
    def build():
        model = Seq2Seq(config("pgn", dropout=0.2))
        return model, batch_of(COPY_DATA, model.config)[1]

    sources = [s for s, _ in COPY_DATA]
    check_seeded_runs_agree(build, fit, 15, lambda m: decode(m, vocab(), sources, DecodeSettings(beam=3, max_length=8)))


def check_seeded_runs_agree(build, fit, steps: int, decode_all) -> None:
    """Two runs from seed 123 give the same losses, outputs and weights: ``build()`` -> (model, batch), ``fit``
    for ``steps`` on the batch, ``decode_all(model)`` in eval mode."""

    def run():
        torch.manual_seed(123)
        model, batch = build()
        losses = fit(model, batch, steps)
        out = decode_all(model.eval())
        return losses, out, {k: v.clone() for k, v in model.state_dict().items()}

    l1, o1, s1 = run()
    l2, o2, s2 = run()
    assert l1 == l2 and o1 == o2
    assert all(torch.equal(s1[k], s2[k]) for k in s1)


@pytest.mark.parametrize("cell", CELLS)
@pytest.mark.parametrize("variant", list(VARIANTS))
def test_padding_changes_neither_loss_nor_attention(variant, cell):
    model = random_model(variant, seed=3, cell=cell)
    data = S2S_DATA if variant == "s2s" else COPY_DATA
    short = data[4] if variant == "s2s" else data[1]
    longer = [data[0], data[2]]  # longer sources and targets than the short one
    _, alone = batch_of([short], model.config)
    _, padded = batch_of([*longer, short], model.config)
    s, t = int(alone["src_len"][0]), int(alone["dec_mask"][0].sum())
    assert padded["src"].shape[1] > s and padded["dec_in"].shape[1] > t
    with torch.no_grad():
        a, p = model(alone), model(padded)
    torch.testing.assert_close(p.example_loss[-1], a.example_loss[0], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(p.nll[-1, :t], a.nll[0, :t], rtol=1e-5, atol=1e-6)
    torch.testing.assert_close(p.attention[-1, :t, :s], a.attention[0, :t, :s], rtol=1e-5, atol=1e-6)
    assert (p.attention[-1, :, s:] == 0).all()  # padding never gets attention
    assert (p.nll[-1, t:] == 0).all()


@pytest.mark.parametrize("cell", CELLS)
def test_save_load_round_trip(tmp_path, cell):
    model = random_model("pgn", seed=4, cell=cell)
    save_seq2seq(model, vocab(), tmp_path / "m")
    loaded, voc = load_seq2seq(tmp_path / "m")
    assert voc == vocab() and loaded.config == model.config and loaded.config.cell == cell
    assert json.loads((tmp_path / "m" / "config.json").read_text())["cell"] == cell
    sources = [s for s, _ in COPY_DATA]
    settings = DecodeSettings(beam=2, max_length=6)
    assert decode(loaded.eval(), voc, sources, settings) == decode(model, vocab(), sources, settings)
    _, batch = batch_of(COPY_DATA, model.config)
    with torch.no_grad():
        torch.testing.assert_close(loaded(batch).example_loss, model(batch).example_loss, rtol=0, atol=0)


def test_config_saved_before_the_cell_option_loads_as_lstm(tmp_path):
    """A config.json written before ``cell`` existed has no such key: it is an LSTM model, as it was."""
    model = random_model("pgn", seed=4)
    save_seq2seq(model, vocab(), tmp_path / "m")
    path = tmp_path / "m" / "config.json"
    old = json.loads(path.read_text())
    del old["cell"]
    path.write_text(json.dumps(old))
    loaded, voc = load_seq2seq(tmp_path / "m")
    assert loaded.config.cell == "lstm" and loaded.config == model.config
    sources = [s for s, _ in COPY_DATA]
    settings = DecodeSettings(beam=2, max_length=6)
    assert decode(loaded.eval(), voc, sources, settings) == decode(model, vocab(), sources, settings)


def test_gru_cell():
    """GRU encoder and decoder; the decoder state has no cell state (and the model no reduce_c); beam
    search reorders the GRU state like the LSTM's. An unknown cell name is a clear error."""
    model = random_model("pgn", seed=7, cell="gru")
    assert isinstance(model.encoder, torch.nn.GRU) and isinstance(model.decoder, torch.nn.GRU)
    assert model.encoder.bidirectional and model.encoder.hidden_size == model.config.hidden_size // 2
    assert not hasattr(model, "reduce_c") and not any(k.startswith("reduce_c") for k in model.state_dict())
    assert isinstance(random_model("pgn", cell="lstm").encoder, torch.nn.LSTM)
    _, batch = batch_of(COPY_DATA[:3], model.config)
    with torch.no_grad():
        enc, state = model.encode(batch["src"], batch["src_len"], batch["src_ext"], batch["n_oov"])
        assert state.c is None and state.h.shape == (1, 3, model.config.hidden_size)
        assert state.rnn_state is state.h
        picked = state.index_select(torch.tensor([2, 0]))
        assert picked.c is None and torch.equal(picked.h, state.h[:, [2, 0]])
        step = model.step(enc, state, torch.full((3,), 2))
        assert step.state.c is None and torch.isfinite(step.logits).all()
    for bad in ("rnn", "GRU", "", None):
        with pytest.raises(ValueError, match="cell must be one of"):
            config("pgn", cell=bad)
    with pytest.raises(ValueError, match="cell must be one of"):
        Seq2SeqConfig.from_dict({**config().to_dict(), "cell": "transformer"})
