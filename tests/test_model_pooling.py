"""Pooling modes against hand-computed values on a 2-window, 2-d toy batch."""

from __future__ import annotations

import math

import pytest
import torch

from wikiref.model.pooling import SentencePooler, query_vectors

# window 0: positions 0..4, window 1: positions 0..4; d = 2
HIDDEN = torch.tensor(
    [
        [[1.0, 0.0], [0.0, 2.0], [2.0, 2.0], [4.0, -2.0], [9.0, 9.0]],
        [[0.0, 1.0], [3.0, 3.0], [1.0, -1.0], [5.0, 5.0], [7.0, 7.0]],
    ]
)
# sentence A: window 0, span [1, 4) (3 tokens); sentence B: window 1, span [2, 4) (2 tokens)
WINDOW = torch.tensor([0, 1])
POSITIONS = torch.tensor([[1, 2, 3], [2, 3, 2]])
MASK = torch.tensor([[True, True, True], [True, True, False]])
QUERY_MASK = torch.tensor([[True, False, False, False, False], [True, True, False, False, False]])


def close(actual, expected):
    torch.testing.assert_close(actual, torch.tensor(expected, dtype=actual.dtype), rtol=1e-6, atol=1e-6)


def pool(mode, **params):
    p = SentencePooler(mode, 2)
    with torch.no_grad():
        for name, value in params.items():
            getattr(p, name).copy_(torch.tensor(value))
    return p(HIDDEN, WINDOW, POSITIONS, MASK, QUERY_MASK)


def test_cls_takes_the_sentence_first_token():
    assert pool("cls").tolist() == [[0.0, 2.0], [1.0, -1.0]]


def test_mean_and_max_ignore_padding():
    close(pool("mean"), [[2.0, 2.0 / 3.0], [3.0, 2.0]])
    assert pool("max").tolist() == [[4.0, 2.0], [5.0, 5.0]]


def test_attention_pooling_hand_computed():
    # w = (1, 0): logits A = [0, 2, 4], B = [1, 5]
    out = pool("attention", vector=[1.0, 0.0])
    za = [math.exp(0), math.exp(2), math.exp(4)]
    wa = [z / sum(za) for z in za]
    exp_a = [wa[0] * 0 + wa[1] * 2 + wa[2] * 4, wa[0] * 2 + wa[1] * 2 + wa[2] * -2]
    zb = [math.exp(1), math.exp(5)]
    wb = [z / sum(zb) for z in zb]
    exp_b = [wb[0] * 1 + wb[1] * 5, wb[0] * -1 + wb[1] * 5]
    close(out, [exp_a, exp_b])


def test_zero_initialised_attention_modes_start_as_mean_pooling():
    mean = pool("mean")
    assert torch.allclose(pool("attention"), mean)
    assert torch.allclose(pool("query"), mean)


def test_query_vectors_are_means_of_query_tokens():
    assert query_vectors(HIDDEN, QUERY_MASK).tolist() == [[1.0, 0.0], [1.5, 2.0]]


def test_query_pooling_hand_computed():
    # W_q = [[1, 0], [0, 2]]; h_Q(w0) = (1, 0) -> h_Q W_q = (1, 0): logits A = [0, 2, 4]
    # h_Q(w1) = (1.5, 2) -> h_Q W_q = (1.5, 4): logits B = [1.5 - 4, 7.5 + 20] = [-2.5, 27.5]
    out = pool("query", w_q=[[1.0, 0.0], [0.0, 2.0]])
    za = [math.exp(0), math.exp(2), math.exp(4)]
    wa = [z / sum(za) for z in za]
    exp_a = [wa[1] * 2 + wa[2] * 4, wa[0] * 2 + wa[1] * 2 - wa[2] * 2]
    wb1 = 1.0 / (1.0 + math.exp(-2.5 - 27.5))
    exp_b = [(1 - wb1) * 1 + wb1 * 5, (1 - wb1) * -1 + wb1 * 5]
    close(out, [exp_a, exp_b])


def _pool_with(hidden, mode, **params):
    p = SentencePooler(mode, 2)
    with torch.no_grad():
        for name, value in params.items():
            getattr(p, name).copy_(torch.tensor(value))
        return p(hidden, WINDOW, POSITIONS, MASK, QUERY_MASK)


@pytest.mark.parametrize("mode", ["cls", "mean", "max", "attention", "query"])
def test_only_query_pooling_reads_the_query_tokens(mode):
    """What sets the query mode apart: sentence A's vector moves with a query token of its window (position 0,
    outside A's span [1, 4)) in the query mode only; a token neither in the query nor in a sentence moves none."""
    params = {"attention": {"vector": [1.0, 0.0]}, "query": {"w_q": [[1.0, 0.0], [0.0, 2.0]]}}.get(mode, {})
    base = _pool_with(HIDDEN, mode, **params)
    query_token = HIDDEN.clone()
    query_token[0, 0] = torch.tensor([-3.0, 4.0])
    changed = _pool_with(query_token, mode, **params)
    assert torch.equal(changed[1], base[1])  # sentence B is in the other window
    assert torch.equal(changed[0], base[0]) is (mode != "query")
    outside = HIDDEN.clone()
    outside[0, 4] = torch.tensor([-50.0, 50.0])  # window 0, position 4: neither query nor sentence A
    assert torch.equal(_pool_with(outside, mode, **params), base)


def test_query_pooling_needs_query_and_gradients_reach_w_q():
    p = SentencePooler("query", 2)
    with pytest.raises(ValueError):
        p(HIDDEN, WINDOW, POSITIONS, MASK, None)
    p(HIDDEN, WINDOW, POSITIONS, MASK, QUERY_MASK).sum().backward()
    assert p.w_q.grad is not None and p.w_q.grad.abs().sum() > 0


def test_unknown_mode_rejected():
    with pytest.raises(ValueError):
        SentencePooler("median", 2)


def _three_operand_query_pooling(pooler, hidden, window, positions, mask, query_mask):
    """The query mode as it was written before: one einsum of three operands (torch contracts it left to right when
    opt_einsum is absent, as here)."""
    from wikiref.model.pooling import gather_spans, masked_softmax

    tokens = gather_spans(hidden, window, positions)
    h_q = query_vectors(hidden, query_mask)[window]
    weights = masked_softmax(torch.einsum("sd,de,spe->sp", h_q, pooler.w_q, tokens), mask)
    return torch.einsum("sp,spd->sd", weights, tokens)


def test_query_pooling_is_bit_for_bit_the_three_operand_einsum():
    """The two-operand form (kept so that opt_einsum cannot make torch.compile specialise the sentence count)
    computes what the three-operand einsum computed, forward and backward, bit for bit."""
    gen = torch.Generator().manual_seed(3)
    B, T, S, P, d = 3, 40, 23, 9, 16
    hidden = torch.randn(B, T, d, generator=gen)
    window = torch.randint(0, B, (S,), generator=gen)
    positions = torch.randint(0, T, (S, P), generator=gen)
    mask = torch.rand(S, P, generator=gen) < 0.8
    mask[:, 0] = True
    query_mask = torch.rand(B, T, generator=gen) < 0.3
    outs, grads = [], []
    for run in ("new", "old"):
        torch.manual_seed(0)
        p = SentencePooler("query", d)
        with torch.no_grad():
            p.w_q.copy_(torch.randn(d, d, generator=torch.Generator().manual_seed(4)))
        h = hidden.clone().requires_grad_(True)
        args = (h, window, positions, mask, query_mask)
        # the reference is torch's own left-to-right order (opt_einsum, installed for the tests, would plan it)
        with torch.backends.opt_einsum.flags(enabled=False):
            out = p(*args) if run == "new" else _three_operand_query_pooling(p, *args)
            out.square().sum().backward()
        outs.append(out)
        grads.append((h.grad, p.w_q.grad))
    assert torch.equal(outs[0], outs[1])
    assert torch.equal(grads[0][0], grads[1][0]) and torch.equal(grads[0][1], grads[1][1])


@pytest.mark.parametrize("mode", ["cls", "mean", "max", "attention", "query"])
def test_pooling_has_no_einsum_of_three_operands(mode, monkeypatch):
    """torch plans an einsum of three or more operands with opt_einsum (where installed) from concrete sizes, which
    makes torch.compile specialise and recompile per sentence count; the pooling keeps every einsum to two."""
    counts = []
    real = torch.einsum

    def einsum(equation, *operands):
        counts.append(
            len(operands[0]) if len(operands) == 1 and isinstance(operands[0], (list, tuple)) else len(operands)
        )
        return real(equation, *operands)

    monkeypatch.setattr(torch, "einsum", einsum)
    params = {"attention": {"vector": [1.0, 0.0]}, "query": {"w_q": [[1.0, 0.0], [0.0, 2.0]]}}.get(mode, {})
    pool(mode, **params)
    assert all(n <= 2 for n in counts), counts
    if mode == "query":
        assert counts  # the guard saw the query mode's einsums
