"""The supervised row of WCEP's Table 5: the package's BERT extractive scorer trained on WCEP.

The paper's BERTREG (Appendix A.1) regresses each sentence's ROUGE-1 F1 against the cluster's summary from a
BERT sentence embedding (plus surface features) and selects from the ranked list under a redundancy
constraint. Here the package's own scorer (:mod:`wikiref.model`: the ``model`` section's encoder, sentence
pooling ``wcep.supervised.pooling``, a regression head, the query = category > story path as the query
segment) is trained with the same target and ``pretrain``'s optimiser settings (epochs from
``wcep.supervised.epochs``), the epoch with the lowest dev loss kept; the redundancy threshold of the ranked
selection (:func:`wikiref.stages.wcep.baselines.select_ranked`, <= ``max_tokens``) is tuned on dev by mean
ROUGE-1 F1 like the unsupervised methods'. The surface features of BERTREG are not added (the scorer
has no feature input); say so wherever the row is shown.

A cluster's input is its sentences taken round-robin over its articles (first sentence of every article,
then the second...), capped at ``wcep.supervised.max_sentences`` (null = all) for training and inference
alike: WCEP-100 clusters hold thousands of sentences and the cap is the budget knob of small profiles.
"""

from __future__ import annotations

import random
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


def cluster_sentences(row: Mapping, cap: int | None) -> list[str]:
    """The row's sentences, round-robin over its documents (document order kept), duplicates dropped,
    at most ``cap``."""
    docs = [list(d["sentences"]) for d in row["documents"]]
    out: list[str] = []
    seen: set[str] = set()
    depth = 0
    while any(depth < len(d) for d in docs):
        for d in docs:
            if depth < len(d) and d[depth] not in seen:
                seen.add(d[depth])
                out.append(d[depth])
                if cap is not None and len(out) >= cap:
                    return out
        depth += 1
    return out


def _query(row: Mapping) -> list[str]:
    return [str(q) for q in row["query"]]


def sentence_targets(sentences: Sequence[str], summary: Sequence[str]) -> list[float]:
    """Each sentence's ROUGE-1 F1 against the whole summary (rouge-score semantics, stemmed)."""
    from wikiref.rouge.fast import SentenceSetRouge

    scorer = SentenceSetRouge(list(sentences), " ".join(summary), rouge_type="rouge1")
    return [float(s.fmeasure) for s in scorer.sentence_scores()]


def _examples(rs: Sequence[Mapping], cap: int | None, with_targets: bool) -> list:
    """Scoring examples of the clusters that have sentences (targets: each sentence's ROUGE-1 F1)."""
    from wikiref.model.scoring_task import ScoringExample

    out = []
    for r in rs:
        sents = cluster_sentences(r, cap)
        if not sents:
            continue
        targets = sentence_targets(sents, r["summary"]) if with_targets else None
        out.append(ScoringExample(_query(r), sents, targets, r["id"]))
    return out


def _train_rows(train: Sequence[Mapping], sup: Mapping, seed: int) -> list:
    """The training clusters: at most ``max_train_clusters``, a seeded sample in id order."""
    train_rows = list(train)
    if sup["max_train_clusters"] is not None and len(train_rows) > int(sup["max_train_clusters"]):
        train_rows = random.Random(f"{seed}:wcep-supervised").sample(train_rows, int(sup["max_train_clusters"]))
        train_rows.sort(key=lambda r: r["id"])
    return train_rows


def _ranked_summaries(exs: Sequence, scores: Sequence, redundancy: float, common: Mapping) -> dict[str, list[str]]:
    """Each example's summary: its sentences selected from the scorer's ranking under ``redundancy``."""
    from wikiref.stages.wcep import baselines as bl

    return {
        x.id: [x.sentences[i] for i in bl.select_ranked(x.sentences, list(s), redundancy=redundancy, **common)]
        for x, s in zip(exs, scores)
    }


def _tune_redundancy(grid, dev_ex, dev_scores, dev_rows, common: Mapping, seed: int) -> tuple[float, dict]:
    """(the redundancy threshold of ``grid`` with the best dev mean ROUGE-1 F1, F1 by threshold)."""
    from wikiref.stages.wcep.evaluation import evaluate

    dev_refs = {r["id"]: list(r["summary"]) for r in dev_rows}
    by_value = {}
    for red in grid:
        summ = _ranked_summaries(dev_ex, dev_scores, float(red), common)
        refs = {k: dev_refs[k] for k in summ}
        by_value[float(red)] = evaluate(summ, refs, max_tokens=common["max_tokens"], n_boot=1, seed=seed)["means"][
            "rouge1_f1"
        ]
    return max(by_value, key=lambda v: (by_value[v], -v)), by_value


def train_and_summarize(params: Mapping, rows: Mapping[str, Sequence[Mapping]], model_dir: str | Path) -> dict:
    """Train the scorer on ``rows["train"]`` (best dev-loss epoch kept in ``model_dir``), tune the
    redundancy threshold on dev, and summarise every test cluster; returns the summaries and the run's
    settings and figures."""
    import torch

    from wikiref.model import build_scorer, load_scorer, training
    from wikiref.supervised.pretraining import score_examples, scorer_config

    w = params["wcep"]
    sup, ev = w["supervised"], w["evaluation"]
    seed = int(params["seed"])
    cap = sup["max_sentences"]
    t0 = time.perf_counter()
    train_rows = _train_rows(rows["train"], sup, seed)
    train_ex = _examples(train_rows, cap, True)
    dev_ex = _examples(rows["dev"], cap, True)
    if not train_ex or not dev_ex:
        raise ValueError(f"WCEP supervised: no train ({len(train_ex)}) or dev ({len(dev_ex)}) cluster with sentences")
    variant = {"pooling": sup["pooling"], "head": "regression", "init": "pretrained", "query": True}
    torch.manual_seed(seed)
    model, tokenizer = build_scorer(scorer_config(params["model"], variant))
    section = dict(params["pretrain"], epochs=int(sup["epochs"]))
    settings = training.TrainSettings.from_params(seed, params["model"], section, progress=False)
    result = training.train(model, tokenizer, train_ex, dev_ex, settings, model_dir)
    model, tokenizer = load_scorer(model_dir)

    def scores_of(exs):
        return score_examples(model, tokenizer, [(x.query, x.sentences) for x in exs], params["model"])

    common = {"max_tokens": int(ev["max_tokens"]), "min_sentence_tokens": int(ev["min_sentence_tokens"])}
    best, by_value = _tune_redundancy(ev["redundancy_grid"], dev_ex, scores_of(dev_ex), rows["dev"], common, seed)
    test_ex = _examples(rows["test"], cap, False)
    summaries = _ranked_summaries(test_ex, scores_of(test_ex), best, common)
    for r in rows["test"]:  # a cluster without sentences gets an empty summary (scored 0), never skipped
        summaries.setdefault(r["id"], [])
    return {
        "summaries": summaries,
        "redundancy": best,
        "dev_rouge1_f1": {str(k): round(v, 5) for k, v in by_value.items()},
        "encoder": params["model"]["encoder"],
        "pooling": sup["pooling"],
        "train_clusters": len(train_ex),
        "dev_clusters": len(dev_ex),
        "test_clusters": len(test_ex),
        "max_sentences": cap,
        "training": {
            k: v
            for k, v in result.to_dict().items()
            if k in ("best_epoch", "history", "train_seconds", "windows_per_second", "pack_stats")
        },
        "note": "BERTREG's surface features (Table 6) are not used: the package scorer reads text only",
        "seconds": round(time.perf_counter() - t0, 3),
    }
