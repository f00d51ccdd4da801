"""Outputs others can load: a built source as a Hugging Face dataset folder, a checkpoint with a model card.

* :func:`export_dataset` - ``data/sources/<source>/<split>.parquet`` -> a folder that
  ``datasets.load_dataset(<folder>)`` loads: the split files (copied byte for byte), a dataset card
  (``README.md``: the Hub's YAML header with ``configs`` / ``dataset_info``, then the schema, the sizes
  counted from the data, how it was built, the inputs' licences, the STAND-IN label when the data's
  ``standin`` column says so) and the stage's metrics JSON.
* :func:`export_model` - a checkpoint folder (``models/pretrain/<variant>`` ...) -> a folder with its
  files, a model card (what it was trained on, the profile, the base encoder, the numbers of its metrics
  files, found through :mod:`wikiref.layout`) and those metrics files.

Both write the output folder atomically (:func:`wikiref.files.atomic_dir`) and upload nothing; bad input
raises :class:`ExportError` with a message for the command line (``wikiref export``).
"""

from __future__ import annotations

from wikiref.export.common import ExportError
from wikiref.export.dataset import export_dataset
from wikiref.export.model import export_model

__all__ = ["ExportError", "export_dataset", "export_model"]
