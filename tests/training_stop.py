"""Stop a training run after some epochs with ``last/`` left in place, as an interrupted run leaves it: what the
tests of resuming (and ``scripts/gpu-check``) use. Not a switch of the training loop (``wikiref.model.training``):
a patch of it, held for the ``with`` block.

    with stop_after_epochs(1), pytest.raises(TrainingInterrupted):
        train(model, tok, train_examples, dev_examples, settings, out_dir)  # last/ holds epoch 1
    train(model, tok, train_examples, dev_examples, settings, out_dir)  # resumes at epoch 2

Only this folder and the scripts import it; nothing in ``src/wikiref`` does (tests/test_architecture.py).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from wikiref.model import training


class TrainingInterrupted(RuntimeError):
    """Raised by a run that :func:`stop_after_epochs` ended early."""


def _epochs(run) -> int:
    """The epochs ``run`` takes (as ``training.fit`` counts them): ``settings.epochs``, or with ``max_steps`` as many
    as the step budget needs."""
    per_epoch = math.ceil(run.local_batches / run.settings.grad_accum_steps)
    return math.ceil(run.total_steps / per_epoch)


@contextlib.contextmanager
def stop_after_epochs(epochs: int) -> Iterator[None]:
    """Within the block, a run (``training.train`` / ``training.fit`` / ``wikiref.model.abstractive.fit``) ends
    after epoch ``epochs`` (its dev scoring, best checkpoint and ``last/`` written, dvclive closed) by raising
    :class:`TrainingInterrupted`; a run of no more than ``epochs`` epochs completes."""
    end_epoch = training._end_epoch

    def end_then_stop(run, state, epoch: int, epoch_loss: float) -> None:
        end_epoch(run, state, epoch, epoch_loss)
        if epochs <= epoch + 1 < _epochs(run):
            if run.live is not None:
                run.live.end()
            raise TrainingInterrupted(f"stopped after epoch {epoch + 1} as asked")

    training._end_epoch = end_then_stop
    try:
        yield
    finally:
        training._end_epoch = end_epoch
