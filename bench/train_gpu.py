#!/usr/bin/env python3
"""Benchmark: steady-state training throughput of the sentence scorer on one accelerator, the real loop beside the
same model in a bare loop, with the achieved TFLOP/s and its share of a matrix product's rate (issue 29).

For each encoder shape (random weights of MiniLM-L6 shape 6 x 384 and of bert-base shape 12 x 768; windows of up
to 512 tokens from documents of 40 sentences, batch 32, AMP on CUDA), in one process:

* ``real``: :func:`wikiref.model.training.train` (what every stage runs: collate on the CPU, pinned copies, the
  task's loss, AdamW with its groups and schedule, clipping, loss bookkeeping), after an unmeasured warm-up
  run of the same loop (CUDA context, cuBLAS handles, kernel choices: costs a real run pays once);
* ``bare``: the same model, optimizer (AdamW with the loop's groups, fused) and schedule in the few lines a user
  would otherwise write, over batches collated and copied to the device before the clock starts (forward under
  autocast, loss, backward, clipping, step), with ``--warmup-steps`` unmeasured steps first. It bounds what the
  loop's own work costs: ``real_vs_bare`` near 1 means the loop adds nothing to the model's time;
* ``bare-mask4d``: ``bare`` with the padding mask handed to the encoder in the 4D form transformers does not
  inspect (no host synchronisation per forward pass).

Both start from the same weights and go through the same batches in the same order; the run exits 1 when their
mean training losses differ by more than ``--loss-tolerance`` (relative; dropout draws and float order differ).
``--profile DIR`` also writes torch.profiler tables of a few optimizer steps of the real loop (operators by self CPU time
and by device time, and the host-device synchronisations per step) for the next person who tunes it.

    python bench/train_gpu.py                        # CUDA, both shapes (no GPU: as --device cpu --quick)
    python bench/train_gpu.py --shapes bert-base --profile /tmp/prof
    python bench/train_gpu.py --device cpu --quick   # the CPU test of this script (tiny encoder)

Prints one JSON line per shape and mode, one with the matrix product's rate, and a summary line. Needs what
``scripts/gpu-check`` needs (torch, transformers, safetensors, numpy, tqdm) and builds its data the same way.
"""

from __future__ import annotations

import argparse
import importlib.machinery
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))


def _gpu_check():
    """``scripts/gpu-check`` as a module (its synthetic data, encoder folders and scorer builder)."""
    loader = importlib.machinery.SourceFileLoader("gpu_check", str(ROOT / "scripts" / "gpu-check"))
    spec = importlib.util.spec_from_loader("gpu_check", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def _sync(torch, device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bare_loop(torch, model, pad_id, windows, targets, batches, settings, device, warmup: int, mask4d=False) -> dict:
    """The same model trained over pre-collated batches already on the device: forward (autocast), loss, backward,
    clip, and the loop's own AdamW (groups, fused kernel) and schedule; ``warmup`` steps unmeasured first (the
    first batches, with the learning rate at zero so that the measured run starts from the same weights).
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

    idle = make_scheduler(opt, 0.0, len(ready), 0)  # warm-up steps at lr 0: kernels chosen, weights unchanged
    for batch in ready[:warmup]:
        step(batch, idle)
    opt.state.clear()  # AdamW's moments from the warm-up must not carry over
    scheduler = make_scheduler(opt, settings.lr, len(ready), 0)
    _sync(torch, device)
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
    }


def profile_loop(torch, gc, r, enc, examples, dev, settings, out: Path, work: Path, steps: int) -> dict:
    """torch.profiler over ``steps`` optimizer steps of the real loop (after two unrecorded ones; the dev scoring
    and the checkpoints at the end of the epoch are left out): operator tables and the host-device
    synchronisations per step."""
    from torch.profiler import ProfilerActivity, profile, schedule

    from wikiref.model import training

    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=512 if not r.args.quick else 128)
    acts = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if r.cuda else [])
    part, n = [], 0  # enough examples for the unrecorded steps, the recorded ones and one more
    for e in examples:
        part.append(e)
        n += len(training.pack_examples(model.config, tok, [e])[0])
        if n >= (steps + 3) * settings.batch_size:
            break
    with profile(activities=acts, schedule=schedule(wait=1, warmup=1, active=steps, repeat=1)) as prof:
        res = training.train(model, tok, part, dev, settings, work, step_hook=lambda _m: prof.step())
    events = prof.key_averages()
    out.mkdir(parents=True, exist_ok=True)
    (out / "by_cpu.txt").write_text(events.table(sort_by="self_cpu_time_total", row_limit=40))
    if r.cuda:
        (out / "by_device.txt").write_text(events.table(sort_by="self_device_time_total", row_limit=40))
    n_steps = min(steps, res.history[-1]["global_step"] - 2)
    if n_steps < 1:
        return {"profiled_steps": 0, "error": f"too few examples for {steps} steps (--examples)"}
    syncs = {}
    for e in events:
        if any(s in e.key for s in ("Synchronize", "Memcpy DtoH", "cudaMemcpy ", "aten::item", "aten::nonzero")):
            syncs[e.key] = round(e.count / n_steps, 2)
    return {"profiled_steps": n_steps, "per_step_counts": syncs, "tables": str(out)}


def run_shape(torch, gc, r, shape: str, args, root: Path) -> list[dict]:
    from wikiref.model import training
    from wikiref.model.encoders import train_flop_per_window

    enc = gc.encoder_dir(root, shape, r.data)
    n_sent = 10 if args.quick else 40
    max_length = 128 if args.quick else 512
    examples = r.data.scoring(args.examples, n_sent, "classification")
    dev = r.data.scoring(4, n_sent, "classification")
    settings = r.settings(batch_size=args.batch_size, lr=3e-5, eval_batch_size=128)
    # warm-up of the real loop (unmeasured): the first eighth of the examples
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    training.train(model, tok, examples[: max(2, len(examples) // 8)], dev, settings, root / f"{shape}-warm")
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    t0 = time.perf_counter()
    res = training.train(model, tok, examples, dev, settings, root / f"{shape}-real")
    real_job = time.perf_counter() - t0
    cfg = model.encoder.config
    real = {
        "windows_per_second": res.windows_per_second,
        "tokens_per_second": res.tokens_per_second,
        "mean_loss": res.history[0]["train_loss"],
        "steps": res.history[0]["global_step"],
        "job_seconds": real_job,
    }
    # the bare loop: the same initial weights, windows and batch order as the real loop's first epoch
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    windows, _ = training.pack_examples(model.config, tok, examples)
    batches = training.epoch_batches(windows, settings.batch_size, settings.bucket_batches, settings.seed, 0)
    targets, pad_id = [e.targets for e in examples], tok.pad_token_id or 0
    bare = bare_loop(torch, model, pad_id, windows, targets, batches, settings, r.device, args.warmup_steps)
    model, tok = gc.scorer(r, "classification", "query", encoder=enc, max_length=max_length)
    mask4d = bare_loop(torch, model, pad_id, windows, targets, batches, settings, r.device, args.warmup_steps, True)
    lines = []
    for mode, m in (("real", real), ("bare", bare), ("bare-mask4d", mask4d)):
        tokens_per_window = m["tokens_per_second"] / max(m["windows_per_second"], 1e-12)
        tflops = train_flop_per_window(cfg, tokens_per_window) * m["windows_per_second"] / 1e12
        lines.append(
            {
                "bench": "train_gpu",
                "shape": shape,
                "mode": mode,
                "device": str(r.device),
                "batch_size": args.batch_size,
                "windows": len(windows),
                "tokens_per_window": round(tokens_per_window, 1),
                **{k: round(v, 4) if isinstance(v, float) else v for k, v in m.items()},
                "achieved_tflops": round(tflops, 2),
            }
        )
    if args.profile:
        lines.append(
            {
                "bench": "train_gpu",
                "shape": shape,
                "mode": "profile",
                **profile_loop(
                    torch, gc, r, enc, examples, dev, settings, Path(args.profile) / shape, root / f"{shape}-prof", 8
                ),
            }
        )
    return lines


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto", help="auto (default: CUDA where present, else the CPU with --quick)")
    ap.add_argument("--shapes", default="minilm,bert-base", help="comma-separated: tiny, minilm, bert-base")
    ap.add_argument("--examples", type=int, default=512, help="training documents (about 2 windows each)")
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--warmup-steps", type=int, default=10, help="bare loop: unmeasured steps first")
    ap.add_argument("--loss-tolerance", type=float, default=0.05, help="relative, real vs bare mean loss")
    ap.add_argument("--profile", help="write profiler tables of the real loop here")
    ap.add_argument("--quick", action="store_true", help="tiny encoder, short windows (the CPU test)")
    args = ap.parse_args(argv)
    gc = _gpu_check()
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
        print(json.dumps({"bench": "train_gpu", "matmul_tflops": round(rate, 4), "device": str(r.device)}), flush=True)
        summary = {}
        for shape in shapes:
            lines = run_shape(torch, gc, r, shape, args, Path(tmp))
            for line in lines:
                if "achieved_tflops" in line:
                    line["share_of_matmul"] = round(line["achieved_tflops"] / rate, 3)
                print(json.dumps(line), flush=True)
            real, bare, mask4d = lines[0], lines[1], lines[2]
            diff = max(
                abs(m["mean_loss"] - bare["mean_loss"]) / max(abs(bare["mean_loss"]), 1e-12) for m in (real, mask4d)
            )
            summary[shape] = {
                "real_windows_per_second": real["windows_per_second"],
                "bare_windows_per_second": bare["windows_per_second"],
                "bare_mask4d_windows_per_second": mask4d["windows_per_second"],
                "real_vs_bare": round(real["windows_per_second"] / bare["windows_per_second"], 3),
                "mask4d_vs_bare": round(mask4d["windows_per_second"] / bare["windows_per_second"], 3),
                "loss_rel_diff": round(diff, 4),
            }
            if diff > args.loss_tolerance:
                failed.append(shape)
    name = torch.cuda.get_device_name(r.device) if r.cuda else "cpu"
    print(json.dumps({"bench": "train_gpu", "summary": summary, "device_name": name, "losses_differ": failed}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
