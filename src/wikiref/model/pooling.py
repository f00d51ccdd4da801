"""Sentence pooling over token states (journal §III-C, Table VIII).

Every mode turns the token states ``H_j`` of sentence *j* (its span [CLS] w_1 ... w_k [SEP] in the
window where it is scored) into one vector ``v_j``:

* ``cls``: the state of the sentence's own [CLS] token (the BERT baseline, §IV-D c).
* ``mean`` / ``max``: element-wise mean / max over the span.
* ``attention``: ``softmax(w . h_t) H_j`` with one trainable vector ``w``.
* ``query`` (Q-BERT, eq. 2-3): ``softmax(h_Q W_q H_j) H_j`` where ``h_Q`` is the mean of the
  query-token states of the same window and ``W_q`` is a trainable d x d matrix.

``w`` and ``W_q`` start at zero, so both attention modes start as mean pooling and learn from there
(the paper does not state an initialisation; zero keeps runs deterministic and the start neutral).

Sentences are gathered with a padded position matrix (``positions`` S x P, ``mask`` S x P), so a
batch of windows with any number of sentences is pooled in one tensor operation.
"""

from __future__ import annotations

import torch
from torch import nn

POOLING_MODES = ("cls", "max", "mean", "attention", "query")


def gather_spans(hidden: torch.Tensor, window: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """hidden (B, T, d), window (S,), positions (S, P) -> token states (S, P, d)."""
    return hidden[window.unsqueeze(1), positions]


def masked_softmax(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    logits = logits.masked_fill(~mask, torch.finfo(logits.dtype).min)
    return torch.softmax(logits, dim=-1) * mask


def query_vectors(hidden: torch.Tensor, query_mask: torch.Tensor) -> torch.Tensor:
    """Mean of the query-token states per window: hidden (B, T, d), query_mask (B, T) -> (B, d)."""
    m = query_mask.to(hidden.dtype).unsqueeze(-1)
    return (hidden * m).sum(1) / m.sum(1).clamp(min=1.0)


class SentencePooler(nn.Module):
    def __init__(self, mode: str, hidden_size: int) -> None:
        super().__init__()
        if mode not in POOLING_MODES:
            raise ValueError(f"unknown pooling {mode!r}; choose one of {POOLING_MODES}")
        self.mode = mode
        if mode == "attention":
            self.vector = nn.Parameter(torch.zeros(hidden_size))
        elif mode == "query":
            self.w_q = nn.Parameter(torch.zeros(hidden_size, hidden_size))

    @property
    def needs_query(self) -> bool:
        return self.mode == "query"

    def forward(
        self,
        hidden: torch.Tensor,  # (B, T, d)
        window: torch.Tensor,  # (S,) window index of each sentence
        positions: torch.Tensor,  # (S, P) token positions, padded (any valid index)
        mask: torch.Tensor,  # (S, P) bool, True on real positions; position 0 of each row is the sentence [CLS]
        query_mask: torch.Tensor | None = None,  # (B, T) bool, True on query tokens
    ) -> torch.Tensor:
        if self.mode == "cls":
            return hidden[window, positions[:, 0]]
        tokens = gather_spans(hidden, window, positions)  # (S, P, d)
        m = mask.unsqueeze(-1)
        if self.mode == "mean":
            return (tokens * m).sum(1) / m.sum(1).clamp(min=1)
        if self.mode == "max":
            return tokens.masked_fill(~m, torch.finfo(tokens.dtype).min).max(1).values
        if self.mode == "attention":
            weights = masked_softmax(tokens @ self.vector, mask)
        else:  # query
            if query_mask is None:
                raise ValueError("query pooling needs the query tokens (the no_query input has none)")
            h_q = query_vectors(hidden, query_mask)[window]  # (S, d)
            # Two einsums of two operands, not one of three ("sd,de,spe->sp"): with opt_einsum installed (as on
            # many GPU machines) torch plans a three-operand einsum with opt_einsum.contract_path from the
            # operands' concrete sizes, so torch.compile specialised the sentence dimension and recompiled for
            # every batch (docs/gpu.md). Without opt_einsum torch contracts left to right, which is exactly this:
            # the same operations, bit for bit (tests/test_model_pooling.py).
            logits = torch.einsum("se,spe->sp", torch.einsum("sd,de->se", h_q, self.w_q), tokens)
            weights = masked_softmax(logits, mask)
        return torch.einsum("sp,spd->sd", weights, tokens)
