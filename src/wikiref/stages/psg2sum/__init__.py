"""Psg2Sum: passage-summary pairs mined from Wikipedia revision histories (Zhou et al.)."""
