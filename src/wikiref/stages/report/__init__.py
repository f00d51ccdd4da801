"""Tables and figures: every result file is labelled with the profile it ran on."""
