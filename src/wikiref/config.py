"""The single parameter file (`params.yaml`) and its JSON schema.

Snakemake's ``validate()`` and this module read the same schema file,
``workflow/schemas/params.schema.yaml``. Rules pass each step the sections it needs as a JSON
string (``--params-json``), so a change to one value reruns exactly the rules that read it; run by
hand, a step reads ``--params FILE`` (default ``params.yaml``) instead.
"""

from __future__ import annotations

import argparse
import copy
import json
import os
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import yaml

REPO_ROOT = Path(__file__).resolve().parents[2]
SCHEMA_PATH = Path(os.environ.get("WIKIREF_SCHEMA", REPO_ROOT / "workflow" / "schemas" / "params.schema.yaml"))
DEFAULT_PARAMS = "params.yaml"


class ParamsError(ValueError):
    """params.yaml (or a --params-json section) does not fit the schema."""


@lru_cache(maxsize=1)
def load_schema() -> dict:
    if not SCHEMA_PATH.exists():
        raise ParamsError(
            f"parameter schema not found at {SCHEMA_PATH}; run wikiref from a checkout of the repository "
            "(pip install -e .) or point WIKIREF_SCHEMA at workflow/schemas/params.schema.yaml"
        )
    with open(SCHEMA_PATH, encoding="utf-8") as fh:
        return yaml.safe_load(fh)


def _validator(schema: Mapping):
    import jsonschema

    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


def _format_errors(errors: Iterable, where: str) -> str:
    lines = []
    for err in sorted(errors, key=lambda e: list(e.absolute_path)):
        path = ".".join(str(p) for p in err.absolute_path) or "<top>"
        lines.append(f"  {where}{'.' if where else ''}{path}: {err.message}")
    return "invalid parameters:\n" + "\n".join(lines)


def validate(params: Mapping) -> None:
    """Raise ParamsError listing every violation of the schema."""
    errors = list(_validator(load_schema()).iter_errors(params))
    if errors:
        raise ParamsError(_format_errors(errors, ""))


def validate_sections(sections: Mapping) -> None:
    """Validate a subset of top-level sections (what a rule passes with --params-json)."""
    schema = load_schema()
    props = schema.get("properties", {})
    errors_text = []
    for key, value in sections.items():
        if key not in props:
            errors_text.append(f"  {key}: unknown parameter section (known: {', '.join(sorted(props))})")
            continue
        sub = dict(props[key])
        if "$defs" in schema:
            sub["$defs"] = schema["$defs"]
        errs = list(_validator(sub).iter_errors(value))
        if errs:
            errors_text.append(_format_errors(errs, key).split("\n", 1)[1])
    if errors_text:
        raise ParamsError("invalid parameters:\n" + "\n".join(errors_text))


def load_params(path: str | os.PathLike = DEFAULT_PARAMS, overlays: Iterable[str | os.PathLike] = ()) -> dict:
    """Read params.yaml (plus optional overlay files, merged deeply in order) and validate."""
    with open(path, encoding="utf-8") as fh:
        params = yaml.safe_load(fh) or {}
    for extra in overlays:
        with open(extra, encoding="utf-8") as fh:
            params = deep_merge(params, yaml.safe_load(fh) or {})
    validate(params)
    return params


def deep_merge(base: Mapping, over: Mapping) -> dict:
    """Merge mappings recursively like Snakemake merges --configfile files (lists are replaced)."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = deep_merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def sections_json(config: Mapping, *keys: str) -> str:
    """What a Snakemake rule passes as ``--params-json``: the named top-level sections, canonical JSON."""
    missing = [k for k in keys if k not in config]
    if missing:
        raise ParamsError(f"parameter sections missing from the config: {missing}")
    return json.dumps({k: config[k] for k in keys}, sort_keys=True, separators=(",", ":"))


def add_params_arguments(parser: argparse.ArgumentParser) -> None:
    """The two ways every step receives its parameters."""
    group = parser.add_argument_group("parameters")
    group.add_argument(
        "--params",
        default=DEFAULT_PARAMS,
        metavar="FILE",
        help="parameter file validated against workflow/schemas/params.schema.yaml (default: %(default)s)",
    )
    group.add_argument(
        "--params-json",
        metavar="JSON",
        help="the needed top-level sections as a JSON object (what the Snakemake rules pass); "
        "overrides --params for the sections it contains",
    )


def params_from_args(args: argparse.Namespace, *keys: str) -> dict:
    """Return {key: section} for the requested top-level keys, validated."""
    given: dict = {}
    if getattr(args, "params_json", None):
        try:
            given = json.loads(args.params_json)
        except json.JSONDecodeError as exc:
            raise ParamsError(f"--params-json is not valid JSON: {exc}") from exc
        if not isinstance(given, dict):
            raise ParamsError("--params-json must be a JSON object of top-level sections")
        validate_sections(given)
    missing = [k for k in keys if k not in given]
    if missing:
        path = Path(getattr(args, "params", DEFAULT_PARAMS) or DEFAULT_PARAMS)
        if not path.exists():
            raise ParamsError(
                f"sections {missing} were not given with --params-json and {path} does not exist"
            )
        full = load_params(path)
        for k in missing:
            given[k] = full[k]
    return {k: given[k] for k in keys}
