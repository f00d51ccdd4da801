"""``model.compile`` (docs/gpu.md): how the training loop (:mod:`wikiref.model.training`) compiles a model with
torch.compile before it trains it: off, the model's forward with dynamic shapes, or the encoder alone as CUDA graphs
(``"cudagraphs"``, with training batches padded to multiples of :data:`CUDAGRAPH_PAD`); and the shape setting the
compiled model runs in."""

from __future__ import annotations

import contextlib
import logging

import torch

log = logging.getLogger(__name__)

COMPILE_CUDAGRAPHS = "cudagraphs"  # model.compile's third value (see compile_model)
CUDAGRAPH_PAD = 64  # with it, training batches are padded to a multiple of this: each padded length is one graph


def compile_setting(value: bool | str) -> bool | str:
    """``model.compile`` checked: ``False``, ``True`` or ``"cudagraphs"``."""
    if isinstance(value, bool) or value == COMPILE_CUDAGRAPHS:
        return value
    raise ValueError(f"model.compile must be false, true or {COMPILE_CUDAGRAPHS!r}, got {value!r}")


def compile_model(model: torch.nn.Module, setting: bool | str, backend: str = "inductor", is_main: bool = True) -> None:
    """``setting`` (``model.compile``, ``TrainSettings.compile``; ``backend``: torch.compile's backend): compile
    ``model`` in place with ``nn.Module.compile`` (its state_dict keeps its keys, without torch.compile's
    ``_orig_mod.`` prefix, so checkpoints and ``last/`` load into an uncompiled model on any device), before the
    training loop's DDP wraps it (DDP then calls the compiled forward; its gradient hooks are the parameters'). With
    ``True`` the whole model's forward is compiled (for the scorer: encoder, pooling, head; the loss and the
    optimizer stay eager); a bi scorer compiles its encoder (``SentenceScorer.compile``).

    Shapes are dynamic (``dynamic=True``): batches are padded to their longest window (a multiple of 8) and hold
    varying numbers of sentences, so static shapes would compile a graph for every new padded length and, past
    dynamo's recompile limit (8 per function), silently run eager. With dynamic shapes training compiles one graph
    (a batch with a dimension of size 1, e.g. a last batch of one window, adds one: dynamo specialises sizes 0 and
    1). The query pooling uses einsums of two operands: one of three would be planned by opt_einsum (where
    installed) from concrete sizes and recompile for every new sentence count (docs/gpu.md). On an H100 the whole
    model compiled trained bert-base 1.46x and MiniLM-L6 0.90x as fast as eager, with no recompilation; the option
    stays off in every parameter set (each job pays the compilation).
    Dev scoring runs eagerly (the loop's ``_score_dev``); a caller that scores with the model afterwards compiles its
    eval-mode graph then. No ``torch._dynamo.config`` setting is changed; :func:`compile_context` turns duck sizing
    off while the loop (:func:`wikiref.model.training.fit`) runs. The first steps pay the compilation (inductor:
    about 40 s for a tiny encoder on 2 CPU cores, from a cold cache).

    ``"cudagraphs"`` (the eager loop is host-bound on an H100): the encoder alone, in inductor's ``reduce-overhead``
    mode (on CUDA, forward and backward replayed as CUDA graphs, one recorded per input shape): its inputs are
    (windows, length padded to a multiple of :data:`CUDAGRAPH_PAD`), a small set, while the pooling's sizes follow
    each batch's sentence count. Cross pairing only. On an H100: bert-base 1.37x and MiniLM-L6 1.57x the
    eager loop's windows/s, after about 50-60 s of compilation (docs/gpu.md)."""
    if not setting:
        return
    if setting == COMPILE_CUDAGRAPHS:
        if getattr(getattr(model, "config", None), "pairing", "cross") != "cross" or not hasattr(model, "encoder"):
            raise ValueError("model.compile: cudagraphs needs a cross-pairing scorer (one encoder call per batch)")
        model.encoder.compile(dynamic=True, backend=backend, mode="reduce-overhead")
        if is_main:
            log.info("encoder compiled in place for CUDA graphs (torch.compile reduce-overhead, backend %s)",
                     backend)  # fmt: skip
        return
    model.compile(dynamic=True, backend=backend)
    if is_main:
        log.info("model compiled in place (torch.compile, backend %s, dynamic shapes)", backend)


def compile_context(enabled: bool = True):
    """What a model compiled by :func:`compile_model` runs in (compilation happens at its first calls): the
    symbolic-shape setting ``use_duck_shape`` off (``torch.fx.experimental._config``, patched here only, restored
    on exit). With duck sizing, dimensions that happen to be equal when a graph is compiled (e.g. 19 windows and a
    longest sentence of 19 tokens) are assumed equal forever, and the first batch where they differ compiles the
    graph again (seen on the CPU). A no-op when not ``enabled``."""
    if not enabled:
        return contextlib.nullcontext()
    from torch.fx.experimental import _config as fx_config

    return fx_config.patch(use_duck_shape=False)
