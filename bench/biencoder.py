#!/usr/bin/env python3
"""Benchmark: the bi scorer's training step with its sentences encoded in length buckets against one padded block.

The bi pairing (``ScorerConfig.pairing: bi``, :mod:`wikiref.model.biencoder`) encodes every sentence of a batch
alone. Padded into one block, a batch of QMSum turns (a few 128-token turns among many short ones) made the
encoder see several times the real tokens; :func:`wikiref.model.biencoder.collate` now sorts them by length and
cuts them into buckets, each padded to its own longest. Two modes, same model, weights, batches and order:

* ``padded``: ``collate(..., bucket=False)``, what the scorer ran before the buckets (and what a user writing the
  bi-encoder loop by hand with a tokenizer's ``padding=True`` would run);
* ``bucketed``: ``collate(...)`` as the scorer trains on the CPU and scores everywhere. On CUDA the scorer trains
  on one padded block (:func:`wikiref.model.biencoder.bucket_training_batches`): on an H100 this benchmark's
  synthetic run gave ``speedup`` 0.24 (padded 0.052 s a step, bucketed 0.218; docs/gpu.md).

Each measured step is a training step (forward, pairwise loss, backward, AdamW step), after ``--warmup-steps``
unmeasured ones; the modes run ``--repeats`` times in rotated order and the median is reported. Before timing, the
first batch is scored in both modes with dropout off: the run exits 1 when a score differs by more than
``--tolerance`` (absolute, on outputs of about 20 x cosine) or the losses by more than the same, relative.

Data: the gold-span turns of the real QMSum meetings (``--qmsum``, default ``../shared/data/qmsum/val.jsonl``; a
query's turns are one item, ``--batch`` items a step, as the recipe study trains), else synthetic items with
QMSum-like lengths (``"data": "synthetic"``). Encoder: MiniLM-L6 (installed with its weights), ``random-minilm`` /
``random-bert-base`` (random weights of those shapes with ``scripts/gpu-check``'s word-level tokenizer: what a GPU
machine without the weights can run), any ``random:<dir>`` of :mod:`wikiref.model.encoders`, or ``tiny-random``.
On CUDA the steps run under bf16 autocast (``--amp auto``: fp16 where bf16 is not supported), as the recipe study
and the training loop do there; the score check runs in fp32 either way.

    python bench/biencoder.py                                  # MiniLM-L6, real QMSum turns, CPU
    python bench/biencoder.py --device cuda --steps 20 --warmup-steps 5
    python bench/biencoder.py --device cuda --encoder random-minilm --data synthetic --steps 20 --warmup-steps 5
    python bench/biencoder.py --encoder tiny-random --data synthetic --steps 2 --repeats 1   # the test's run

One JSON line per mode and repeat, a summary line (``speedup``: padded / bucketed seconds per step, medians;
``padded_tokens_ratio``: tokens the encoder saw per real token, per mode).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
SHARED = Path(os.environ.get("WIKIREF_SHARED_DATA", ROOT.parent / "shared" / "data"))
MODES = ("padded", "bucketed")
RANDOM_SHAPES = {"random-minilm": "minilm", "random-bert-base": "bert-base", "random-tiny": "tiny"}


def random_encoder(shape: str, root: Path) -> str:
    """``random:<dir>`` of a BERT encoder of ``shape`` with random weights: ``scripts/gpu-check``'s folder (its
    config and word-level tokenizer), so no weights have to travel to a GPU machine."""
    if str(ROOT / "bench") not in sys.path:  # not when the tests load this file as a module
        sys.path.insert(0, str(ROOT / "bench"))
    from train_gpu import gpu_check_module

    gc = gpu_check_module()
    return gc.encoder_dir(root, shape, gc.Data(seed=13))


def qmsum_examples(path: Path, turns_cap: int) -> list[tuple[list[str], list[str], list[float]]]:
    """(query levels, gold-span turns, targets) of every specific query of the QMSum file."""
    from wikiref.extractive import meetings as qb
    from wikiref.stages.qmsum import reader

    out = []
    for r in reader.file_rows(path, split="test", query_type="specific"):
        idx, turns = qb.document_turns(r, "gold_span")
        if turns:
            out.append(
                (
                    [str(x) for x in r["query"]],
                    turns[:turns_cap],
                    [float(r["turn_targets"][i]) for i in idx][:turns_cap],
                )
            )
    return out


def synthetic_examples(n: int, seed: int) -> list[tuple[list[str], list[str], list[float]]]:
    """Items of 20-100 sentences whose lengths follow QMSum turns' shape: mostly short, a tail of long ones."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(300)]

    def text(k: int) -> str:
        return " ".join(rng.choice(words) for _ in range(k))

    out = []
    for _ in range(n):
        sents = [text(max(1, min(150, int(rng.lognormvariate(2.4, 1.0))))) for _ in range(rng.randint(20, 100))]
        out.append(([text(8)], sents, [rng.random() for _ in sents]))
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument(
        "--encoder",
        default="minilm",
        help="minilm (installed weights), random-minilm, random-bert-base, random-tiny, random:<dir>, tiny-random",
    )
    p.add_argument(
        "--amp", choices=("auto", "on", "off"), default="auto", help="autocast the timed steps (auto: on CUDA)"
    )
    p.add_argument("--data", choices=("auto", "synthetic"), default="auto")
    p.add_argument("--qmsum", type=Path, default=SHARED / "qmsum" / "val.jsonl")
    p.add_argument("--turns", type=int, default=60, help="gold-span turns per query (the recipe study's full preset)")
    p.add_argument("--batch", type=int, default=4, help="items (queries) per step")
    p.add_argument("--steps", type=int, default=4)
    p.add_argument("--warmup-steps", type=int, default=1)
    p.add_argument("--repeats", type=int, default=2)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    p.add_argument("--tolerance", type=float, default=1e-3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    import numpy as np
    import torch

    from wikiref.model import biencoder
    from wikiref.model.encoders import MINILM
    from wikiref.model.scorer import ScorerConfig, autocast_context, build_scorer, to_device

    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    if args.data == "auto" and args.qmsum.exists():
        examples, source = qmsum_examples(args.qmsum, args.turns), f"qmsum gold-span turns (real): {args.qmsum.name}"
    else:
        examples, source = synthetic_examples(8 * args.batch, args.seed), "synthetic"
    encoder = MINILM if args.encoder == "minilm" else args.encoder
    if args.encoder in RANDOM_SHAPES:
        tmp = tempfile.TemporaryDirectory(prefix="bench-biencoder.")  # removed when main returns
        encoder = random_encoder(RANDOM_SHAPES[args.encoder], Path(tmp.name))
    amp = args.amp == "on" or (args.amp == "auto" and device.type == "cuda")
    torch.manual_seed(args.seed)
    model, tok = build_scorer(
        ScorerConfig(encoder=encoder, pooling="mean", head="regression", pairing="bi", num_levels=4)
    )
    model.config.use_loss("pairwise")
    model.to(device)
    start = {k: v.detach().clone() for k, v in model.state_dict().items()}
    items = biencoder.make_items(model.config, tok, [(q, s) for q, s, _ in examples])
    targets = [t for _, _, t in examples]
    order = np.random.default_rng(args.seed).permutation(len(items)).tolist()
    n_steps = args.warmup_steps + args.steps
    batches = [[items[i] for i in order[(k * args.batch) % len(order) :][: args.batch]] for k in range(n_steps)]
    real = sum(len(s) for b in batches[args.warmup_steps :] for it in b for s in it.sentences)
    print(json.dumps({"bench": "env", "data": source, "items": len(items), "encoder": str(args.encoder),
                      "device": str(device), "amp": amp, "torch": torch.__version__, "threads": torch.get_num_threads(),
                      "python": platform.python_version(), "batch": args.batch, "steps": args.steps}), flush=True)  # fmt: skip

    def collated(batch_items, bucket):
        return to_device(biencoder.collate(batch_items, tok.pad_token_id, targets, bucket=bucket), device)

    # the same scores and loss in both layouts (dropout off), before anything is timed
    model.eval()
    with torch.no_grad():
        outs = {}
        for mode in MODES:
            b = collated(batches[0], mode == "bucketed")
            out = model(b)
            outs[mode] = (out.float().cpu(), float(model.loss(out, b["targets"], b["sent_group"])))
    score_diff = float((outs["padded"][0] - outs["bucketed"][0]).abs().max())
    loss_diff = abs(outs["padded"][1] - outs["bucketed"][1]) / max(abs(outs["padded"][1]), 1e-12)
    differs = score_diff > args.tolerance or loss_diff > args.tolerance

    def run(mode: str) -> dict:
        model.load_state_dict(start)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
        seen = 0
        for k, batch_items in enumerate(batches):
            if k == args.warmup_steps:
                if device.type == "cuda":
                    torch.cuda.synchronize()
                t0 = time.perf_counter()
            b = collated(batch_items, mode == "bucketed")
            if k >= args.warmup_steps:
                seen += sum((e - a) * w for a, e, w in b["sent_buckets"])
            with autocast_context(device, amp):
                loss = model.loss(model(b), b["targets"], b["sent_group"])
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
        if device.type == "cuda":
            torch.cuda.synchronize()
        sec = (time.perf_counter() - t0) / args.steps
        return {"seconds_per_step": round(sec, 4), "padded_tokens_ratio": round(seen / real, 2)}

    per_mode: dict[str, list[dict]] = {m: [] for m in MODES}
    for r in range(args.repeats):
        for mode in MODES[r % 2 :] + MODES[: r % 2]:  # rotated order
            line = run(mode)
            per_mode[mode].append(line)
            print(json.dumps({"bench": "biencoder", "mode": mode, "repeat": r, **line}), flush=True)
    med = {m: statistics.median(x["seconds_per_step"] for x in per_mode[m]) for m in MODES}
    sentences = sum(len(it.sentences) for b in batches[args.warmup_steps :] for it in b) / args.steps
    print(json.dumps({
        "bench": "summary",
        "speedup": round(med["padded"] / med["bucketed"], 2),
        "seconds_per_step": {m: round(med[m], 4) for m in MODES},
        "sentences_per_second": {m: round(sentences / med[m], 1) for m in MODES},
        "padded_tokens_ratio": {m: per_mode[m][0]["padded_tokens_ratio"] for m in MODES},
        "max_score_difference": score_diff,
        "loss_relative_difference": loss_diff,
        "differs": differs,
        "note": "training steps (forward, pairwise loss, backward, AdamW); medians over the repeats",
    }), flush=True)  # fmt: skip
    return 1 if differs else 0


if __name__ == "__main__":
    sys.exit(main())
