"""The resumable state of a training run (``out_dir/last/``): the model's weights, AdamW's moments, the RNG
states and the grad scaler, as safetensors + JSON; nothing is ever unpickled. Weights are written as CPU copies
(:mod:`wikiref.model.weights`), so a model whose RNN weights cuDNN flattened saves and resumes on CUDA too."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import torch

from wikiref.files import atomic_path, read_json, write_json
from wikiref.model.weights import load_weights, save_weights

LAST_DIR = "last"
STATE_JSON = "state.json"
STATE_TENSORS = "state.safetensors"

C = TypeVar("C")


def config_from_dict(cls: type[C], d: Mapping[str, Any], what: str) -> C:
    """The dataclass ``cls`` from a saved model folder's config dict; a key it does not know (a folder written by
    another version, a typo in a hand-written config) is an error naming ``what`` config and the keys."""
    unknown = set(d) - {f.name for f in dataclasses.fields(cls)}
    if unknown:
        raise ValueError(f"unknown {what} config keys {sorted(unknown)}")
    return cls(**d)


def checkpoint_complete(path: Path) -> bool:
    """Whether the folder ``path`` (``out_dir/last/``) holds a complete checkpoint, one a run can resume from.
    :func:`save_training_state` writes each file atomically and ``state.json`` last, so its presence is the
    marker: a ``last/`` folder without it is a first save cut short (nothing to resume from yet)."""
    return (Path(path) / STATE_JSON).is_file()


def save_training_state(
    path: Path,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    meta: Mapping[str, Any],
    scaler: torch.amp.GradScaler | None = None,
) -> None:
    """Everything needed to resume, as safetensors (tensors) + JSON (the rest); written atomically."""
    from safetensors.torch import save_file

    path.mkdir(parents=True, exist_ok=True)
    save_weights(model, path / "model.safetensors")  # CPU copies: cuDNN-flattened RNN weights save too
    opt = optimizer.state_dict()
    tensors: dict[str, torch.Tensor] = {}
    for idx, st in opt["state"].items():
        for k, v in st.items():
            if not torch.is_tensor(v):
                raise TypeError(f"optimizer state {k} is not a tensor")
            tensors[f"optim.{idx}.{k}"] = v.detach().cpu().contiguous()
    tensors["rng.cpu"] = torch.get_rng_state()
    if torch.cuda.is_available():
        for i, s in enumerate(torch.cuda.get_rng_state_all()):
            tensors[f"rng.cuda.{i}"] = s
    with atomic_path(path / STATE_TENSORS) as tmp:
        save_file(tensors, str(tmp))
    groups = [{k: (list(v) if isinstance(v, tuple) else v) for k, v in g.items()} for g in opt["param_groups"]]
    state = {**meta, "param_groups": groups}
    if scaler is not None:
        state["grad_scaler"] = {k: (float(v) if torch.is_tensor(v) else v) for k, v in scaler.state_dict().items()}
    write_json(path / STATE_JSON, state)  # written last: its presence marks a complete checkpoint


def load_training_state(
    path: Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer, device: torch.device, scaler=None
) -> dict:
    from safetensors.torch import load_file

    state = read_json(path / STATE_JSON)
    load_weights(model, path / "model.safetensors")  # into the model's parameters, wherever they are
    tensors = load_file(str(path / STATE_TENSORS))
    opt_state: dict[int, dict] = {}
    for key, v in tensors.items():
        if key.startswith("optim."):
            _, idx, k = key.split(".", 2)
            opt_state.setdefault(int(idx), {})[k] = v
    groups = [{**g, "betas": tuple(g["betas"])} if "betas" in g else g for g in state["param_groups"]]
    optimizer.load_state_dict({"state": opt_state, "param_groups": groups})
    torch.set_rng_state(tensors["rng.cpu"])
    if torch.cuda.is_available():
        cuda_states = [tensors[k] for k in sorted(tensors) if k.startswith("rng.cuda.")]
        if len(cuda_states) == torch.cuda.device_count():
            torch.cuda.set_rng_state_all(cuda_states)
    if scaler is not None and "grad_scaler" in state:
        scaler.load_state_dict(state["grad_scaler"])
    return state
