#!/usr/bin/env python
"""Write a profile as an overlay of params.yaml: only the keys it changes.

A profile (``config/tiny.yaml``, ``config/paper.yaml``) is merged over ``params.yaml`` by Snakemake
(``--configfile``) and by ``wikiref params --configfile``, so it needs to hold only what it changes. Given a
complete parameter set, this computes the minimal overlay (:func:`wikiref.config.minimal_overlay`: mappings
compared key by key, any other value, a list too, whole) and writes it. With ruamel.yaml (installed with DVC)
the entries kept keep their comments and layout, as a draft to edit: comments that explained a dropped entry
may be left on a neighbour; without it the overlay is plain YAML. Either way the file written is checked:
merged over the defaults it gives the complete set again, and :func:`wikiref.config.overlay_problems` finds
nothing.

    python scripts/profile_overlay.py FULL.yaml --out config/tiny.yaml
    git show HEAD:config/tiny.yaml > /tmp/full.yaml && python scripts/profile_overlay.py /tmp/full.yaml
"""

from __future__ import annotations

import argparse
import io
import sys
from collections.abc import Mapping
from pathlib import Path

import yaml

from wikiref import config


def _prune(node, keep: Mapping) -> None:
    """Drop from the round-trip mapping ``node`` every key that ``keep`` (the minimal overlay) lacks."""
    for key in list(node):
        if key not in keep:
            del node[key]
        elif isinstance(keep[key], Mapping) and isinstance(node[key], Mapping) and node[key] != keep[key]:
            _prune(node[key], keep[key])


def render(text: str, overlay: Mapping) -> str:
    """``overlay`` as YAML: the profile's own text pruned to it (ruamel.yaml), else a plain dump."""
    try:
        from ruamel.yaml import YAML
    except ImportError:
        return yaml.safe_dump(dict(overlay), sort_keys=False, default_flow_style=None, width=120)
    rt = YAML()
    rt.width = 120
    rt.preserve_quotes = True
    rt.indent(mapping=2, sequence=4, offset=2)
    doc = rt.load(text)
    _prune(doc, overlay)
    buf = io.StringIO()
    rt.dump(doc, buf)
    return buf.getvalue()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("full", help="a complete parameter set (every key)")
    ap.add_argument("--defaults", default="params.yaml", help="the file it is merged over (default: %(default)s)")
    ap.add_argument("--out", help="write the overlay here (default: stdout)")
    args = ap.parse_args(argv)
    text = Path(args.full).read_text(encoding="utf-8")
    full = yaml.safe_load(text)
    defaults = yaml.safe_load(Path(args.defaults).read_text(encoding="utf-8"))
    overlay = config.minimal_overlay(defaults, full)
    out = render(text, overlay)
    written = yaml.safe_load(out) or {}
    if config.deep_merge(defaults, written) != full or config.overlay_problems(defaults, written):
        print("the overlay does not reproduce the profile:", *config.overlay_problems(defaults, written), sep="\n")
        return 1
    if args.out:
        Path(args.out).write_text(out, encoding="utf-8")
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
