"""Benchmark: training and decoding throughput of the abstractive models on CPU, beside what a user would
otherwise run, their peak memory, and an estimate of the GPU-hours of the papers' training runs.

    python bench/abstractive.py            # tiny + paper-size configs, all four models (a few minutes)
    python bench/abstractive.py --quick    # tiny configs only, smaller samples, shorter decoding (< 1 min)
    python bench/abstractive.py --speedup 60 --psg2sum-epochs 30    # other assumptions for the estimate
    python bench/abstractive.py --data psg2sum --sizes tiny          # data/sources/<source>/train.parquet

Models (each in its own child process, so its memory figures are its own):

``s2s``       :class:`wikiref.model.seq2seq.Seq2Seq`, attention, no copy, no coverage (Psg2Sum Table 4)
``pgn``       the same with copy + coverage (See et al. 2017's pointer-generator)
``hs-base``   :class:`wikiref.model.hiersumm.HierSumm`, Liu & Lapata's baseline (all switches off)
``hs-all``    HEROSumm: hierarchical encodings + ordering + query encoder (5 local + 1 query + 2 global layers)

Sizes:

``tiny``   seq2seq: embedding 32, hidden 64 (32 + 32 encoder), LSTM, vocabulary 2,000;
           hiersumm: d 64, heads 4, feed-forward 128, 2 local + 1 global layers, 1 decoder layer, vocabulary 2,000
``paper``  seq2seq: Psg2Sum's appendix: embedding 300, GRU encoder 256 + 256, GRU decoder 512, dropout 0.5,
           vocabulary 50,000 (the paper does not give one: See et al.'s);
           hiersumm: HEROSumm's appendix A.3: d 256, feed-forward 1024, 6 local + 2 global layers (5 + 1 query +
           2 with the query encoder), 1 decoder layer, heads 8, dropout 0.1, vocabulary 30,000 (not given in
           the paper: the size that gives the baseline its 14.8M parameters). Only a few batches are timed.

Data: synthetic (seeded; Zipf-distributed words, some out of the vocabulary; lengths log-normal around the
papers' averages: Psg2Sum passages 118 words, summaries 22 (Table 2); QmdsCnn 4-8 documents of <= 200
tokens, summaries ~ 50 tokens), or ``--data <source>`` for ``data/sources/<source>/train.parquet``.

Per model and size, side by side in one run (JSON lines ``{"bench": "abstractive", ...}``):

* training: source + target tokens (real, not padding) per second of forward + backward + AdamW step, one
  epoch over the same examples with length-bucketed batches (``wikiref.model.training.epoch_batches``, 50
  batches a bucket: the package's loop) and with random batches (``bucket_batches=1``: a shuffled
  ``DataLoader``), and the padding fraction of each (padding slots / all slots of the padded tensors);
  one untimed warm-up batch first in each mode; tiny: the fastest of 2 epochs a mode (alternating), paper:
  1 epoch of 4 batches;
* decoding: summaries/s of batched decoding (all examples in one batch, ``decode(..., batch_size=n)``)
  and of one example at a time (``batch_size=1``), for beam search (beam 5, trigram blocking, length
  penalty 0.4) and greedy. The summaries must be identical: the run exits 1 when any differs. Decoding
  uses random weights spread wider than the default initialisation (as the tests do), so that outputs
  vary; ``--max-decode`` caps the steps (a random model rarely says ``</s>``);
* memory: the growth of the process's resident set over each phase (``VmRSS`` from /proc/self/statm
  sampled every 2 ms by a thread, minus the RSS at the phase's start, after ``gc.collect`` and glibc's
  ``malloc_trim``), and the child's ``ru_maxrss``. PyTorch's CPU allocations are in the RSS; there is no
  GPU here.

A final line (``"summary": true``) gathers the figures and the GPU-hours estimate: the papers' training
token counts divided by the measured paper-size bucketed tokens/s times ``--speedup`` (an assumed GPU/CPU
throughput ratio, not a measurement), with every assumption printed, and the papers' reported figure
where there is one (HEROSumm: QmdsCnn trained 2.2 days on 4 P100s).
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import ctypes
import gc
import json
import os
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

REPO = Path(__file__).resolve().parents[1]
MODELS = ("s2s", "pgn", "hs-base", "hs-all")
SIZES = ("tiny", "paper")
FAMILY = {"s2s": "seq2seq", "pgn": "seq2seq", "hs-base": "hiersumm", "hs-all": "hiersumm"}

SEQ2SEQ = {
    "tiny": {"embedding_size": 32, "hidden_size": 64, "cell": "lstm", "dropout": 0.0, "vocab": 2000},
    "paper": {"embedding_size": 300, "hidden_size": 512, "cell": "gru", "dropout": 0.5, "vocab": 50_000},
}
HIERSUMM = {
    "tiny": {"d_model": 64, "heads": 4, "ff_size": 128, "local_layers": 2, "global_layers": 1, "vocab": 2000},
    "paper": {"d_model": 256, "heads": 8, "ff_size": 1024, "local_layers": 6, "global_layers": 2, "vocab": 30_000},
}
VARIANT = {
    "s2s": {"copy": False, "coverage": False},
    "pgn": {"copy": True, "coverage": True},
    "hs-base": {},
    "hs-all": {"decoder_local_global": True, "ordering": True, "query_encoder": True},
}
# (training examples, batch size, decoded examples) per size; --quick shrinks them
WORK = {
    ("seq2seq", "tiny"): (256, 16, 24),
    ("seq2seq", "paper"): (48, 12, 6),
    ("hiersumm", "tiny"): (64, 8, 12),
    ("hiersumm", "paper"): (12, 3, 4),
}
WORK_QUICK = {
    ("seq2seq", "tiny"): (48, 12, 6),
    ("seq2seq", "paper"): (8, 4, 2),
    ("hiersumm", "tiny"): (8, 4, 3),
    ("hiersumm", "paper"): (4, 2, 2),
}
REPEAT = {"tiny": 2, "paper": 1}  # timed epochs per training mode (the fastest is kept); --quick: 1
BEAM = {"beam": 5, "block_trigrams": True, "length_penalty": 0.4}  # HS A.3: beam 5, alpha 0.4

# Paper settings of the GPU-hours estimate (printed with the result).
PSG2SUM_TRAIN_PAIRS = 92_118  # Psg2Sum §2.2: 92,118 / 4,000 / 4,000
PSG2SUM_SOURCE_WORDS, PSG2SUM_SUMMARY_WORDS = 118.26, 22.20  # Table 2 averages
HS_STEPS, HS_GPUS, HS_BATCH_TOKENS, HS_ACCUMULATION = 500_000, 4, 8_000, 2  # A.3, QmdsCnn
HS_REPORTED_DAYS = 2.2  # A.3: "the average training time on this dataset [QmdsCnn] is 2.2 days"


# --------------------------------------------------------------------------- memory


class RssSampler:
    """Peak resident set over a phase, sampled from /proc/self/statm every ``interval`` seconds by a thread."""

    def __init__(self, interval: float = 0.002) -> None:
        self.interval = interval
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.start = self.peak = self.rss()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def rss(self) -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * self.page

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            self.peak = max(self.peak, self.rss())

    def __enter__(self) -> RssSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, self.rss())

    @property
    def growth_mb(self) -> float:
        return (self.peak - self.start) / 2**20


def release_memory() -> None:
    """Give freed heap back to the system so the next phase's RSS growth is its own."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


MEMORY_METHOD = (
    "RSS growth over the phase: VmRSS (/proc/self/statm) sampled every 2 ms minus the RSS at the phase's start "
    "(after gc.collect + malloc_trim); includes PyTorch's CPU allocations; child_maxrss_mb = ru_maxrss of the "
    "model's child process"
)


# --------------------------------------------------------------------------- data


def _lengths(rng, mean: float, sigma: float, low: int, high: int, n: int):
    """Log-normal lengths with the given mean, clipped to [low, high]."""
    import numpy as np

    mu = np.log(mean) - sigma**2 / 2
    return np.clip(np.round(rng.lognormal(mu, sigma, n)), low, high).astype(int)


def synthetic_items(family: str, n: int, vocab_words: int, seed: int):
    """``n`` seeded (query, documents, summary) token lists: Zipf words ``w<k>``, ranks up to 5% beyond the
    vocabulary's words (1-2% of the tokens out of vocabulary); summaries copy half their words from the
    documents."""
    import numpy as np

    rng = np.random.default_rng(seed)

    def words(k: int) -> list[str]:
        ranks = rng.zipf(1.15, k)
        ranks = np.where(ranks > vocab_words * 1.05, rng.integers(1, int(vocab_words * 1.05) + 1, k), ranks)
        return [f"w{r}" for r in ranks]

    def summary(docs: list[list[str]], k: int) -> list[str]:
        flat = [w for d in docs for w in d]
        own = words(k)
        return [flat[int(rng.integers(len(flat)))] if rng.random() < 0.5 else own[i] for i in range(k)]

    items = []
    if family == "seq2seq":  # Psg2Sum: one passage of ~118 words, a one-sentence summary of ~22
        src = _lengths(rng, PSG2SUM_SOURCE_WORDS, 0.5, 10, 400, n)
        tgt = _lengths(rng, PSG2SUM_SUMMARY_WORDS, 0.4, 3, 100, n)
        for s, t in zip(src, tgt):
            doc = words(int(s))
            items.append(([], [doc], summary([doc], int(t))))
    else:  # QmdsCnn: a short query, 4-8 documents of <= 200 tokens, a summary of ~50 tokens
        for _ in range(n):
            docs = [words(int(k)) for k in _lengths(rng, 120, 0.6, 10, 200, int(rng.integers(4, 9)))]
            query = words(int(_lengths(rng, 4, 0.5, 1, 32, 1)[0]))
            items.append((query, docs, summary(docs, int(_lengths(rng, 50, 0.35, 10, 100, 1)[0]))))
    return items


def parquet_items(source: str, n: int):
    """The first ``n`` examples of ``data/sources/<source>/train.parquet`` (cycled if it has fewer)."""
    import pandas as pd

    from wikiref.model.abstractive import item_from_example

    df = pd.read_parquet(REPO / "data" / "sources" / source / "train.parquet")
    rows = [item_from_example(r) for r in df.to_dict("records")]
    rows = [r for r in rows if r.summary]
    if not rows:
        raise SystemExit(f"data/sources/{source}/train.parquet has no example with a summary")
    return [(r.query, r.documents, r.summary) for r in (rows * (n // len(rows) + 1))[:n]]


# --------------------------------------------------------------------------- models


def build(model_name: str, size: str, items, synthetic: bool = True):
    """(model config, vocabulary, examples with targets) for one model and size. The vocabulary of synthetic
    data is its most frequent words ``w1 ...`` (the rarest of :func:`synthetic_items`' words are out of
    it, 1-2% of the tokens); that of real data its most frequent tokens, padded with unused words to the
    configured size."""
    from wikiref.model import hiersumm, seq2seq
    from wikiref.model.seq2seq import SPECIALS, Vocab

    family = FAMILY[model_name]
    shape = dict(SEQ2SEQ[size] if family == "seq2seq" else HIERSUMM[size])
    n_vocab = shape.pop("vocab")
    if synthetic:
        vocab = Vocab([*SPECIALS, *(f"w{r}" for r in range(1, n_vocab - len(SPECIALS) + 1))])
    else:
        vocab = Vocab.build([t for q, docs, s in items for t in (q, *docs, s)], n_vocab - len(SPECIALS))
    if len(vocab) < n_vocab:  # a small sample: pad the vocabulary to the configured size with unused words
        vocab = Vocab([*vocab.words, *(f"<unused{i}>" for i in range(n_vocab - len(vocab)))])
    if family == "seq2seq":
        cfg = seq2seq.Seq2SeqConfig(vocab_size=len(vocab), **shape, **VARIANT[model_name])
        examples = [seq2seq.make_example([w for d in docs for w in d], s, vocab, cfg) for _, docs, s in items]
    else:
        variant = dict(VARIANT[model_name])
        if variant.get("query_encoder"):
            shape["local_layers"] -= 1  # HS A.3: 5 local + 1 query + 2 global
        cfg = hiersumm.HierSummConfig(vocab_size=len(vocab), **shape, **variant)
        examples = [hiersumm.make_example(q or ["query"], docs, s, vocab, cfg) for q, docs, s in items]
    return cfg, vocab, examples


def new_model(cfg, seed: int = 0):
    from wikiref.model.hiersumm import HierSumm
    from wikiref.model.seq2seq import Seq2Seq

    torch = sys.modules["torch"]
    torch.manual_seed(seed)
    return Seq2Seq(cfg) if hasattr(cfg, "cell") else HierSumm(cfg)


def collate(cfg, examples):
    from wikiref.model import hiersumm, seq2seq

    return seq2seq.collate(examples, cfg.vocab_size) if hasattr(cfg, "cell") else hiersumm.collate(examples, cfg)


def token_counts(cfg, examples, batch) -> tuple[int, int]:
    """(real source + target tokens, slots of the padded tensors) of one batch."""
    if hasattr(cfg, "cell"):
        real = sum(len(e.source_ids) + len(e.target_ext) + 1 for e in examples)
        slots = batch["src"].numel() + batch["dec_in"].numel()
    else:
        real = sum(
            sum(len(d) for d in e.document_ids)
            + (0 if cfg.query_encoder else len(e.query_ids))  # prepended to the first document
            + len(e.target_ids)
            + 1
            for e in examples
        )
        slots = batch["docs"].numel() + batch["dec_in"].numel()
    return real, slots


# --------------------------------------------------------------------------- phases


def train_mode(cfg, model0, examples, batch_size: int, bucket_batches: int) -> dict:
    """One epoch (forward + backward + AdamW step per batch) over ``examples`` in ``epoch_batches`` order,
    after one untimed warm-up batch; tokens/s of real tokens and the padding fraction."""
    import torch

    from wikiref.model.training import epoch_batches

    model = copy.deepcopy(model0).train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    batches = epoch_batches(examples, batch_size, bucket_batches, 0, 0)

    def step(idx):
        chunk = [examples[i] for i in idx]
        batch = collate(cfg, chunk)
        opt.zero_grad(set_to_none=True)
        loss = model(batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 2.0)
        opt.step()
        return token_counts(cfg, chunk, batch)

    step(batches[0])  # warm-up: allocator, kernels
    release_memory()
    real = slots = 0
    with RssSampler() as mem:
        t, c = time.perf_counter(), time.process_time()
        for idx in batches:
            r, s = step(idx)
            real, slots = real + r, slots + s
        wall, cpu = time.perf_counter() - t, time.process_time() - c
    return {
        "batches": len(batches),
        "tokens": real,
        "padded_slots": slots,
        "padding_fraction": 1 - real / slots,
        "seconds": wall,
        "tokens_per_s": real / wall,
        "tokens_per_cpu_s": real / cpu,
        "rss_growth_mb": mem.growth_mb,
    }


def spread_weights(model, scale: float = 1.5):
    """Random weights spread wider than the default initialisation (the tests' ``random_model``)."""
    import torch

    with torch.no_grad():
        for p in model.parameters():
            p.normal_(0.0, scale / max(1, p.shape[-1]) ** 0.5)
    return model.eval()


def decode_examples(cfg, model, vocab, examples, settings, batch_size: int):
    """Summaries (token lists) of ``examples`` with the family's ``decode`` (length-sorted batches)."""
    import dataclasses

    from wikiref.model import decoding as seq2seq_decoding
    from wikiref.model import hiersumm

    if hasattr(cfg, "cell"):
        return seq2seq_decoding.decode(model, vocab, examples, settings, batch_size=batch_size)
    return hiersumm.decode(
        model, vocab, [dataclasses.replace(e, target_ids=()) for e in examples], settings, batch_size=batch_size
    )


def one_at_a_time(cfg, model, vocab, examples, settings):
    """The baseline: each example decoded alone (a batch of one)."""
    return decode_examples(cfg, model, vocab, examples, settings, 1)


def decode_mode(cfg, model, vocab, examples, settings, alone: bool) -> tuple[list, dict]:
    release_memory()
    with RssSampler() as mem:
        t = time.perf_counter()
        if alone:
            out = one_at_a_time(cfg, model, vocab, examples, settings)
        else:
            out = decode_examples(cfg, model, vocab, examples, settings, len(examples))
        wall = time.perf_counter() - t
    return out, {
        "summaries_per_s": len(examples) / wall,
        "seconds": wall,
        "mean_summary_tokens": sum(len(o) for o in out) / max(1, len(out)),
        "rss_growth_mb": mem.growth_mb,
    }


def run_case(args, model_name: str, size: str) -> dict:
    """Everything measured for one model at one size (run in a child process by default)."""
    import torch

    from wikiref.model.decoding import DecodeSettings

    if args.threads:
        torch.set_num_threads(args.threads)
    family = FAMILY[model_name]
    n_train, batch_size, n_decode = (WORK_QUICK if args.quick else WORK)[family, size]
    if args.data:
        items = parquet_items(args.data, n_train)
        data = f"data/sources/{args.data}/train.parquet"
    else:
        vocab_words = (SEQ2SEQ if family == "seq2seq" else HIERSUMM)[size]["vocab"]
        items = synthetic_items(family, n_train, vocab_words, seed=0)
        data = "synthetic (seeded)"
    cfg, vocab, examples = build(model_name, size, items, synthetic=not args.data)
    model0 = new_model(cfg)
    params = sum(p.numel() for p in model0.parameters())
    train: dict = {}
    repeat = 1 if args.quick else REPEAT[size]
    for r in range(repeat):  # the modes alternate, so a busy spell of the machine hits both
        for mode, bucket_batches in (("bucketed", 50), ("random", 1))[:: 1 if r % 2 == 0 else -1]:
            res = train_mode(cfg, model0, examples, batch_size, bucket_batches)
            release_memory()
            best = train.get(mode)
            if best is None or res["seconds"] < best["seconds"]:
                train[mode] = {**res, "repeats": repeat}
    target_tokens = sum(len(getattr(e, "target_ext", getattr(e, "target_ids", ()))) + 1 for e in examples)
    if train["bucketed"]["tokens"] != train["random"]["tokens"]:
        raise AssertionError("the two training modes saw different tokens")
    max_decode = args.max_decode or (10 if args.quick else 30 if size == "paper" else 40)
    dec_model = spread_weights(copy.deepcopy(model0))
    del model0
    sources = examples[:n_decode]
    decode: dict = {}
    differ: dict = {}
    for name, settings in (
        ("beam5", DecodeSettings(max_length=max_decode, **BEAM)),
        ("greedy", DecodeSettings(beam=1, max_length=max_decode)),
    ):
        batched, rb = decode_mode(cfg, dec_model, vocab, sources, settings, alone=False)
        alone, ra = decode_mode(cfg, dec_model, vocab, sources, settings, alone=True)
        differ[name] = [i for i, (a, b) in enumerate(zip(batched, alone)) if a != b] + (
            [] if len(batched) == len(alone) else [min(len(batched), len(alone))]
        )
        decode[name] = {
            "batched": rb,
            "one_at_a_time": ra,
            "speedup_batched": rb["summaries_per_s"] / ra["summaries_per_s"],
            "identical": not differ[name],
            "differing_examples": differ[name],
        }
    return {
        "bench": "abstractive",
        "model": model_name,
        "size": size,
        "variant": cfg.variant,
        "config": {k: v for k, v in cfg.to_dict().items() if k != "format"},
        "parameters": params,
        "data": data,
        "threads": torch.get_num_threads(),
        "train_examples": len(examples),
        "batch_size": batch_size,
        "mean_example_tokens": train["bucketed"]["tokens"] / len(examples),
        "target_share": target_tokens / train["bucketed"]["tokens"],
        "train": train,
        "train_speedup_bucketed": train["bucketed"]["tokens_per_s"] / train["random"]["tokens_per_s"],
        "decode_examples": len(sources),
        "decode_max_length": max_decode,
        "decode_settings": {"beam5": {**BEAM, "beam": 5}, "greedy": {"beam": 1}},
        "decode": decode,
        "identical": all(not d for d in differ.values()),
        "memory_method": MEMORY_METHOD,
        "child_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _run_child(args, model_name: str, size: str) -> dict:
    if args.in_process:
        return run_case(args, model_name, size)
    cmd = [sys.executable, __file__, "--child", f"{model_name}:{size}", "--threads", str(args.threads)]
    if args.quick:
        cmd.append("--quick")
    if args.data:
        cmd += ["--data", args.data]
    if args.max_decode:
        cmd += ["--max-decode", str(args.max_decode)]
    res = subprocess.run(cmd, capture_output=True, text=True)
    if res.returncode != 0:
        sys.stderr.write(res.stderr[-3000:])
        raise SystemExit(res.returncode)
    return json.loads(res.stdout.strip().splitlines()[-1])


# --------------------------------------------------------------------------- estimate


def _gpu_rate(args, key: str) -> float | None:
    """A training tokens/s measured on the GPU by ``scripts/gpu-check --rates`` (its models are small: the
    figure is a lower bound on the GPU-hours of the paper-size models), or None without ``--gpu-rates``."""
    if args.gpu_rates is None:
        return None
    value = json.loads(Path(args.gpu_rates).read_text()).get(key)
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


def estimate(results: dict, args) -> dict:
    """GPU-hours of the papers' training runs from the paper-size bucketed tokens/s (see the docstring)."""
    out: dict = {
        "assumptions": {
            "speedup_gpu_over_this_cpu": args.speedup,
            "speedup_note": "assumed ratio of one training GPU's tokens/s to this CPU's (--speedup), not measured",
            "tokens": "real source + target tokens (with </s>), as measured; padding not counted",
        }
    }
    s2s_tokens = PSG2SUM_TRAIN_PAIRS * (PSG2SUM_SOURCE_WORDS + PSG2SUM_SUMMARY_WORDS + 1) * args.psg2sum_epochs
    out["psg2sum"] = {
        "assumptions": {
            "train_pairs": PSG2SUM_TRAIN_PAIRS,
            "tokens_per_pair": PSG2SUM_SOURCE_WORDS + PSG2SUM_SUMMARY_WORDS + 1,
            "epochs": args.psg2sum_epochs,
            "epochs_note": "not given in the paper (--psg2sum-epochs)",
            "batch_size": 64,
        },
        "train_tokens": s2s_tokens,
    }
    hs_batch = None
    for name in ("s2s", "pgn"):
        r = results.get((name, "paper"))
        if r:
            tps = r["train"]["bucketed"]["tokens_per_s"]
            out["psg2sum"][name] = {
                "cpu_tokens_per_s": tps,
                "cpu_hours": s2s_tokens / tps / 3600,
                "gpu_hours": s2s_tokens / (tps * args.speedup) / 3600,
            }
            gpu_tps = _gpu_rate(args, "abstractive_seq2seq_tokens_per_second")
            if gpu_tps:
                out["psg2sum"][name]["gpu_hours_measured"] = s2s_tokens / gpu_tps / 3600
    for name in ("hs-base", "hs-all"):
        r = results.get((name, "paper"))
        if not r:
            continue
        if hs_batch is None:
            # L&L batch by source tokens; the target's tokens come on top in the measured ratio
            real = r["train"]["bucketed"]["tokens"]
            target_share = r["target_share"]
            hs_batch = HS_BATCH_TOKENS / (1 - target_share)
            hs_tokens = HS_STEPS * hs_batch * HS_ACCUMULATION * HS_GPUS
            reported = HS_REPORTED_DAYS * 24 * HS_GPUS
            out["herosumm"] = {
                "assumptions": {
                    "steps": HS_STEPS,
                    "gpus": HS_GPUS,
                    "batch_source_tokens_per_gpu": HS_BATCH_TOKENS,
                    "gradient_accumulation": HS_ACCUMULATION,
                    "target_share_of_tokens": target_share,
                    "note": "QmdsCnn settings of A.3; a step = batch x accumulation x GPUs; the batch counts "
                    "source tokens, the target's added in the synthetic data's ratio",
                    "measured_tokens": real,
                },
                "train_tokens": hs_tokens,
                "paper_reported_gpu_hours": reported,
                "paper_reported_note": "2.2 days on 4 P100 GPUs (QmdsCnn, A.3)",
            }
        tps = r["train"]["bucketed"]["tokens_per_s"]
        gpu_hours = hs_tokens / (tps * args.speedup) / 3600
        out["herosumm"][name] = {
            "cpu_tokens_per_s": tps,
            "cpu_hours": hs_tokens / tps / 3600,
            "gpu_hours": gpu_hours,
            "speedup_matching_reported": hs_tokens / tps / 3600 / reported,
        }
        gpu_tps = _gpu_rate(args, "abstractive_hiersumm_tokens_per_second")
        if gpu_tps:
            out["herosumm"][name]["gpu_hours_measured"] = hs_tokens / gpu_tps / 3600
    return out


# --------------------------------------------------------------------------- main


def summary_line(results: dict, args) -> dict:
    def per_case(f):
        return {f"{m}:{s}": f(r) for (m, s), r in results.items()}

    return {
        "bench": "abstractive",
        "summary": True,
        "train_tokens_per_s": per_case(lambda r: {k: v["tokens_per_s"] for k, v in r["train"].items()}),
        "padding_fraction": per_case(lambda r: {k: v["padding_fraction"] for k, v in r["train"].items()}),
        "train_speedup_bucketed": per_case(lambda r: r["train_speedup_bucketed"]),
        "decode_summaries_per_s": per_case(
            lambda r: {
                name: {
                    "batched": d["batched"]["summaries_per_s"],
                    "one_at_a_time": d["one_at_a_time"]["summaries_per_s"],
                }
                for name, d in r["decode"].items()
            }
        ),
        "decode_speedup_batched": per_case(lambda r: {n: d["speedup_batched"] for n, d in r["decode"].items()}),
        "rss_growth_mb": per_case(
            lambda r: {
                "train_bucketed": r["train"]["bucketed"]["rss_growth_mb"],
                "train_random": r["train"]["random"]["rss_growth_mb"],
                "beam5_batched": r["decode"]["beam5"]["batched"]["rss_growth_mb"],
                "beam5_one_at_a_time": r["decode"]["beam5"]["one_at_a_time"]["rss_growth_mb"],
            }
        ),
        "child_maxrss_mb": per_case(lambda r: r["child_maxrss_mb"]),
        "memory_method": MEMORY_METHOD,
        "estimate": estimate(results, args),
        "identical": per_case(lambda r: r["identical"]),
        "all_identical": all(r["identical"] for r in results.values()),
        "quick": bool(args.quick),
    }


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="smaller samples, shorter decoding (< 1 min)")
    ap.add_argument("--models", default=",".join(MODELS), help=f"comma-separated subset of {','.join(MODELS)}")
    ap.add_argument(
        "--sizes", default=None, help=f"comma-separated subset of {','.join(SIZES)} (default: all; --quick: tiny)"
    )
    ap.add_argument("--threads", type=int, default=2, help="torch threads (0: torch's default)")
    ap.add_argument("--data", default=None, help="read data/sources/<DATA>/train.parquet instead of synthetic data")
    ap.add_argument("--max-decode", type=int, default=0, help="decoding steps (0: 10 quick, 30 paper, 40 tiny)")
    ap.add_argument("--speedup", type=float, default=30.0, help="assumed GPU/CPU training throughput ratio")
    ap.add_argument("--gpu-rates", type=Path, help="scripts/gpu-check --rates JSON: measured tokens/s, not --speedup")
    ap.add_argument("--psg2sum-epochs", type=float, default=20.0, help="assumed Psg2Sum training epochs")
    ap.add_argument("--in-process", action="store_true", help="no child processes (memory figures then shared)")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.sizes is None:
        args.sizes = "tiny" if args.quick else ",".join(SIZES)
    for name, known in (("models", MODELS), ("sizes", SIZES)):
        values = [v for v in getattr(args, name).split(",") if v]
        unknown = set(values) - set(known)
        if unknown or not values:
            ap.error(f"--{name}: unknown {sorted(unknown)}; known: {','.join(known)}")
        setattr(args, name, values)
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.child:
        model_name, size = args.child.split(":")
        print(json.dumps(run_case(args, model_name, size)))
        return 0
    results = {}
    for size in args.sizes:
        for model_name in args.models:
            r = _run_child(args, model_name, size)
            results[model_name, size] = r
            print(json.dumps(r), flush=True)
    summary = summary_line(results, args)
    print(json.dumps(summary), flush=True)
    return 0 if summary["all_identical"] else 1


if __name__ == "__main__":
    sys.exit(main())
