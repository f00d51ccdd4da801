"""The report stage: Tables VIII-IX, Figs. 4-6, the paper comparison and the results index; every
result file is labelled with the profile it ran on. The job is :func:`run` (``wikiref report``)."""

from wikiref.stages.report.build import ReportError, run

__all__ = ["ReportError", "run"]
