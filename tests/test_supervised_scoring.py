"""``wikiref.supervised.pretraining.score_examples``: every stage that scores with a trained scorer (pretrain's
evaluation, DUC fine-tuning and the comparison, QMSum, WCEP's supervised baseline, Psg2Sum's BERT baseline) takes the
device, the evaluation batch size and autocast from the ``model`` section the same way: autocast on CUDA only, where
``amp`` is on (before, WCEP and Psg2Sum scored in float32 on CUDA while the others autocast)."""

from __future__ import annotations

import pytest
import torch

import wikiref.model
import wikiref.model.training
from wikiref.stages.psg2sum import baselines as psg2sum_baselines
from wikiref.stages.wcep import supervised as wcep_supervised
from wikiref.supervised import duc_finetune, pretraining, qmsum_finetune


class _Model:
    def __init__(self):
        self.moved_to = None

    def to(self, device):
        self.moved_to = device
        return self


@pytest.mark.parametrize(
    ("device", "amp", "want_amp"),
    [("cpu", True, False), ("cuda", True, True), ("cuda", False, False)],
)
def test_score_examples_takes_the_model_sections_settings(monkeypatch, device, amp, want_amp):
    calls = []

    def fake_score(model, tokenizer, examples, **kw):
        calls.append(kw)
        return [[0.5] * len(e[1]) for e in examples]

    monkeypatch.setattr(wikiref.model, "score_sentences", fake_score)
    monkeypatch.setattr(wikiref.model.training, "resolve_device", lambda name: torch.device(device))
    model = _Model()
    examples = [(["q"], ["a", "b"]), (["q"], ["c"])]
    got = pretraining.score_examples(model, "tok", examples, {"device": "auto", "amp": amp, "eval_batch_size": "64"})
    assert got == [[0.5, 0.5], [0.5]]
    assert model.moved_to == torch.device(device)
    assert calls == [{"batch_size": 64, "device": torch.device(device), "amp": want_amp, "progress": False}]


def test_every_scoring_stage_goes_through_it():
    """No stage or supervised module calls score_sentences itself (each would set device, batch and autocast its
    own way)."""
    import inspect

    for module in (pretraining, duc_finetune, qmsum_finetune, psg2sum_baselines, wcep_supervised):
        source = inspect.getsource(module)
        calls = source.count("score_sentences(") - source.count("def score_sentences(")
        allowed = 1 if module is pretraining else 0  # score_examples's own call
        assert calls == allowed, f"{module.__name__} calls score_sentences directly"
