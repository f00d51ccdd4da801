#!/usr/bin/env python3
"""Benchmark: steady-state training throughput of the sentence scorer on one accelerator, the real loop beside the
same model in a bare loop, with the achieved TFLOP/s and its share of a matrix product's rate (issue 29).

For each encoder shape (random weights of MiniLM-L6 shape 6 x 384 and of bert-base shape 12 x 768; windows of up
to 512 tokens from documents of 40 sentences, batch 32, AMP on CUDA), in one process:

* ``real``: :func:`wikiref.model.training.train` (what every stage runs: collate on the CPU, pinned copies, the
  task's loss, AdamW with its groups and schedule, clipping, loss bookkeeping), after an unmeasured warm-up
  run of the same loop over the same examples (CUDA context, cuBLAS handles, kernel choices, cuDNN attention
  plans for every padded length: costs a real run pays once);
* ``bare``: the same model, optimizer (AdamW with the loop's groups, fused) and schedule in the few lines a user
  would otherwise write, over batches collated and copied to the device before the clock starts (forward under
  autocast, loss, backward, clipping, step), with ``--warmup-steps`` unmeasured steps first. It bounds what the
  loop's own work costs: ``real_vs_bare`` near 1 means the loop adds nothing to the model's time;
* ``bare-mask4d``: ``bare`` with the padding mask handed to the encoder in the 4D form transformers does not
  inspect (no host synchronisation per forward pass);
* ``real-compiled``: ``real`` with ``TrainSettings.compile`` (params ``model.compile``: the model compiled in place
  by torch.compile, dynamic shapes), after the same unmeasured warm-up run, compiled too, which absorbs the
  compilation (its line gives ``warmup_seconds``, dynamo's ``compile_seconds`` and the graphs compiled in the
  warm-up and in the measured run, which should be 0);
* ``bare-compiled``: ``bare`` with the model compiled the same way (it reuses the graph ``real-compiled`` compiled;
  run alone, its warm-up steps absorb the compilation);
* ``real-cudagraphs``: ``real`` with ``model.compile: cudagraphs``: the encoder alone compiled in inductor's
  ``reduce-overhead`` mode, which on CUDA replays its forward and backward as CUDA graphs (one launch each instead
  of hundreds), the batches padded to multiples of 64 (one graph per padded length; the benchmark's windows all
  pad to 512, so its tokens per window count real tokens only), after the same unmeasured warm-up run, which
  compiles and records the graphs.

``--modes`` picks some (default: all); a mode that fails prints its error and the others still run (exit 1). They
run in two rounds, each for every shape: ``real``, ``bare``, ``bare-mask4d``, ``real-cudagraphs``, then
``real-compiled``, ``bare-compiled`` (a time limit cuts the least wanted figures first). Every
mode starts from the same weights and goes through the same batches in the same order; the run exits 1 when a mean
training loss differs by more than ``--loss-tolerance`` (relative; dropout draws and float order differ) from its
reference's: ``bare`` for ``real`` and ``bare-mask4d``, ``real`` (else ``bare``) for the compiled modes (with
``real-cudagraphs`` the dropout masks are drawn over the wider padding: another draw, the same mean within the
tolerance). dynamo's cache is reset for each shape and round and before ``real-compiled``, and its ``recompile_limit`` is
``--recompile-limit``
(2): a compiled mode whose shapes get specialised falls back to eager after two graphs instead of compiling for
minutes, and its line (and the summary's ``recompiled`` list) says so. ``--compile-backend`` is torch.compile's backend
(``inductor``; the CPU test uses ``aot_eager``, which compiles about three times faster there).
``--profile DIR`` also writes torch.profiler tables of a few optimizer steps of the real loop (and of the compiled
one when ``real-compiled`` runs), all in the middle of an epoch (operators by self CPU time and by device time, and
the host-device synchronisations per step) for the next person who tunes it.

    python bench/train_gpu.py                        # CUDA, both shapes (no GPU: as --device cpu --quick)
    python bench/train_gpu.py --shapes bert-base --profile /tmp/prof
    python bench/train_gpu.py --rates train-gpu-rates.json   # also the rates for bench/workflow_cost.py --rates
    python bench/train_gpu.py --modes real,real-compiled,bare,bare-compiled
    python bench/train_gpu.py --device cpu --quick   # the CPU test of this script (tiny encoder)
    python bench/train_gpu.py --device cpu --shapes micro --modes real,bare --examples 256   # the loop's own cost

Prints one JSON line per shape and mode, one with the matrix product's rate, and a summary line. Needs what
``scripts/gpu-check`` needs (torch, transformers, safetensors, numpy, tqdm) and builds its data the same way.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.machinery
import importlib.util
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def gpu_check_module():
    """``scripts/gpu-check`` as a module (its synthetic data, encoder folders and scorer builder)."""
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(ROOT / "scripts" / "gpu-check"))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


MODES = ("real", "bare", "bare-mask4d", "real-cudagraphs", "real-compiled", "bare-compiled")
# the order of a run: the first round for every shape, then the second, so that a time limit (scripts/gpu-session)
# cuts the least wanted figures (the whole model compiled) and not a shape's eager or CUDA-graph rates
ROUNDS = (("real", "bare", "bare-mask4d", "real-cudagraphs"), ("real-compiled", "bare-compiled"))
# issue 29's targets, training windows/s of the loop every stage runs (one H100, batch 32, 512-token windows): a
# benchmark's goal, reported in the summary's ``targets``, never its exit status
TARGETS = {"bert-base": 1000.0, "minilm": 2000.0}
REAL_MODES = ("real", "real-compiled", "real-cudagraphs")  # the loop itself (the bare modes only bound it)


def _sync(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def compile_stats(torch) -> tuple[int, float]:
    """(graphs dynamo compiled so far, seconds it spent compiling frames) in this process: deltas of these around a
    run count its compilations. Backward graphs that a backend compiles lazily, at the first backward pass, are
    not in the seconds (they are in the warm-up's wall-clock seconds); NaN where this torch lacks the timer."""
    from torch._dynamo import utils

    try:
        seconds = float(utils.calculate_time_spent().get("total_wall_time", 0.0))
    except (AttributeError, TypeError):  # a private helper of torch: never let it fail a mode
        seconds = float("nan")
    return int(utils.counters["stats"]["unique_graphs"]), seconds


def compile_model(model, backend: str) -> None:
    """Compile ``model`` in place as the training loop does with ``compile`` (a graph ``real-compiled`` compiled for
    this shape is reused: dynamo's cache is reset only between shapes and before ``real-compiled``)."""
    model.compile(dynamic=True, backend=backend)


def bare_loop(torch, model, pad_id, windows, targets, batches, settings, device, warmup: int, mask4d=False) -> dict:
    """The same model trained over pre-collated batches already on the device: forward (autocast), loss, backward,
    clip, and the loop's own AdamW (groups, fused kernel) and schedule; ``warmup`` steps unmeasured first (the
    first batches, with the learning rate at zero so that the measured run starts from the same weights; they also
    absorb the compilation of a compiled model).
    ``mask4d``: the padding mask given to the encoder as a prepared (batch, 1, 1, length) boolean mask, which
    transformers passes to SDPA as it is (a 2D mask is first checked for padding with ``mask.all()``: a host
    synchronisation per forward pass)."""
    from wikiref.model.optim import make_optimizer, make_scheduler
    from wikiref.model.scorer import autocast_context, collate

    model.to(device).train()
    opt = make_optimizer(model, settings)
    ready = [
        {k: v.to(device) for k, v in collate([windows[i] for i in idx], pad_id, targets).items()} for idx in batches
    ]
    if mask4d:
        for batch in ready:
            batch["attention_mask"] = batch["attention_mask"][:, None, None, :].bool()

    def step(batch, scheduler):
        with autocast_context(device, settings.amp):
            out = model(batch)
        loss = model.loss(out, batch["targets"], batch["sent_group"])
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), settings.max_grad_norm)
        opt.step()
        scheduler.step()
        opt.zero_grad(set_to_none=True)
        return loss.detach()

    graphs0, compile0 = compile_stats(torch)
    t_warm = time.perf_counter()
    idle = make_scheduler(opt, 0.0, len(ready), 0)  # warm-up steps at lr 0: kernels chosen, weights unchanged
    for batch in ready[:warmup]:
        step(batch, idle)
    opt.state.clear()  # AdamW's moments from the warm-up must not carry over
    scheduler = make_scheduler(opt, settings.lr, len(ready), 0)
    _sync(torch, device)
    warmup_seconds = time.perf_counter() - t_warm
    graphs1, compile1 = compile_stats(torch)
    losses = []
    t0 = time.perf_counter()
    for batch in ready:
        losses.append(step(batch, scheduler))
    _sync(torch, device)
    seconds = time.perf_counter() - t0
    n_windows = sum(len(idx) for idx in batches)
    n_tokens = sum(len(windows[i]) for idx in batches for i in idx)
    return {
        "windows_per_second": n_windows / seconds,
        "tokens_per_second": n_tokens / seconds,
        "mean_loss": float(torch.stack(losses).float().mean()),
        "steps": len(ready),
        "warmup_seconds": warmup_seconds,
        "compile_seconds": compile1 - compile0,
        "graphs_compiled_warmup": graphs1 - graphs0,
        "graphs_compiled_measured": compile_stats(torch)[0] - graphs1,
    }


def real_loop(torch, gc, r, enc, examples, dev, settings, max_length: int, work: Path) -> dict:
    """:func:`wikiref.model.training.train` on ``examples`` after an unmeasured warm-up run of it over the same
    examples, so the measured epoch meets no padded length the warm-up has not (each new one builds cuDNN attention
    plans: a start-up cost a long run pays once); with ``settings.compile`` both compile the model and the warm-up
    absorbs the compilation. The measured run trains the warm-up's model object with its initial weights copied
    back in place: the same parameter storage, so CUDA graphs recorded in the warm-up (``real-cudagraphs``) replay
    instead of being recorded again for new parameter addresses."""
    from wikiref.model import training

    if settings.compile:
        torch._dynamo.reset()
    graphs0, compile0 = compile_stats(torch)
    t_warm = time.perf_counter()
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    initial = {k: v.detach().clone() for k, v in model.state_dict().items()}
    training.train(model, tok, examples, dev, settings, work / "warm")
    _sync(torch, r.device)
    warmup_seconds = time.perf_counter() - t_warm
    graphs1, compile1 = compile_stats(torch)
    model.load_state_dict(initial)  # copies into the existing tensors
    t0 = time.perf_counter()
    res = training.train(model, tok, examples, dev, settings, work / "real")
    out = {
        "windows_per_second": res.windows_per_second,
        "tokens_per_second": res.tokens_per_second,
        "mean_loss": res.history[0]["train_loss"],
        "steps": res.history[0]["global_step"],
        "job_seconds": time.perf_counter() - t0,
        "warmup_seconds": warmup_seconds,
    }
    if settings.compile:
        out["compile_seconds"] = compile1 - compile0
        out["graphs_compiled_warmup"] = graphs1 - graphs0
        out["graphs_compiled_measured"] = compile_stats(torch)[0] - graphs1
    return out


def profile_examples(training, model, tok, r, examples, settings, n_batches: int, n_sent: int) -> list:
    """The first of ``examples`` that make at least ``n_batches`` training batches, none of a single window (a
    compiled model would compile again for it: dynamo specialises sizes 1), topped up with more synthetic documents
    when they make fewer (``--quick``)."""
    from wikiref.model.scoring_task import pack_examples

    part, windows, pool = [], [], iter(examples)

    def enough() -> bool:
        batches = training.epoch_batches(windows, settings.batch_size, settings.bucket_batches, settings.seed, 0)
        return len(batches) >= n_batches and min(map(len, batches)) > 1

    while not enough():
        e = next(pool, None)
        if e is None:  # out of examples: more of the same kind
            pool = iter(r.data.scoring(max(8, len(examples) // 4), n_sent, "classification"))
            continue
        part.append(e)
        windows += pack_examples(model.config, tok, [e])[0]
    return part


def profile_loop(torch, gc, r, enc, examples, dev, settings, out: Path, work: Path, steps: int, n_sent: int) -> dict:
    """torch.profiler over ``steps`` optimizer steps of the real loop, after two unrecorded ones, all in the middle
    of the epoch: the run has ``steps + 4`` batches and the recording ends ``steps + 2`` steps in, so neither the
    dev scoring nor the checkpoints at the end of the epoch (hundreds of device-to-host copies) are in it.
    Writes operator tables; returns the host-device synchronisations per step."""
    from torch.profiler import ProfilerActivity, profile, schedule

    from wikiref.model import training

    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=512 if not r.args.quick else 128)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if r.cuda else [])
    part = profile_examples(training, model, tok, r, examples, settings, steps + 4, n_sent)
    calls = [0]

    def hook(_model):  # one profiler step per optimizer step until the recording is over
        if calls[0] < steps + 2:
            calls[0] += 1
            prof.step()

    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=steps, repeat=1)) as prof:
        res = training.train(model, tok, part, dev, settings, work, step_hook=hook)
    if calls[0] < steps + 2 or res.history[-1]["global_step"] <= steps + 2:
        return {"profiled_steps": 0, "error": f"the epoch ended within the {steps} recorded steps"}
    events = prof.key_averages()
    out.mkdir(parents=True, exist_ok=True)
    (out / "by_cpu.txt").write_text(events.table(sort_by="self_cpu_time_total", row_limit=40))
    if r.cuda:
        (out / "by_device.txt").write_text(events.table(sort_by="self_device_time_total", row_limit=40))
    syncs = {}
    for e in events:
        if any(s in e.key for s in ("Synchronize", "Memcpy DtoH", "cudaMemcpy ", "aten::item", "aten::nonzero")):
            syncs[e.key] = round(e.count / steps, 2)
    return {
        "profiled_steps": steps,
        "epoch_steps": res.history[-1]["global_step"],
        "per_step_counts": syncs,
        "tables": str(out),
    }


def mode_line(shape: str, mode: str, m: dict, cfg, args, r, n_windows: int) -> dict:
    from wikiref.model.encoders import train_flop_per_window

    tokens_per_window = m["tokens_per_second"] / max(m["windows_per_second"], 1e-12)
    tflops = train_flop_per_window(cfg, tokens_per_window) * m["windows_per_second"] / 1e12
    return {
        "bench": "train_gpu",
        "shape": shape,
        "mode": mode,
        "device": str(r.device),
        "batch_size": args.batch_size,
        "windows": n_windows,
        "tokens_per_window": round(tokens_per_window, 1),
        **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
        "achieved_tflops": round(tflops, 2),
    }


def shape_inputs(gc, r, shape: str, args, root: Path, cache: dict) -> tuple:
    """The encoder folder, training and dev examples of ``shape``, built once per run (the synthetic corpus draws
    from one random stream: a second round of the shape trains on the first round's examples, not new ones)."""
    if shape not in cache:
        n_sent = 10 if args.quick else 40
        enc = gc.encoder_dir(root, shape, r.data)
        examples = r.data.scoring(args.examples, n_sent, "classification")
        cache[shape] = (enc, examples, r.data.scoring(4, n_sent, "classification"), n_sent)
    return cache[shape]


def run_shape(torch, gc, r, shape: str, args, root: Path, modes: list[str], cache: dict):
    """Yields the JSON line of each mode as it ends (a mode that raises: a line with its ``error``), then of the
    profiles."""
    from wikiref.model import training
    from wikiref.model.compiling import compile_context
    from wikiref.model.scoring_task import pack_examples

    torch._dynamo.reset()  # nothing compiled for another shape or round is kept
    enc, examples, dev, n_sent = shape_inputs(gc, r, shape, args, root, cache)
    max_length = 128 if args.quick else 512
    settings = r.settings(batch_size=args.batch_size, lr=3e-5, eval_batch_size=128)
    compiled = dataclasses.replace(settings, compile=True, compile_backend=args.compile_backend)
    graphed = dataclasses.replace(settings, compile="cudagraphs", compile_backend=args.compile_backend)
    # the bare loops: the same initial weights, windows and batch order as the real loop's first epoch
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    cfg = model.encoder.config
    windows, _ = pack_examples(model.config, tok, examples)
    batches = training.epoch_batches(windows, settings.batch_size, settings.bucket_batches, settings.seed, 0)
    targets, pad_id = [e.targets for e in examples], tok.pad_token_id or 0

    def bare(mask4d=False, compile_it=False):
        model, _ = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
        if compile_it:
            compile_model(model, args.compile_backend)
        with compile_context(compile_it):  # the loop's shape settings for a compiled model
            return bare_loop(
                torch, model, pad_id, windows, targets, batches, settings, r.device, args.warmup_steps, mask4d
            )

    def real(s, tag):
        return real_loop(torch, gc, r, enc, examples, dev, s, max_length, root / f"{shape}-{tag}")

    steps = 1 if args.quick else 8  # recorded optimizer steps of a profile

    def prof(s, sub):
        out = Path(args.profile) / sub
        return profile_loop(torch, gc, r, enc, examples, dev, s, out, root / f"{sub}-prof", steps, n_sent)

    runs = {
        "real": lambda: real(settings, "real"),
        "bare": bare,
        "bare-mask4d": lambda: bare(mask4d=True),
        "real-compiled": lambda: real(compiled, "rc"),
        "bare-compiled": lambda: bare(compile_it=True),
        "real-cudagraphs": lambda: real(graphed, "rg"),
    }
    head = {"bench": "train_gpu", "shape": shape}
    for mode in modes:
        try:
            yield mode_line(shape, mode, runs[mode](), cfg, args, r, len(windows))
        except Exception as e:  # noqa: BLE001 - reported; the other modes still run (one GPU run gets them all)
            yield {**head, "mode": mode, "error": f"{type(e).__name__}: {e}", "where": traceback.format_exc(limit=-4)}
    profiles = [
        ("profile", "real", settings, shape),
        ("profile-compiled", "real-compiled", compiled, f"{shape}-compiled"),
    ]
    for name, mode, s, sub in profiles if args.profile else ():
        if mode in modes:
            try:
                yield {**head, "mode": name, **prof(s, sub)}
            except Exception as e:  # noqa: BLE001
                yield {
                    **head,
                    "mode": name,
                    "error": f"{type(e).__name__}: {e}",
                    "where": traceback.format_exc(limit=-4),
                }


def loss_checks(by_mode: dict[str, dict]) -> dict[str, float]:
    """Relative difference of each mode's mean loss from its reference's (``bare`` for ``real`` and ``bare-mask4d``,
    ``real``, else ``bare``, for the compiled modes); modes whose reference did not run are not checked."""
    out = {}
    for mode, line in by_mode.items():
        ref = {"real": "bare", "bare-mask4d": "bare"}.get(mode, "real" if "real" in by_mode else "bare")
        if mode != "bare" and ref in by_mode:
            want = by_mode[ref]["mean_loss"]
            out[mode] = round(abs(line["mean_loss"] - want) / max(abs(want), 1e-12), 4)
    return out


def shape_summary(by_mode: dict[str, dict]) -> dict:
    """The rates of the modes that ran, their ratios and the loss checks."""
    wps = {m: line["windows_per_second"] for m, line in by_mode.items()}
    out = {f"{m.replace('-', '_')}_windows_per_second": v for m, v in wps.items()}
    for name, a, b in (
        ("real_vs_bare", "real", "bare"),
        ("mask4d_vs_bare", "bare-mask4d", "bare"),
        ("real_compiled_vs_real", "real-compiled", "real"),
        ("bare_compiled_vs_bare", "bare-compiled", "bare"),
        ("real_compiled_vs_bare", "real-compiled", "bare"),
        ("real_cudagraphs_vs_real", "real-cudagraphs", "real"),
        ("real_cudagraphs_vs_bare", "real-cudagraphs", "bare"),
    ):
        if a in wps and b in wps:
            out[name] = round(wps[a] / wps[b], 3)
    diffs = loss_checks(by_mode)
    out["loss_rel_diff"] = max(diffs.values(), default=0.0)
    out["loss_rel_diff_by_mode"] = diffs
    return out


def target_check(shape: str, by_mode: dict[str, dict]) -> dict | None:
    """The fastest of the real loop's modes that ran against issue 29's target for ``shape`` (None: no target for
    the shape, or no real mode ran). Informational: a missed target does not change the exit status."""
    if shape not in TARGETS:
        return None
    rates = {m: by_mode[m]["windows_per_second"] for m in REAL_MODES if m in by_mode}
    if not rates:
        return None
    best = max(rates, key=rates.get)
    return {
        "target_windows_per_second": TARGETS[shape],
        "best_mode": best,
        "best_windows_per_second": rates[best],
        "share_of_target": round(rates[best] / TARGETS[shape], 3),
        "met": rates[best] >= TARGETS[shape],
    }


def plan(modes: list[str], shapes: list[str]) -> list[tuple[str, list[str]]]:
    """``(shape, modes)`` in the order they run: each round of :data:`ROUNDS` for every shape before the next
    round (every round of a shape trains on its examples from :func:`shape_inputs`, from the same initial weights)."""
    out = []
    for rnd in ROUNDS:
        wanted = [m for m in modes if m in rnd]
        out += [(shape, wanted) for shape in shapes] if wanted else []
    return out


def ran_modes(lines: list[dict]) -> dict[str, dict]:
    """One shape's lines of the modes that ran to the end, by mode."""
    return {x["mode"]: x for x in lines if x.get("mode") in MODES and "error" not in x}


def rates_file(by_shape: dict[str, list[dict]], recompiled: list[str]) -> dict:
    """The measured rates as ``bench/workflow_cost.py --rates`` reads them: ``finetune_windows_per_second_<shape>``
    is the eager ``real`` loop's (every profile's setting: ``model.compile: false``), and
    ``steady_windows_per_second_<shape>_<mode>`` every mode's that ran (``--rates-key`` picks one, e.g. the
    ``real-cudagraphs`` rate for a run with ``model.compile: cudagraphs``). A compiled mode that recompiled fell
    back to eager: its rate is not the compiled loop's and is left out."""
    out: dict[str, float] = {}
    for shape, lines in by_shape.items():
        ran = ran_modes(lines)
        for mode, line in ran.items():
            if f"{shape}/{mode}" not in recompiled:
                out[f"steady_windows_per_second_{shape}_{mode}"] = round(line["windows_per_second"], 1)
        if "real" in ran:
            out[f"finetune_windows_per_second_{shape}"] = round(ran["real"]["windows_per_second"], 1)
    return out


def write_rates(path: Path, header: dict, by_shape: dict[str, list[dict]], recompiled: list[str]) -> None:
    """``rates_file`` written atomically, after every mode: a run cut short by a time limit keeps what it measured."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps({**header, **rates_file(by_shape, recompiled)}, indent=1) + "\n")
    tmp.replace(path)


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", help="auto (default: CUDA where present, else the CPU with --quick)")
    ap.add_argument(
        "--shapes",
        default="minilm,bert-base",
        help="comma-separated: micro (the loop's own cost), tiny, minilm, bert-base",
    )
    ap.add_argument("--modes", default="all", help=f"comma-separated, in this order: {', '.join(MODES)}; or all")
    ap.add_argument("--examples", type=int, default=512, help="training documents (about 2 windows each)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--warmup-steps", type=int, default=10, help="bare loops: unmeasured steps first")
    ap.add_argument("--loss-tolerance", type=float, default=0.05, help="relative, each mode vs its reference")
    ap.add_argument("--compile-backend", default="inductor", help="torch.compile backend of the compiled modes")
    ap.add_argument(
        "--recompile-limit",
        type=int,
        default=2,
        help="dynamo's recompile_limit in this run (torch's default 8): a compiled mode that keeps recompiling falls "
        "back to eager after this many graphs instead of compiling for minutes; its line says recompiled",
    )
    ap.add_argument("--profile", help="write profiler tables of the real loop here")
    ap.add_argument(
        "--rates",
        type=Path,
        help="write the steady-state rates (JSON) here, for bench/workflow_cost.py --rates (rates_file's keys)",
    )
    ap.add_argument("--quick", action="store_true", help="tiny encoder, short windows (the CPU test)")
    args = ap.parse_args(argv)
    wanted = MODES if args.modes == "all" else [m.strip() for m in args.modes.split(",") if m.strip()]
    unknown = sorted(set(wanted) - set(MODES))
    if unknown or not wanted:
        ap.error(f"--modes: unknown {unknown} (known: {', '.join(MODES)})")
    args.modes = [m for m in MODES if m in wanted]
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    gc = gpu_check_module()
    import torch

    if args.device == "auto":  # make bench on a machine without a GPU: the CPU test's settings
        args.device = "cuda" if torch.cuda.is_available() else "cpu"
        args.quick = args.quick or args.device == "cpu"
    if args.device == "cuda" and not torch.cuda.is_available():
        print(json.dumps({"bench": "train_gpu", "error": "no CUDA device (use --device cpu)"}))
        return 1
    shapes = ["tiny"] if args.quick else [s.strip() for s in args.shapes.split(",") if s.strip()]
    failed = []
    with tempfile.TemporaryDirectory(prefix="train_gpu.") as tmp:
        ns = argparse.Namespace(device=args.device, quick=args.quick, jobs="*", rates=None, keep=None)
        r = gc.Runner(ns, Path(tmp))
        # bench/train.py's matrix product (this folder is on sys.path): bf16 8192^3 on CUDA, fp32 1024^3 on the CPU
        from train import matmul_tflops

        cpu = r.device.type == "cpu" or args.quick
        rate = matmul_tflops(r.device, *((1024, 3, "float32") if cpu else (8192, 20, "bfloat16")))
        env = {"torch": torch.__version__, "opt_einsum": torch.backends.opt_einsum.is_available()}  # docs/gpu.md
        print(
            json.dumps({"bench": "train_gpu", "matmul_tflops": round(rate, 4), "device": str(r.device), **env}),
            flush=True,
        )
        summary, errors, recompiled, targets = {}, [], [], {}
        name = torch.cuda.get_device_name(r.device) if r.cuda else "cpu"
        header = {"device": name, "torch": torch.__version__, "source": "bench/train_gpu.py (steady state)"}
        by_shape: dict[str, list[dict]] = {shape: [] for shape in shapes}
        inputs: dict = {}  # shape_inputs's
        with torch._dynamo.config.patch(recompile_limit=args.recompile_limit):
            for shape, wanted in plan(args.modes, shapes):
                for line in run_shape(torch, gc, r, shape, args, Path(tmp), wanted, inputs):
                    if "achieved_tflops" in line:
                        line["share_of_matmul"] = round(line["achieved_tflops"] / rate, 3)
                    if line.get("graphs_compiled_measured", 0) > 0 or line.get("graphs_compiled_warmup", 0) > 2:
                        # more graphs than one (and one for a last batch of a single window): shapes specialised
                        line["recompiled"] = True
                        recompiled.append(f"{shape}/{line['mode']}")
                    print(json.dumps(line), flush=True)
                    by_shape[shape].append(line)
                    if args.rates:
                        write_rates(args.rates, header, by_shape, recompiled)
                    if "error" in line:
                        errors.append(f"{shape}/{line['mode']}")
        for shape, lines in by_shape.items():
            ran = ran_modes(lines)
            summary[shape] = shape_summary(ran)
            if (check := target_check(shape, ran)) is not None:
                targets[shape] = check
            if summary[shape]["loss_rel_diff"] > args.loss_tolerance:
                failed.append(shape)
    final = {
        "bench": "train_gpu",
        "summary": summary,
        "device_name": name,
        "losses_differ": failed,
        "errors": errors,
        "recompiled": recompiled,
        "targets": targets,
    }
    print(json.dumps(final))
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
