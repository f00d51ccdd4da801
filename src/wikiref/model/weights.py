"""A module's weights as safetensors, whatever device they live on and however they share storage.

``safetensors.torch.save_model`` refuses a module whose parameters are views into one buffer that none of
them covers whole: cuDNN does exactly that to an RNN's weights on CUDA (``flatten_parameters``), so saving a
seq2seq model trained on a GPU would fail. :func:`save_weights` writes a state dict of contiguous CPU
copies instead; parameters tied to each other (the same ``Parameter`` under two names) are written once and
the other names recorded in the metadata, as ``save_model`` does, so the file of a CPU model is byte for
byte the one ``save_model`` wrote. :func:`load_weights` reads to CPU and copies into the module's own
parameters (on any device, flattened or not; ``safetensors.torch.load_model`` also refuses a flattened RNN), with
``copy_`` as ``load_state_dict`` does (which skips parameters on the ``meta`` device, the stand-in accelerator of
the CPU-only device tests).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import torch

from wikiref.files import atomic_path


def _tied(module: torch.nn.Module) -> dict[str, str]:
    """Names of the state dict that hold the same tensor object as an earlier name -> that earlier name."""
    first: dict[int, str] = {}
    tied: dict[str, str] = {}
    for name, t in module.state_dict(keep_vars=True).items():
        if id(t) in first:
            tied[name] = first[id(t)]
        else:
            first[id(t)] = name
    return tied


def cpu_state_dict(module: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The state dict without tied duplicates, as contiguous CPU tensors that share no storage."""
    tied = _tied(module)
    return {
        name: t.detach().to("cpu").contiguous().clone() for name, t in module.state_dict().items() if name not in tied
    }


def save_weights(module: torch.nn.Module, path: str | os.PathLike, metadata: Mapping[str, str] | None = None) -> None:
    """Write the module's weights to ``path`` (safetensors, atomically)."""
    from safetensors.torch import save_file

    meta = dict(metadata) if metadata is not None else None
    for name, kept in _tied(module).items():
        meta = meta if meta is not None else {}
        meta.setdefault(name, kept)
    with atomic_path(path) as tmp:
        save_file(cpu_state_dict(module), str(tmp), metadata=meta)


def load_weights(module: torch.nn.Module, path: str | os.PathLike) -> None:
    """Copy the weights of ``path`` into ``module`` (strict: every name, no extra), on the module's devices."""
    from safetensors.torch import load_file

    tensors = load_file(str(path), device="cpu")
    tied = _tied(module)
    expected = [n for n in module.state_dict() if n not in tied]
    missing = sorted(set(expected) - set(tensors))
    unexpected = sorted(set(tensors) - set(expected))
    if missing or unexpected:
        raise RuntimeError(
            f"{path}: weights do not match the model (missing {missing[:5]}, unexpected {unexpected[:5]})"
        )
    targets = module.state_dict(keep_vars=True)
    for name in expected:
        if tensors[name].shape != targets[name].shape:
            raise RuntimeError(
                f"{path}: {name} has shape {tuple(tensors[name].shape)}, the model {tuple(targets[name].shape)}"
            )
    with torch.no_grad():  # what load_state_dict does, without its skip of parameters that report the meta device
        for name in expected:
            targets[name].copy_(tensors[name])
