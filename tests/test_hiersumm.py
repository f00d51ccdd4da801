"""Liu & Lapata's hierarchical transformer and HEROSumm's components (QmdsCnnIr §4; issue #16).

Acceptance tests: the local layers keep documents apart and the global layers mix them; padding (tokens,
whole documents, targets) changes neither an example's loss nor its encodings; multi-head pooling weights
sum to one per head over each document's real tokens; each HEROSumm switch changes the computation and
all-off is the baseline; tiny baseline and full HEROSumm models overfit toy (query, documents, summary)
triplets; beam 1 equals greedy; batched decoding equals one-at-a-time decoding; seeded runs are
deterministic. Tiny models only (d 32, 4 heads), one thread.
"""

from __future__ import annotations

import dataclasses

import pytest
import torch
from test_seq2seq import check_beam_one_is_greedy, check_seeded_runs_agree, spread_weights

from wikiref.model.decoding import DecodeSettings
from wikiref.model.hiersumm import (
    HierSumm,
    HierSummConfig,
    MultiHeadPooling,
    beam_search,
    collate,
    decode,
    greedy_decode,
    load_hiersumm,
    make_example,
    save_hiersumm,
    sinusoid,
)
from wikiref.model.seq2seq import PAD_ID, SPECIALS, Vocab

SWITCHES = ("decoder_local_global", "ordering", "query_encoder")
VARIANTS = {
    "baseline": {},
    "hierarchical": {"decoder_local_global": True},
    "ordering": {"ordering": True},
    "query": {"query_encoder": True},
    "full": dict.fromkeys(SWITCHES, True),
}
# the parameters each component adds (module name prefixes)
COMPONENT_PREFIX = {"decoder_local_global": "local_global.", "ordering": "ordering.", "query_encoder": "query_layer."}

WORDS = (
    "the river flows through city near old town bridge a is in of and north south big small "
    "where what does built when rain falls castle stands on hill market opens every day"
).split()


def t(s: str) -> list[str]:
    return s.split()


def triplets(text: str) -> list[tuple[list[str], list[list[str]], list[str]]]:
    """(query, documents, summary) word lists from ``query | document / document ... | summary`` lines."""
    out = []
    for line in text.strip().splitlines():
        query, documents, summary = line.split(" | ")
        out.append((t(query), [t(d) for d in documents.split(" / ")], t(summary)))
    return out


# (query, documents, summary) triplets; the summary answers the query from one or two of the documents
DATA = triplets("""
where does the river flow | the river flows north through the old city / a big bridge is near the town / rain falls | river flows north through city
what is near the town | the small town is in the south / a big bridge is near the town | big bridge near town
when does the market open | the market opens every day / the old castle stands on a hill / the city is big | market opens every day
where is the castle | rain falls on the town / the old castle stands on a hill north of the city | castle on hill north of city
what falls in the south | the small town is in the south / in the south rain falls every day / the bridge is old | rain falls every day in south
""")


@pytest.fixture(autouse=True)
def _deterministic(torch_deterministic):
    """Every test here runs on one thread with deterministic algorithms (conftest)."""


def vocab() -> Vocab:
    return Vocab([*SPECIALS, *WORDS])


def config(variant: str = "baseline", **kw) -> HierSummConfig:
    base = {
        "vocab_size": len(vocab()),
        "d_model": 32,
        "heads": 4,
        "ff_size": 64,
        "local_layers": 1,
        "global_layers": 1,
        "decoder_layers": 1,
        "dropout": 0.0,
        "max_target_length": 10,
    }
    return HierSummConfig(**{**base, **VARIANTS[variant], **kw})


def random_model(variant: str = "baseline", seed: int = 0, scale: float = 1.5, **kw) -> HierSumm:
    """A random tiny model whose outputs vary (weights spread wider than the default init)."""
    torch.manual_seed(seed)
    return spread_weights(HierSumm(config(variant, **kw)), scale)


def batch_of(triplets, cfg: HierSummConfig, with_target: bool = True):
    voc = vocab()
    examples = [make_example(q, d, s if with_target else None, voc, cfg) for q, d, s in triplets]
    return examples, collate(examples, cfg)


@pytest.fixture
def fit(full_batch_fit):
    """Full-batch AdamW on a toy batch (conftest), lr 0.005, gradients clipped at 1."""
    return lambda model, batch, steps: full_batch_fit(model, batch, steps, 0.005, 1.0)


def sources(data=DATA):
    return [(q, d) for q, d, _ in data]


# --------------------------------------------------------------------------- config and inputs


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_collates_host_facts_are_what_encode_would_find_and_change_nothing(variant):
    """collate()'s ``doc_rows`` and ``host`` (no ``nonzero`` or check read back from the device: docs/gpu.md,
    tests/test_host_syncs.py) hold what encode finds from the tensors; the loss and its gradients are the same bit
    for bit with and without them; an example without a document is refused on either path."""
    cfg = config(variant, dropout=0.1)
    for triplets in (DATA, DATA[1:2], [DATA[4], DATA[1], DATA[2]]):  # 2-3 documents an example: padded rows
        _, batch = batch_of(triplets, cfg)
        present = (batch["docs"] != PAD_ID).any(-1)
        assert torch.equal(batch["doc_rows"], present.view(-1).nonzero().squeeze(-1))
        assert batch["host"].documents == tuple(present.sum(-1).tolist())
        results = []
        for b in (batch, {k: v for k, v in batch.items() if k not in ("host", "doc_rows")}):
            model = random_model(variant, seed=3, dropout=0.1).train()
            torch.manual_seed(0)  # the same dropout masks
            loss = model(b).loss
            loss.backward()
            results.append((loss.detach(), [p.grad.clone() for p in model.parameters() if p.grad is not None]))
        assert torch.equal(results[0][0], results[1][0])
        assert all(torch.equal(a, b) for a, b in zip(results[0][1], results[1][1], strict=True))
    _, batch = batch_of(DATA[:2], cfg)
    batch["docs"][1] = PAD_ID  # the second example loses its documents
    emptied = dataclasses.replace(batch["host"], documents=(batch["host"].documents[0], 0))  # as collate would say
    for b in (dict(batch, host=emptied), {k: v for k, v in batch.items() if k not in ("host", "doc_rows")}):
        with pytest.raises(ValueError, match="no document"):
            random_model(variant)(b)


def test_config_errors_and_variant_names():
    assert config().variant == "baseline"
    assert config("hierarchical").variant == "hs-hierarchical"
    assert config("query").variant == "hs-query" and config("ordering").variant == "hs-ordering"
    assert config("full").variant == "hs-joint[hierarchical+ordering+query]"
    with pytest.raises(ValueError, match="needs global_layers"):
        config("hierarchical", global_layers=0)
    with pytest.raises(ValueError, match="multiple of heads"):
        config(d_model=30, heads=4)
    with pytest.raises(ValueError, match="even"):
        config(d_model=9, heads=3)
    with pytest.raises(ValueError, match="decoder_layers"):
        config(decoder_layers=0)
    with pytest.raises(ValueError, match="dropout"):
        config(dropout=1.0)
    with pytest.raises(ValueError, match="unknown"):
        HierSummConfig.from_dict({**config().to_dict(), "colour": 1})
    assert HierSummConfig.from_dict(config("full").to_dict()) == config("full")
    voc = vocab()
    with pytest.raises(ValueError, match="no non-empty document"):
        make_example(t("where"), [[], []], None, voc, config())
    with pytest.raises(ValueError, match="empty query"):
        make_example([], [t("rain")], None, voc, config())
    with pytest.raises(TypeError):
        make_example("where", [t("rain")], None, voc, config())


def test_query_prepended_to_first_document_only_in_the_baseline():
    voc = vocab()
    q, d, s = DATA[1]
    docs = [[], *d, t("a b c"), t("x y")]  # an empty document is skipped
    base = make_example(q, docs, s, voc, config(max_documents=3, max_doc_length=4))
    assert len(base.document_ids) == 3 and base.truncated
    assert base.document_ids[0] == tuple(voc.encode(d[0][:4]))
    b = collate([base], config())
    assert b["docs"][0, 0, : len(q)].tolist() == voc.encode(q)  # query first, then the document
    assert b["docs"][0, 0, len(q) : len(q) + 4].tolist() == voc.encode(d[0][:4])
    assert b["docs"][0, 1, :4].tolist() == voc.encode(d[1][:4])
    qb = collate([base], config("query"))
    assert qb["docs"][0, 0, :4].tolist() == voc.encode(d[0][:4]) and qb["docs"].shape[2] == 4
    assert qb["query"][0].tolist() == voc.encode(q)
    assert b["dec_in"][0, 0].item() == 2 and b["dec_out"][0, len(s)].item() == 3


# --------------------------------------------------------------------------- the encoder


@pytest.mark.parametrize("variant", ["baseline", "query"])
def test_local_layers_keep_documents_apart_global_layers_mix_them(variant):
    model = random_model(variant, seed=1, global_layers=2)
    q, d, _ = DATA[0]
    changed = [d[0], t("the castle stands on a big hill"), d[2]]  # document 2 replaced, same length
    assert len(changed[1]) == len(d[1])
    _, b1 = batch_of([(q, d, None)], model.config, with_target=False)
    _, b2 = batch_of([(q, changed, None)], model.config, with_target=False)
    with torch.no_grad():
        e1, e2 = model.encode(b1), model.encode(b2)
    n1 = int(e1.token_mask[0, 0].sum())
    # the local (and query) layers: document 1 does not see document 2
    torch.testing.assert_close(e1.local[0, 0, :n1], e2.local[0, 0, :n1], rtol=0, atol=1e-6)
    assert not torch.allclose(e1.local[0, 1], e2.local[0, 1], atol=1e-3)  # document 2 itself changed
    # the global layers exchange information: document 1's encodings change
    assert (e1.global_[0, 0, :n1] - e2.global_[0, 0, :n1]).abs().max() > 1e-3
    # and so does what the decoder reads of document 1
    assert (e1.memory[0, :n1] - e2.memory[0, :n1]).abs().max() > 1e-3


@pytest.mark.parametrize("variant", ["baseline", "full"])
def test_padding_changes_neither_loss_nor_encodings(variant):
    model = random_model(variant, seed=3)
    short = DATA[1]  # 2 documents, short ones, a short summary
    long_query = (t("where does the river flow north of the old city"), DATA[0][1], DATA[0][2])
    longer = [long_query, DATA[3]]  # a longer query, 3 documents, longer documents and summaries
    _, alone = batch_of([short], model.config)
    _, padded = batch_of([*longer, short], model.config)
    n, tl = alone["docs"].shape[1:]
    lt = int(alone["dec_mask"][0].sum())
    assert padded["docs"].shape[1] > n and padded["docs"].shape[2] > tl  # whole padded documents and tokens
    assert padded["dec_in"].shape[1] > lt and padded["query"].shape[1] > alone["query"].shape[1]
    assert (padded["docs"][-1, n:] == PAD_ID).all()
    with torch.no_grad():
        a, p = model(alone), model(padded)
    tol = {"rtol": 1e-5, "atol": 1e-6}
    torch.testing.assert_close(p.example_loss[-1], a.example_loss[0], **tol)
    torch.testing.assert_close(p.nll[-1, :lt], a.nll[0, :lt], **tol)
    assert (p.nll[-1, lt:] == 0).all()
    for name in ("local", "global_"):
        torch.testing.assert_close(getattr(p.encoding, name)[-1, :n, :tl], getattr(a.encoding, name)[0], **tol)
        assert (getattr(p.encoding, name)[-1, n:] == 0).all()  # padded documents stay zero
        assert (getattr(p.encoding, name)[-1, :, tl:] == 0).all()
    t_pad = padded["docs"].shape[2]
    memory = p.encoding.memory[-1].view(-1, t_pad, model.config.d_model)
    torch.testing.assert_close(memory[:n, :tl], a.encoding.memory[0].view(n, tl, -1), **tol)
    if model.config.ordering:
        torch.testing.assert_close(p.encoding.doc_scores[-1, :n], a.encoding.doc_scores[0], **tol)
        assert (p.encoding.doc_scores[-1, n:] == 0).all()


def test_multi_head_pooling_weights_sum_to_one_per_head():
    torch.manual_seed(0)
    pool = MultiHeadPooling(32, 4, 0.0)
    x = torch.randn(2, 3, 7, 32)
    lengths = torch.tensor([[7, 3, 0], [1, 5, 2]])  # a padded (empty) document too
    mask = torch.arange(7) < lengths.unsqueeze(-1)
    pooled, w = pool(x, mask)
    assert pooled.shape == (2, 3, 4, 8) and w.shape == (2, 3, 4, 7)
    sums = w.sum(-1)
    real = lengths > 0
    torch.testing.assert_close(sums[real], torch.ones_like(sums[real]))
    assert (sums[~real] == 0).all() and (w.masked_select(~mask.unsqueeze(-2)) == 0).all()
    # the pooled value of head z is the weighted sum of head z's slice of W_b x
    values = pool.value(x).view(2, 3, 7, 4, 8)
    torch.testing.assert_close(pooled[0, 1, 2], (w[0, 1, 2, :, None] * values[0, 1, :, 2]).sum(0))
    # inside the model (the global layers' pooling, through a hook)
    model = random_model("baseline", seed=2, global_layers=2)
    seen = []
    for layer in model.global_layers:
        layer.pooling.register_forward_hook(lambda m, i, o: seen.append((i[1], o[1])))
    _, batch = batch_of(DATA[:3], model.config, with_target=False)
    with torch.no_grad():
        model.encode(batch)
    assert len(seen) == 2
    for tok_mask, weights in seen:
        s = weights.sum(-1)  # [B, N, H]
        docs = tok_mask.any(-1)
        torch.testing.assert_close(s[docs], torch.ones_like(s[docs]))
        assert (s[~docs] == 0).all() and (weights.masked_select(~tok_mask.unsqueeze(-2)) == 0).all()


def test_ordering_scores_are_a_distribution_learned_end_to_end():
    model = random_model("ordering", seed=4)
    _, batch = batch_of(DATA, model.config)
    out = model(batch)
    r = out.encoding.doc_scores
    doc_mask = out.encoding.doc_mask
    torch.testing.assert_close(r.sum(-1), torch.ones(len(DATA)))
    assert (r[~doc_mask] == 0).all() and (r[doc_mask] > 0).all()
    out.loss.backward()  # the summarisation loss reaches the document scorer (through eq. 2)
    assert model.ordering.w2.weight.grad.abs().sum() > 0 and model.ordering.w1.weight.grad.abs().sum() > 0
    pe = sinusoid(torch.tensor([0.25]), 6)[0]
    expected = [torch.sin(torch.tensor(0.25 / 10000 ** (j / 6))) for j in (0, 2, 4)]
    torch.testing.assert_close(pe[0::2], torch.stack(expected))


def test_each_switch_changes_the_computation_and_all_off_is_the_baseline():
    def make(variant: str) -> HierSumm:
        torch.manual_seed(7)
        return HierSumm(config(variant)).eval()

    baseline = make("baseline")
    names = set(baseline.state_dict())
    # L&L's model: embeddings (tied with the output), local layers, global layers, decoder layers
    assert {n.split(".")[0] for n in names} == {"embedding", "local_layers", "global_layers", "decoder_layers"}
    all_off = HierSumm(config("baseline", **dict.fromkeys(SWITCHES, False)))
    assert set(all_off.state_dict()) == names
    assert all(torch.equal(make("baseline").state_dict()[k], v) for k, v in baseline.state_dict().items())
    _, batch = batch_of(DATA, baseline.config)
    with torch.no_grad():
        ref = baseline(batch).logits
    for switch, prefix in COMPONENT_PREFIX.items():
        model = HierSumm(config("baseline", **{switch: True})).eval()
        missing, unexpected = model.load_state_dict(baseline.state_dict(), strict=False)
        assert not unexpected and missing and all(k.startswith(prefix) for k in missing), (switch, missing)
        assert set(model.state_dict()) - names == set(missing)
        _, b = batch_of(DATA, model.config)
        result = model(b)
        assert (result.logits.detach() - ref).abs().max() > 1e-3, switch
        result.loss.backward()  # every parameter of the component takes part in the computation
        unused = [n for n, p in model.named_parameters() if p.grad is None or not p.grad.abs().sum() > 0]
        assert not unused, (switch, unused)
    # the components add the paper's parameters on top of the baseline's, nothing replaces them
    full = make("full")
    assert names < set(full.state_dict())


# --------------------------------------------------------------------------- training and decoding

# loss thresholds the tiny models reach on the 5 toy triplets within the step budget
OVERFIT = {"baseline": (100, 0.02), "full": (100, 0.02)}


@pytest.mark.parametrize("variant", list(OVERFIT))
def test_tiny_model_overfits_toy_examples(variant, fit):
    steps, threshold = OVERFIT[variant]
    torch.manual_seed(0)
    model = HierSumm(config(variant))
    _, batch = batch_of(DATA, model.config)
    losses = fit(model, batch, steps)
    assert losses[-1] < threshold, losses[-10:]
    model.eval()
    summaries = [s for _, _, s in DATA]
    for beam in (1, 4):
        assert decode(model, vocab(), sources(), DecodeSettings(beam=beam)) == summaries


def partly_trained(fit, variant: str, seed: int = 2, steps: int = 25) -> HierSumm:
    """A tiny model trained a little on the toy data: its outputs depend on the input but are not yet the
    summaries (a random tiny transformer says the same word whatever the input)."""
    torch.manual_seed(seed)
    model = HierSumm(config(variant))
    fit(model, batch_of(DATA, model.config)[1], steps)
    return model.eval()


# the toy inputs and unseen combinations of their queries and documents
INPUTS = [
    *sources(),
    (t("river"), [t("rain")]),
    (DATA[0][0], DATA[2][1]),
    (DATA[3][0], DATA[4][1] + DATA[1][1]),
]


@pytest.mark.parametrize("variant", ["baseline", "full"])
def test_beam_one_equals_greedy(variant, fit):
    settings = (
        DecodeSettings(max_length=8),
        DecodeSettings(min_length=3, max_length=10, block_trigrams=True, length_penalty=1.0),
    )
    for model in (partly_trained(fit, variant), random_model(variant, seed=1)):
        _, batch = batch_of([(q, d, None) for q, d in INPUTS], model.config, with_target=False)
        check_beam_one_is_greedy(model, batch, settings, greedy_decode, beam_search)


def no_repeated_trigram(out: list[str]) -> bool:
    return len(set(zip(out, out[1:], out[2:]))) == max(0, len(out) - 2)


@pytest.mark.parametrize("variant", ["baseline", "full"])
def test_batched_decoding_equals_one_at_a_time(variant, fit):
    for trained, model in ((True, partly_trained(fit, variant)), (False, random_model(variant, seed=2))):
        for settings in (
            DecodeSettings(beam=1, max_length=8),
            DecodeSettings(beam=1, max_length=8, block_trigrams=True),
            DecodeSettings(beam=3, min_length=2, max_length=8, block_trigrams=True, length_penalty=0.4),
        ):
            together = decode(model, vocab(), INPUTS, settings, batch_size=len(INPUTS))
            alone = decode(model, vocab(), INPUTS, settings, batch_size=1)
            assert together == alone
            if settings.block_trigrams:
                assert all(no_repeated_trigram(o) for o in together)
            # unsorted batch (the order of the input) too, as ids
            _, batch = batch_of([(q, d, None) for q, d in INPUTS], model.config, with_target=False)
            run = beam_search if settings.beam > 1 else greedy_decode
            singles = []
            for q, d in INPUTS:
                _, one = batch_of([(q, d, None)], model.config, with_target=False)
                singles += run(model, one, settings)
            assert run(model, batch, settings) == singles
        if trained:
            assert len({tuple(x) for x in together}) >= 3  # outputs depend on the input
        else:  # the random one repeats itself unless trigrams are blocked
            free = decode(model, vocab(), INPUTS, DecodeSettings(max_length=8))
            assert not all(no_repeated_trigram(o) for o in free)


def test_deterministic_with_seed(fit):
    def build():
        model = HierSumm(config("full", dropout=0.2))
        return model, batch_of(DATA, model.config)[1]

    check_seeded_runs_agree(
        build, fit, 8, lambda m: decode(m, vocab(), sources(), DecodeSettings(beam=3, max_length=6))
    )


def test_save_load_round_trip(tmp_path):
    model = random_model("full", seed=4, tie_embeddings=False, label_smoothing=0.1)
    save_hiersumm(model, vocab(), tmp_path / "m")
    assert sorted(p.name for p in (tmp_path / "m").iterdir()) == ["config.json", "model.safetensors", "vocab.json"]
    loaded, voc = load_hiersumm(tmp_path / "m")
    assert voc == vocab() and loaded.config == model.config
    settings = DecodeSettings(beam=2, max_length=6)
    assert decode(loaded.eval(), voc, sources(), settings) == decode(model, vocab(), sources(), settings)
    with pytest.raises(ValueError, match="words"):
        save_hiersumm(model, Vocab([*SPECIALS, "a"]), tmp_path / "x")
