"""Training loop for sentence scorers (journal §III-E, §IV-A), reused by DUC fine-tuning and by the
abstractive models.

:func:`train` takes generic :class:`ScoringExample` s (query levels, document sentences, one target
per sentence: 0/1 labels for a classification head, oracle scores for a regression head), so the
WikiRef pre-training (``wikiref.stages.pretrain``) and the DUC fine-tuning share it. It is :func:`fit`
with the scorer's :class:`ScorerTask`; :func:`fit` trains any model given a :class:`TrainingTask`
(how items are batched, the loss, dev evaluation, saving), e.g. the abstractive models of
:mod:`wikiref.model.abstractive`, with everything below.

* AdamW (bias and LayerNorm weights without weight decay, as in BERT), learning rate with linear
  warm-up (``warmup_ratio``, 0 in the paper) and linear decay to 0 through ``torch.optim.lr_scheduler.LambdaLR``
  (:func:`make_scheduler`, one scheduler step per optimizer step); gradient clipping;
  gradient accumulation (``grad_accum_steps`` micro-batches per optimizer step).
* Length-bucketed dynamic padding: each epoch the windows are shuffled (seeded by seed + epoch),
  cut into buckets of ``bucket_batches`` batches, sorted by length inside a bucket, batched, and the
  batch order is shuffled again; every batch is padded only to its longest window.
* Deterministic on CPU for a given seed (``torch.use_deterministic_algorithms``), mixed precision
  on CUDA (``amp``), device ``auto`` = CUDA when available.
* After every epoch the dev set is scored; the best epoch (``select_fn`` on the dev scores, higher
  is better; default: minus the dev loss) is saved to ``out_dir`` as model.safetensors + config.json
  + tokenizer. The last epoch's full state (weights, AdamW moments, RNG, history) is kept in
  ``out_dir/last/`` as safetensors + JSON, and a rerun with the same settings and data resumes from
  it. Nothing is ever unpickled. ``last/`` is removed once training completes. The scheduler is not
  saved: it is rebuilt from the saved ``global_step``, so a ``last/`` resumes the same way whatever its
  ``param_groups`` hold (they may lack ``initial_lr`` and hold the lr of the step just taken, where the
  LambdaLR code stores the next step's lr; neither value is read back).
* ``grad_hook(model)`` runs after the backward pass of each optimizer step (before clipping) and
  ``step_hook(model)`` after each optimizer step: e.g. mask gradients / restore frozen weights for
  sparse-subnetwork fine-tuning.
* Multi-process data parallel (DDP) when started under ``torchrun`` (WORLD_SIZE > 1), or in a process group the
  caller formed (of any size, one included): NCCL on CUDA, gloo on CPU; each rank takes every WORLD_SIZE-th batch;
  rank 0 evaluates and writes.
* ``compile`` (params ``model.compile``, off by default): the model is compiled in place with ``torch.compile``
  (dynamic shapes) before training and DDP; ``cudagraphs``: the encoder alone, replayed as CUDA graphs; see
  :mod:`wikiref.model.compiling`.
* Metrics go to dvclive (``live_dir``: ``metrics.json`` + ``plots/metrics/**.tsv``), so
  ``dvc plots show`` draws the loss and dev curves; a tqdm bar shows progress.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import logging
import math
import os
import shutil
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from wikiref.files import read_json, write_json
from wikiref.model.checkpoint import (
    LAST_DIR,
    STATE_JSON,
    checkpoint_complete,
    load_training_state,
    save_training_state,
)
from wikiref.model.compiling import (
    COMPILE_CUDAGRAPHS,
    CUDAGRAPH_PAD,
    compile_context,
    compile_model,
    compile_setting,
)
from wikiref.model.optim import make_optimizer, make_scheduler
from wikiref.model.packing import PackedWindow
from wikiref.model.scorer import PAD_MULTIPLE, SentenceScorer, autocast_context
from wikiref.model.scoring_task import (
    BiEncoderTask,
    ScorerTask,
    ScoringExample,
    TrainingTask,
)

__all__ = [
    "TrainResult",
    "TrainSettings",
    "dist_info",
    "epoch_batches",
    "fit",
    "in_process_group",
    "resolve_device",
    "train",
]

log = logging.getLogger(__name__)

# TrainSettings fields taken as they are from a params training section (``pretrain`` or ``finetune``).
_SECTION_KEYS = (
    "epochs",
    "batch_size",
    "grad_accum_steps",
    "lr",
    "head_lr_scale",
    "eps",
    "weight_decay",
    "warmup_ratio",
    "max_grad_norm",
    "bucket_batches",
    "log_every_steps",
)


@dataclass
class TrainSettings:
    epochs: int = 3
    batch_size: int = 24  # windows per forward pass and process
    grad_accum_steps: int = 1  # micro-batches per optimizer step
    lr: float = 3e-5
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.01
    head_lr_scale: float = 1.0  # lr multiplier for the parameters created for this task (pooler, head)
    warmup_ratio: float = 0.0
    max_grad_norm: float | None = 1.0
    bucket_batches: int = 50
    eval_batch_size: int = 32
    log_every_steps: int = 10
    seed: int = 13
    device: str = "auto"
    amp: bool = True
    deterministic: bool = True
    progress: bool = True
    keep_last: bool = False  # keep out_dir/last/ after training completes
    # A fixed number of optimizer steps instead of whole epochs (the source comparison's equal budget): the
    # run takes as many epochs as needed (ceil(max_steps / steps per epoch)), stops after max_steps, and
    # the lr schedule spans max_steps; dev is scored at the end of every (possibly cut) epoch.
    max_steps: int | None = None
    # torch.compile the model in place before training (params model.compile; wikiref.model.compiling): False
    # (off: nothing changes), True (the model's forward) or "cudagraphs" (the encoder, mode reduce-overhead,
    # batches padded to multiples of CUDAGRAPH_PAD). compile_backend is torch.compile's backend (the CPU tests:
    # "aot_eager", dynamo and AOTAutograd without inductor's C++ code generation, half the compile time); not a
    # params key.
    compile: bool | str = False
    compile_backend: str = "inductor"

    @classmethod
    def from_params(cls, seed: int, model: Mapping, section: Mapping, progress: bool = True) -> TrainSettings:
        """Settings from a params section with the training keys (``pretrain`` or ``finetune``) and
        the ``model`` section (device, AMP, evaluation batch size, compile). ``compile`` absent = off: the
        abstractive jobs are passed only ``model.device``, ``amp`` and ``eval_batch_size``."""
        return cls(
            **{k: section[k] for k in _SECTION_KEYS},
            betas=tuple(section["betas"]),
            **{k: model[k] for k in ("eval_batch_size", "device", "amp")},
            compile=compile_setting(model.get("compile", False)),
            seed=seed,
            progress=progress,
        )

    def __post_init__(self) -> None:
        self.compile = compile_setting(self.compile)

    def fingerprint_dict(self) -> dict:
        d = dataclasses.asdict(self)
        for k in ("device", "amp", "progress", "keep_last", "eval_batch_size", "log_every_steps"):
            d.pop(k)
        for k in ("compile", "compile_backend"):  # how the same model is computed: last/ resumes either way
            d.pop(k)
        d["betas"] = list(d["betas"])
        if d["max_steps"] is None:  # runs without a step budget keep their fingerprint (resumable last/)
            d.pop("max_steps")
        return d


@dataclass
class TrainResult:
    best_epoch: int
    best_metric: float
    history: list[dict]
    pack_stats: dict
    dev_pack_stats: dict
    train_seconds: float  # the whole run (training, dev scoring, checkpoints)
    windows_per_second: float  # training windows / seconds spent in forward + backward + optimizer steps
    windows_per_cpu_second: float = 0.0  # the same per CPU second of this process (steadier on a shared machine)
    tokens_per_second: float = 0.0  # training tokens (the items' lengths) / the same seconds
    resumed_from_epoch: int = 0
    world_size: int = 1
    extra: dict = field(default_factory=dict)
    # dev scores of the best epoch (rank 0, this run only; not serialised)
    best_dev_scores: list | None = field(default=None, repr=False)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d.pop("best_dev_scores")
        return d


# --------------------------------------------------------------------------- helpers


def resolve_device(name: str = "auto", local_rank: int | None = None) -> torch.device:
    if name == "auto":
        name = "cuda" if torch.cuda.is_available() else "cpu"
    if name == "cuda" and local_rank is not None:
        return torch.device("cuda", local_rank)
    return torch.device(name)


def dist_info() -> tuple[int, int, int]:
    """(rank, world_size, local_rank) from torchrun's environment; (0, 1, 0) otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    return int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0"))


def epoch_batches(
    windows: Sequence[PackedWindow], batch_size: int, bucket_batches: int, seed: int, epoch: int
) -> list[list[int]]:
    """Length-bucketed, shuffled batches of window indices; depends only on (seed, epoch)."""
    g = torch.Generator().manual_seed(seed * 100_003 + epoch)
    order = torch.randperm(len(windows), generator=g).tolist()
    bucket = max(1, batch_size * bucket_batches)
    batches: list[list[int]] = []
    for b0 in range(0, len(order), bucket):
        chunk = sorted(order[b0 : b0 + bucket], key=lambda i: len(windows[i]))
        batches.extend(chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size))
    perm = torch.randperm(len(batches), generator=g).tolist()
    return [batches[i] for i in perm]


# --------------------------------------------------------------------------- training


@dataclass
class _LoopState:
    """What :func:`train` updates as it goes; ``last/`` restores the first five fields."""

    start_epoch: int = 0
    global_step: int = 0  # optimizer steps taken (all runs)
    best_metric: float = -math.inf
    best_epoch: int = -1  # 0-based; -1 before the first dev evaluation
    history: list[dict] = field(default_factory=list)
    resumed_from: int = 0  # = start_epoch when resumed, else 0
    best_dev_scores: list | None = None  # this run only
    seen_windows: int = 0  # training windows this process went through in this run
    loop_seconds: float = 0.0  # wall-clock / CPU seconds in forward + backward + optimizer steps
    loop_cpu: float = 0.0
    seen_tokens: int = 0  # their tokens (len of each item)
    running_loss: float = 0.0  # sum and count of the current epoch's micro-batch losses
    running_n: int = 0
    pending_losses: list = field(default_factory=list)  # losses still on the accelerator (_add_loss)


@dataclass
class _Run:
    """What stays fixed during one call of :func:`train`."""

    settings: TrainSettings
    model: torch.nn.Module
    task: TrainingTask
    out_dir: Path
    device: torch.device
    rank: int
    world: int
    amp: bool
    local_batches: int  # batches per process and epoch
    total_steps: int
    fingerprint: str
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    scaler: torch.amp.GradScaler | None
    ddp_model: torch.nn.Module  # the model, or its DistributedDataParallel wrapper
    live: Any  # dvclive.Live on rank 0 with a live_dir, else None
    select_fn: Callable[[list[np.ndarray]], float] | None
    grad_hook: Callable[[torch.nn.Module], None] | None
    step_hook: Callable[[torch.nn.Module], None] | None

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def distributed(self) -> bool:
        return self.ddp_model is not self.model  # wrapped once, in a process group (_wrap_ddp)

    @property
    def last_dir(self) -> Path:
        return self.out_dir / LAST_DIR


def train(
    model: SentenceScorer,
    tokenizer,
    train_examples: Sequence[ScoringExample],
    dev_examples: Sequence[ScoringExample],
    settings: TrainSettings,
    out_dir: str | os.PathLike,
    *,
    select_fn: Callable[[list[np.ndarray]], float] | None = None,
    grad_hook: Callable[[torch.nn.Module], None] | None = None,
    step_hook: Callable[[torch.nn.Module], None] | None = None,
    live_dir: str | os.PathLike | None = None,
) -> TrainResult:
    """Train the sentence scorer ``model`` in place; save the best dev epoch to ``out_dir`` (see the module
    docstring).

    ``select_fn(dev_scores)`` -> float, higher is better (e.g. ROUGE-2 at the best threshold);
    without it the best epoch is the one with the lowest dev loss.
    """
    if model.config.pairing == "bi":  # query and sentences encoded alone (wikiref.model.biencoder)
        task = BiEncoderTask(model, tokenizer, train_examples, dev_examples)
    else:
        pad = CUDAGRAPH_PAD if settings.compile == COMPILE_CUDAGRAPHS else PAD_MULTIPLE
        task = ScorerTask(model, tokenizer, train_examples, dev_examples, pad)
    return fit(
        model,
        task,
        settings,
        out_dir,
        select_fn=select_fn,
        grad_hook=grad_hook,
        step_hook=step_hook,
        live_dir=live_dir,
    )


def fit(
    model: torch.nn.Module,
    task: TrainingTask,
    settings: TrainSettings,
    out_dir: str | os.PathLike,
    *,
    select_fn: Callable[[list], float] | None = None,
    grad_hook: Callable[[torch.nn.Module], None] | None = None,
    step_hook: Callable[[torch.nn.Module], None] | None = None,
    live_dir: str | os.PathLike | None = None,
) -> TrainResult:
    """Train ``model`` in place on ``task`` (any :class:`TrainingTask`); the loop of :func:`train`."""
    out_dir = Path(out_dir)
    rank, world, device = _init_process(settings)
    local_batches, total_steps, warmup, n_epochs = _count_steps(task.train_items, settings, world)
    model.to(device)
    model.train()
    compile_model(model, settings.compile, settings.compile_backend, is_main=rank == 0)  # before DDP wraps it
    optimizer = make_optimizer(model, settings)
    amp = settings.amp and device.type == "cuda"
    scaler = torch.amp.GradScaler("cuda") if amp and not torch.cuda.is_bf16_supported() else None
    fingerprint = _fingerprint(settings, task, world)
    torch.manual_seed(settings.seed + rank)  # dropout; replaced by the saved RNG state when resuming
    state = _resume_or_start(out_dir / LAST_DIR, fingerprint, model, optimizer, device, scaler, is_main=rank == 0)
    scheduler = make_scheduler(optimizer, settings.lr, total_steps, warmup, done_steps=state.global_step)
    run = _Run(
        settings,
        model,
        task,
        out_dir,
        device,
        rank,
        world,
        amp,
        local_batches,
        total_steps,
        fingerprint,
        optimizer,
        scheduler,
        scaler,
        ddp_model=_wrap_ddp(model, device),
        live=_open_live(live_dir, rank, state.resumed_from, settings, task),
        select_fn=select_fn,
        grad_hook=grad_hook,
        step_hook=step_hook,
    )

    t0 = time.perf_counter()
    with compile_context(settings.compile):
        for epoch in range(state.start_epoch, n_epochs):
            epoch_loss = _train_epoch(run, state, epoch)
            _end_epoch(run, state, epoch, epoch_loss)
    return _finish(run, state, seconds=time.perf_counter() - t0)


# --------------------------------------------------------------------------- parts of train()


def in_process_group() -> bool:
    """Whether this process trains in a process group (DistributedDataParallel, all-reduced losses, barriers)."""
    return torch.distributed.is_available() and torch.distributed.is_initialized()


def _init_process(settings: TrainSettings) -> tuple[int, int, torch.device]:
    """(rank, world size, device); joins the process group under torchrun and makes CPU runs deterministic.

    A group its caller formed is used as it is, of any size: a group of one trains through the same
    DistributedDataParallel, all-reduces and barriers as a larger one, which is how one GPU tests NCCL
    (``scripts/gpu-check``'s ``ddp/one-process``; torchrun with one process forms no group)."""
    rank, world, local_rank = dist_info()
    device = resolve_device(settings.device, local_rank if world > 1 else None)
    if world > 1 and not in_process_group():
        if device.type == "cuda":  # NCCL's and every library's "current" GPU: this rank's, not GPU 0
            torch.cuda.set_device(device)
        torch.distributed.init_process_group(backend="nccl" if device.type == "cuda" else "gloo")
    if in_process_group():
        rank, world = torch.distributed.get_rank(), torch.distributed.get_world_size()
        if device.type == "cuda" and device.index is None:  # DistributedDataParallel wants the GPU's index
            device = torch.device("cuda", torch.cuda.current_device())
    if settings.deterministic and device.type == "cpu":
        torch.use_deterministic_algorithms(True, warn_only=True)
    if device.type == "cuda":
        # TF32 follows model.amp: with mixed precision the float32 products left outside autocast may use it too;
        # without, float32 stays float32 (e.g. a CPU / CUDA comparison)
        torch.backends.cuda.matmul.allow_tf32 = settings.amp
        torch.backends.cudnn.allow_tf32 = settings.amp
    return rank, world, device


def _count_steps(items: Sequence, settings: TrainSettings, world: int) -> tuple[int, int, int, int]:
    """(batches per process and epoch, optimizer steps in the whole run, warm-up steps, epochs)."""
    n_batches = len(epoch_batches(items, settings.batch_size, settings.bucket_batches, settings.seed, 0))
    local_batches = n_batches // world
    if local_batches == 0:
        raise ValueError(f"{n_batches} batches cannot feed {world} processes")
    per_epoch = math.ceil(local_batches / settings.grad_accum_steps)
    if settings.max_steps is not None:
        if settings.max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {settings.max_steps}")
        total_steps, epochs = settings.max_steps, math.ceil(settings.max_steps / per_epoch)
    else:
        total_steps, epochs = per_epoch * settings.epochs, settings.epochs
    return local_batches, total_steps, int(settings.warmup_ratio * total_steps), epochs


def _fingerprint(settings: TrainSettings, task: TrainingTask, world: int) -> str:
    """What ``last/`` must have been written with to be resumed: settings, model config, data, world size."""
    return hashlib.sha1(
        json.dumps(
            {"settings": settings.fingerprint_dict(), **task.fingerprint(), "world": world},
            sort_keys=True,
        ).encode()
    ).hexdigest()


def _resume_or_start(
    last: Path,
    fingerprint: str,
    model: torch.nn.Module,
    optimizer: torch.optim.Optimizer,
    device: torch.device,
    scaler,
    is_main: bool,
) -> _LoopState:
    """The loop state from ``last/`` when it was written with the same settings and data (the model, optimizer,
    grad scaler and RNG are restored in place); a fresh state otherwise."""
    if not checkpoint_complete(last):
        return _LoopState()
    if read_json(last / STATE_JSON).get("fingerprint") != fingerprint:
        if is_main:
            log.warning("ignoring %s: it was written with other settings or data", last)
        return _LoopState()
    meta = load_training_state(last, model, optimizer, device, scaler)
    state = _LoopState(
        start_epoch=meta["epoch"] + 1,
        global_step=meta["global_step"],
        best_metric=meta["best_metric"],
        best_epoch=meta["best_epoch"],
        history=meta["history"],
        resumed_from=meta["epoch"] + 1,
    )
    log.info(
        "resuming from %s after epoch %d (best so far: epoch %d, %.4f)",
        last,
        meta["epoch"] + 1,
        state.best_epoch + 1,
        state.best_metric,
    )
    return state


def _barrier(device: torch.device) -> None:
    """All ranks wait here; NCCL is told this rank's GPU (it would otherwise guess one from the rank)."""
    torch.distributed.barrier(device_ids=[device.index] if device.type == "cuda" else None)


def _wrap_ddp(model: torch.nn.Module, device: torch.device) -> torch.nn.Module:
    if not in_process_group():
        return model
    device_ids = [device.index] if device.type == "cuda" else None
    return torch.nn.parallel.DistributedDataParallel(model, device_ids=device_ids)


def _files_only_live():
    """dvclive's ``Live`` that writes its files and nothing else.

    Stock ``Live`` looks for the enclosing Git/DVC repository when it opens (reading ``.git/`` and ``.dvc/``,
    and running ``dvc init`` in a Git repository that has no DVC) to name Studio experiments. A training job
    must read only the files its rule declares and write only its outputs, so that discovery is skipped: the
    job writes curves, params and metrics under ``live_dir`` and never touches the repository.
    """
    from dvclive import Live

    class FilesOnlyLive(Live):
        def _init_dvc(self):
            # dvclive has no switch for this; overriding its repository hook is the one way to keep it out.
            self._dvc_file = "dvc.yaml"

    return FilesOnlyLive


def _open_live(
    live_dir: str | os.PathLike | None, rank: int, resumed_from: int, settings: TrainSettings, task: TrainingTask
):
    """dvclive on rank 0 (appending to the curves when resuming), else None."""
    if live_dir is None or rank != 0:
        return None
    live = _files_only_live()(dir=str(live_dir), resume=resumed_from > 0, save_dvc_exp=False, dvcyaml=False)
    if resumed_from == 0:
        live.log_params(
            {
                "train": settings.fingerprint_dict(),
                "model": task.live_params(),
            }
        )
    return live


def _train_epoch(run: _Run, state: _LoopState, epoch: int) -> float:
    """One pass over this process's batches; returns the mean micro-batch loss (averaged over processes)."""
    from tqdm.auto import tqdm

    s, items = run.settings, run.task.train_items
    batches = epoch_batches(items, s.batch_size, s.bucket_batches, s.seed, epoch)
    mine = batches[: run.local_batches * run.world][run.rank :: run.world]
    state.running_loss, state.running_n = 0.0, 0
    state.pending_losses.clear()
    # tqdm on a terminal; in logs (Snakemake) a line every log_every_steps optimizer steps instead
    bar = tqdm(
        total=len(mine),
        desc=f"epoch {epoch + 1}",
        unit="batch",
        disable=None if (s.progress and run.is_main) else True,
        mininterval=2,
    )
    run.optimizer.zero_grad(set_to_none=True)
    for i, idx in enumerate(mine):
        micro = i % s.grad_accum_steps
        last_micro = micro == s.grad_accum_steps - 1 or i == len(mine) - 1
        n_micro = min(s.grad_accum_steps, len(mine) - (i - micro))  # the last group may be short
        t_batch, c_batch = time.perf_counter(), time.process_time()
        if micro == 0 and s.compile == COMPILE_CUDAGRAPHS:
            # a new iteration of the CUDA graphs per optimizer step, not per micro-batch: the gradients an earlier
            # micro-batch left in a graph's memory stay live, and the later ones are recorded around them
            torch.compiler.cudagraph_mark_step_begin()
        _add_loss(run, state, _forward_backward(run, idx, n_micro, sync=last_micro))
        state.seen_windows += len(idx)
        state.seen_tokens += sum(len(items[j]) for j in idx)
        if last_micro:
            _optimizer_step(run, state, epoch)
        state.loop_seconds += time.perf_counter() - t_batch
        state.loop_cpu += time.process_time() - c_batch
        bar.update(1)
        if not state.pending_losses:  # on CUDA only when the losses were fetched (every log_every_steps steps)
            bar.set_postfix(loss=f"{state.running_loss / state.running_n:.4f}")
        if last_micro and state.global_step >= run.total_steps:  # the step budget (max_steps) is spent
            break
    bar.close()
    if run.device.type == "cuda":  # the work queued by the last steps belongs to the timed loop
        t_sync = time.perf_counter()
        torch.cuda.synchronize(run.device)
        state.loop_seconds += time.perf_counter() - t_sync
    _fetch_losses(state)
    epoch_loss = state.running_loss / max(1, state.running_n)
    if run.distributed:
        t = torch.tensor([epoch_loss], device=run.device, dtype=torch.float64)  # the Python float, not rounded
        torch.distributed.all_reduce(t)
        epoch_loss = float(t) / run.world
    return epoch_loss


def _add_loss(run: _Run, state: _LoopState, loss: torch.Tensor) -> None:
    """Add a micro-batch loss to the epoch's running sum. On the CPU at once (``.item()`` costs nothing there);
    on an accelerator it stays on the device until :func:`_fetch_losses` copies the pending ones in one transfer
    (every ``log_every_steps`` optimizer steps and at the end of the epoch), so a step never waits for the GPU.
    Either way the same float32 values are summed in the same order: the running loss is identical."""
    if run.device.type == "cpu":
        state.running_loss += loss.item()
        state.running_n += 1
    else:
        state.pending_losses.append(loss)


def _fetch_losses(state: _LoopState) -> None:
    if state.pending_losses:
        for v in torch.stack(state.pending_losses).tolist():
            state.running_loss += v
            state.running_n += 1
        state.pending_losses.clear()


def _forward_backward(run: _Run, idx: list[int], n_micro: int, sync: bool) -> torch.Tensor:
    """Loss of one micro-batch (``train_items[i] for i in idx``); its gradient / ``n_micro`` is added to the
    parameters' (DDP all-reduces the gradients only when ``sync``, on the last micro-batch of an optimizer step)."""
    batch = run.task.batch(idx, run.device)
    no_sync = run.distributed and not sync
    with run.ddp_model.no_sync() if no_sync else contextlib.nullcontext():
        with autocast_context(run.device, run.amp):
            output = run.task.forward(run.ddp_model, batch)
        loss = run.task.loss(run.model, output, batch)
        scaled = loss / n_micro
        (run.scaler.scale(scaled) if run.scaler else scaled).backward()
    return loss.detach()


def _optimizer_step(run: _Run, state: _LoopState, epoch: int) -> None:
    """Unscale (AMP), grad_hook, clip, step at the scheduled lr, step_hook, move the schedule on, log."""
    optimizer, scaler, scheduler = run.optimizer, run.scaler, run.scheduler
    if scaler:
        scaler.unscale_(optimizer)
    if run.grad_hook is not None:
        run.grad_hook(run.model)
    if run.settings.max_grad_norm:
        torch.nn.utils.clip_grad_norm_(run.model.parameters(), run.settings.max_grad_norm)
    lr = scheduler.lr_lambdas[0](scheduler.last_epoch)  # this step's lr of the groups with lr_scale 1
    if scaler:
        scaler.step(optimizer)
        scaler.update()
    else:
        optimizer.step()
    if run.step_hook is not None:
        run.step_hook(run.model)  # sees the lr the step used
    scheduler.step()  # the next step's lr
    optimizer.zero_grad(set_to_none=True)
    state.global_step += 1
    if state.global_step % run.settings.log_every_steps == 0:
        _log_step(run, state, epoch, lr)


def _log_step(run: _Run, state: _LoopState, epoch: int, lr: float) -> None:
    _fetch_losses(state)
    loss = state.running_loss / state.running_n
    if run.is_main:
        log.info(
            "epoch %d step %d/%d: loss %.4f, %.2f windows/s",
            epoch + 1,
            state.global_step,
            run.total_steps,
            loss,
            state.seen_windows / state.loop_seconds if state.loop_seconds else 0.0,
        )
    if run.live is not None:
        run.live.step = state.global_step  # x axis = optimizer steps (set before logging)
        run.live.log_metric("train/loss", loss)
        run.live.log_metric("train/lr", lr)
        run.live.next_step()


def _end_epoch(run: _Run, state: _LoopState, epoch: int, epoch_loss: float) -> None:
    """Rank 0: score dev, keep the best epoch in ``out_dir``, log, write the resumable ``last/``; then sync."""
    if run.is_main:
        dev_scores, dev_loss, metric = _score_dev(run)
        improved = metric > state.best_metric
        if improved:
            state.best_metric, state.best_epoch, state.best_dev_scores = metric, epoch, dev_scores
            run.task.save(run.model, run.out_dir)
        record = {
            "epoch": epoch + 1,
            "train_loss": epoch_loss,
            "global_step": state.global_step,
            "dev_loss": dev_loss,
            "dev_metric": metric,
            "best": improved,
        }
        state.history.append(record)
        _log_epoch(run, record)
        save_training_state(
            run.last_dir,
            run.model,
            run.optimizer,
            {
                "fingerprint": run.fingerprint,
                "epoch": epoch,
                "best_metric": state.best_metric,
                "best_epoch": state.best_epoch,
                "history": state.history,
                "global_step": state.global_step,
            },
            run.scaler,
        )
    if run.distributed:
        _barrier(run.device)


def _score_dev(run: _Run) -> tuple[list[np.ndarray], float | None, float]:
    """(dev scores, dev loss, selection metric: ``select_fn`` of the scores, else minus the loss). A compiled model
    scores eagerly (``force_eager``): once per epoch, not worth a second graph (eval mode, no_grad) to compile."""
    with torch.compiler.set_stance("force_eager") if run.settings.compile else contextlib.nullcontext():
        dev_scores, dev_loss = run.task.evaluate(
            run.model, device=run.device, batch_size=run.settings.eval_batch_size, amp=run.amp
        )
    if run.select_fn is not None:
        return dev_scores, dev_loss, run.select_fn(dev_scores)
    return dev_scores, dev_loss, -(dev_loss if dev_loss is not None else 0.0)


def _log_epoch(run: _Run, record: dict) -> None:
    dev_loss, metric = record["dev_loss"], record["dev_metric"]
    log.info(
        "epoch %d: train loss %.4f, dev loss %s, dev metric %.4f%s",
        record["epoch"],
        record["train_loss"],
        "n/a" if dev_loss is None else f"{dev_loss:.4f}",
        metric,
        " (best)" if record["best"] else "",
    )
    if run.live is not None:
        run.live.step = record["global_step"]
        run.live.log_metric("train/epoch_loss", record["train_loss"])
        if dev_loss is not None:
            run.live.log_metric("dev/loss", dev_loss)
        run.live.log_metric("dev/metric", metric)
        run.live.log_metric("epoch", record["epoch"], plot=False)
        run.live.next_step()


def _finish(run: _Run, state: _LoopState, seconds: float) -> TrainResult:
    """The result; rank 0 writes ``training.json``, closes dvclive and removes ``last/`` (unless keep_last)."""
    result = TrainResult(
        best_epoch=state.best_epoch + 1,
        best_metric=state.best_metric,
        history=state.history,
        pack_stats=run.task.train_stats,
        dev_pack_stats=run.task.dev_stats,
        train_seconds=seconds,
        windows_per_second=state.seen_windows * run.world / state.loop_seconds if state.loop_seconds > 0 else 0.0,
        windows_per_cpu_second=state.seen_windows / state.loop_cpu if state.loop_cpu > 0 else 0.0,
        tokens_per_second=state.seen_tokens * run.world / state.loop_seconds if state.loop_seconds > 0 else 0.0,
        resumed_from_epoch=state.resumed_from,
        world_size=run.world,
        best_dev_scores=state.best_dev_scores,
    )
    if run.is_main:
        write_json(run.out_dir / "training.json", result.to_dict())
        if run.live is not None:
            run.live.end()
        if not run.settings.keep_last and run.last_dir.exists():
            shutil.rmtree(run.last_dir)
    if run.distributed:
        _barrier(run.device)
    return result
