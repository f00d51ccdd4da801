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
import re
from collections.abc import Callable, Iterable, Mapping
from functools import lru_cache
from pathlib import Path

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
        # libyaml's parser when present (the registry reads the schema on import: ~10x faster), same constructors.
        return yaml.load(fh, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


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


def _subschema(schema: Mapping, path: tuple[str, ...]) -> Mapping | None:
    """The schema of the value at ``path`` (a key path into params), or None when no such key exists."""
    node: Mapping = schema
    for key in path:
        props = node.get("properties", {})
        if key not in props:
            return None
        node = props[key]
    return node


def validate_sections(sections: Mapping) -> None:
    """Validate part of the parameters (what a rule passes with ``--params-json``).

    ``sections`` maps top-level sections to their values; a section may be partial (only the keys a
    job reads, see :func:`job_params`): each key given is checked against its own schema, nested
    mappings likewise, and a key the schema does not know is an error."""
    schema = load_schema()
    defs = schema.get("$defs")
    errors_text: list[str] = []

    def check(value, path: tuple[str, ...]) -> None:
        sub = _subschema(schema, path)
        where = ".".join(path)
        if sub is None:
            parent = _subschema(schema, path[:-1]) or {}
            known = ", ".join(sorted(parent.get("properties", {})))
            errors_text.append(f"  {where}: unknown parameter (known: {known})")
            return
        partial = (
            isinstance(value, Mapping) and "properties" in sub and any(k not in value for k in sub.get("required", ()))
        )
        if partial:
            for key, item in value.items():
                check(item, path + (key,))
            return
        full = dict(sub)
        if defs:
            full["$defs"] = defs
        errs = list(_validator(full).iter_errors(value))
        if errs:
            errors_text.append(_format_errors(errs, where).split("\n", 1)[1])

    for key, value in sections.items():
        check(value, (key,))
    if errors_text:
        raise ParamsError("invalid parameters:\n" + "\n".join(errors_text))


def load_params(path: str | os.PathLike = DEFAULT_PARAMS, overlays: Iterable[str | os.PathLike] = ()) -> dict:
    """Read params.yaml (plus optional overlay files, merged deeply in order) and validate."""
    with open(path, encoding="utf-8") as fh:
        params = yaml.safe_load(fh) or {}
    extras = []
    for extra in overlays:
        with open(extra, encoding="utf-8") as fh:
            extras.append(yaml.safe_load(fh) or {})
    params = merge_overlays(params, extras)
    validate(params)
    return params


def merge_overlays(base: Mapping, overlays: Iterable[Mapping]) -> dict:
    """``base`` with ``overlays`` merged over it as Snakemake merges ``--configfile`` files over the Snakefile's
    ``configfile:``: the overlays merged into one first, in order, then that over ``base`` (:func:`deep_merge`)."""
    over: dict = {}
    for extra in overlays:
        over = deep_merge(over, extra)
    return deep_merge(base, over)


def deep_merge(base: Mapping, over: Mapping) -> dict:
    """Merge mappings recursively as Snakemake merges ``--configfile`` files over the Snakefile's ``configfile:``
    (``snakemake.utils.update_config``): a mapping merges key by key, any other value (a list too) replaces.
    Snakemake's corner cases included: a non-empty mapping over a non-mapping replaces it, an empty one keeps it."""
    out = copy.deepcopy(dict(base))
    for key, value in over.items():
        if isinstance(value, Mapping):
            current = out.get(key, {})
            if isinstance(current, Mapping):
                out[key] = deep_merge(current, value)
            elif value:
                out[key] = deep_merge({}, value)
        else:
            out[key] = copy.deepcopy(value)
    return out


def schema_at(path: Iterable[str], schema: Mapping | None = None) -> Mapping | None:
    """The schema of the parameter at key path ``path`` (``("pretrain", "lr")``), ``$ref`` resolved, or None when
    the schema knows no such key. Below a mapping whose keys are free (``additionalProperties`` a schema, e.g.
    ``resources``) any key has that schema; below ``oneOf``/``anyOf`` alternatives, the first that knows the key."""
    schema = load_schema() if schema is None else schema
    defs = schema.get("$defs", {})

    def resolve(node: Mapping) -> Mapping:
        while "$ref" in node:
            ref = node["$ref"]
            if not ref.startswith("#/"):
                raise ParamsError(f"schema reference {ref!r}: only local references are supported")
            target: Mapping = {"$defs": defs, **schema}
            for part in ref[2:].split("/"):
                target = target[part]
            node = target
        return node

    def child(node: Mapping, key: str) -> Mapping | None:
        node = resolve(node)
        if key in node.get("properties", {}):
            return node["properties"][key]
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            return extra
        for alt in (*node.get("oneOf", ()), *node.get("anyOf", ())):
            found = child(alt, key)
            if found is not None:
                return found
        return None

    node: Mapping | None = schema
    for key in path:
        node = child(node, str(key))
        if node is None:
            return None
    return resolve(node)


def _canonical(value) -> str:
    """A value as canonical JSON: equal exactly when YAML would write the same value (1 and 1.0, or true and 1, differ)."""
    return json.dumps(value, sort_keys=True)


def minimal_overlay(defaults: Mapping, full: Mapping) -> dict:
    """The smallest overlay that :func:`deep_merge` (and Snakemake) merge over ``defaults`` into ``full``: the keys
    whose value differs, mappings compared key by key, any other value (lists too) whole. Raises ParamsError where
    no overlay can give ``full`` (a key of ``defaults`` missing from it: an overlay adds and replaces, never removes)."""

    def diff(base: Mapping, target: Mapping, path: tuple[str, ...]) -> dict:
        missing = [k for k in base if k not in target]
        if missing:
            where = ".".join(path) or "the top level"
            raise ParamsError(f"{where}: keys {missing} of the defaults are missing, and an overlay cannot remove keys")
        out: dict = {}
        for key, value in target.items():
            default = base.get(key, _MISSING)
            if isinstance(value, Mapping) and isinstance(default, Mapping):
                sub = diff(default, value, path + (str(key),))
                if sub:
                    out[key] = sub
            elif default is _MISSING or _canonical(value) != _canonical(default):
                out[key] = copy.deepcopy(value)
        return out

    return diff(defaults, full, ())


def overlay_problems(defaults: Mapping, overlay: Mapping, schema: Mapping | None = None) -> list[str]:
    """What is wrong with ``overlay`` (a ``config/*.yaml`` profile) as an overlay of ``defaults`` (params.yaml):
    a key the schema does not know, a value that repeats the default (an overlay holds only what it changes: a
    mapping is compared key by key, any other value whole), an empty mapping (merging it changes nothing), and
    the schema's complaints about the merged result. One line per problem, naming the key path; [] = fine."""
    schema = load_schema() if schema is None else schema
    problems: list[str] = []

    def walk(over: Mapping, base, path: tuple[str, ...]) -> None:
        for key, value in over.items():
            where = path + (str(key),)
            name = ".".join(where)
            if schema_at(where, schema) is None:
                problems.append(f"{name}: unknown parameter (not in {SCHEMA_PATH.name})")
                continue
            default = base.get(key, _MISSING) if isinstance(base, Mapping) else _MISSING
            if isinstance(value, Mapping) and not value and default is not _MISSING:
                problems.append(f"{name}: an empty mapping changes nothing when merged; leave it out")
            elif isinstance(value, Mapping):
                walk(value, default if isinstance(default, Mapping) else {}, where)
            elif default is not _MISSING and _canonical(value) == _canonical(default):
                problems.append(f"{name}: repeats the default value {_canonical(value)}; leave it out")

    walk(overlay, defaults, ())
    try:
        validate(deep_merge(defaults, overlay))
    except ParamsError as exc:
        problems.extend(line.strip() for line in str(exc).splitlines()[1:])
    return problems


def _split_key(key: str) -> tuple[str, ...]:
    return tuple(key.split("."))


_MISSING = object()


def _at(params: Mapping, path: tuple[str, ...]):
    """``(value, None)`` for the value at a key path, or ``(_MISSING, the first key path that is absent)``."""
    node: object = params
    for i, part in enumerate(path):
        if not isinstance(node, Mapping) or part not in node:
            return _MISSING, ".".join(path[: i + 1])
        node = node[part]
    return node, None


def select(config: Mapping, *keys: str) -> dict:
    """The parameters at ``keys`` (top-level sections, or key paths such as ``curate.include_doc_title``)
    as one nested mapping, e.g. ``{"text": {...}, "curate": {"include_doc_title": false}}``."""
    out: dict = {}
    for key in keys:
        path = _split_key(key)
        node, missing = _at(config, path)
        if node is _MISSING:
            raise ParamsError(f"parameter {missing} missing from the config")
        target = out
        for part in path[:-1]:
            target = target.setdefault(part, {})
        target[path[-1]] = copy.deepcopy(node)
    return out


def job_params(config: Mapping, *keys: str, replace: Mapping[str, object] | None = None) -> str:
    """What a Snakemake rule passes a job as ``--params-json``: exactly the parameters it reads.

    ``keys`` are top-level sections or key paths (``"curate.include_doc_title"``); ``replace`` maps key
    paths to values that stand in for the configured ones (e.g. a fine-tuning job's own entry of
    ``finetune.settings``, or empty grid lists for an ablation cell), so editing what a job does not
    read never reruns it (Snakemake's params trigger compares this string). Canonical JSON; the job
    validates it against the schema (:func:`params_from_args`)."""
    out = select(config, *keys)
    for key, value in (replace or {}).items():
        path = _split_key(key)
        target = out
        for part in path[:-1]:
            if part not in target:
                raise ParamsError(f"replace: {key} is not inside the selected parameters {list(keys)}")
            target = target[part]
        target[path[-1]] = copy.deepcopy(value)
    text = json.dumps(out, sort_keys=True, separators=(",", ":"))
    wildcard = _SNAKEMAKE_WILDCARD.search(text)
    if wildcard:
        raise ParamsError(
            f"parameter text {wildcard.group(0)!r} (in {list(keys)}) looks like a Snakemake wildcard, which a rule's"
            " params would try to fill in; write it another way (e.g. a regex quantifier {2,8} as explicit repeats)"
        )
    return text


# What Snakemake expands in a rule's string params: {name} or {name,regex}.
_SNAKEMAKE_WILDCARD = re.compile(r"\{\s*\w+\s*(,[^{}]*)?\}")


def by_name(
    entries: Iterable[Mapping], what: str, error: type[Exception], check: Callable[[dict], None] | None = None
) -> dict[str, dict]:
    """The entries of a params list (``pretrain.variants``, ``finetune.settings``) by their ``name``, as
    dicts; each goes through ``check`` (which raises on a bad one) and a repeated name raises ``error``."""
    out: dict[str, dict] = {}
    for entry in entries:
        entry = dict(entry)
        if entry["name"] in out:
            raise error(f"duplicate {what} name {entry['name']!r}")
        if check is not None:
            check(entry)
        out[entry["name"]] = entry
    return out


def find_named(known: Mapping[str, dict], name: str, what: str, where: str, error: type[Exception]) -> dict:
    """``known[name]`` (see :func:`by_name`); an unknown name raises ``error`` listing those ``where`` defines."""
    if name not in known:
        raise error(f"unknown {what} {name!r}; {where} define: {', '.join(known)}")
    return known[name]


def grid_cell_fields(text: str, columns: tuple[str, ...], error: type[Exception]) -> dict[str, str]:
    """The fields of a grid cell named like Snakemake's ``Paramspace`` wildcard (``col~value`` joined by
    ``_``, in ``columns`` order), as strings; ``error`` says what is wrong with a malformed name. Used by
    the ablation and source-comparison grids."""
    parts = text.split("_")
    if len(parts) != len(columns):
        raise error(f"cell {text!r}: expected {len(columns)} fields {'_'.join(c + '~...' for c in columns)}")
    out = {}
    for part, col in zip(parts, columns):
        key, sep, value = part.partition("~")
        if key != col or not sep or not value:
            raise error(f"cell {text!r}: field {part!r} should be {col}~<value>")
        out[col] = value
    return out


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
    """The parameters at ``keys`` (sections or key paths, as for :func:`job_params`), validated.

    They come from ``--params-json`` (what the rules pass) when it holds them, else from the
    ``--params`` file (default params.yaml)."""
    given: dict = {}
    if getattr(args, "params_json", None):
        try:
            given = json.loads(args.params_json)
        except json.JSONDecodeError as exc:
            raise ParamsError(f"--params-json is not valid JSON: {exc}") from exc
        if not isinstance(given, dict):
            raise ParamsError("--params-json must be a JSON object of top-level sections")
        validate_sections(given)
    missing = [k for k in keys if _at(given, _split_key(k))[0] is _MISSING]
    if missing:
        path = Path(getattr(args, "params", DEFAULT_PARAMS) or DEFAULT_PARAMS)
        if not path.exists():
            raise ParamsError(f"parameters {missing} were not given with --params-json and {path} does not exist")
        full = load_params(path)
        given = deep_merge(given, select(full, *missing))
    return select(given, *keys)


def gpu_resource(config: Mapping, processes: int = 1) -> int:
    """The ``gpu`` resource a training job declares, decided from params alone (``model.device``).

    ``cpu``: 0, so on a CPU-only machine two jobs share the cores even under ``--resources gpu=1``;
    ``cuda``/``cuda:N``/``auto``: ``processes`` (one GPU per DDP process). The submitting host is never
    probed (on a cluster it is not the machine that runs the job): with ``auto`` the job itself picks
    CUDA when the machine it runs on has it, else the CPU."""
    return 0 if config["model"]["device"] == "cpu" else processes
