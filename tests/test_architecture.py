"""The package's layering (docs/architecture.md), checked on the source tree.

* A stage's package (``wikiref.stages.<stage>``) imports shared layers and its own modules only, never
  another stage's package: stages meet through the files declared in ``layout`` / ``schemas``.
* A shared layer (every package or module of ``wikiref`` outside ``stages``, ``cli`` and the wiring
  modules that declare the stages) never imports a stage.
* No private name (``_name``) is imported, or read off an imported module, across packages.
* The package stands alone: ``scripts/``, ``bench/`` and ``tests/`` import it, nothing in it imports them (neither
  those folders as packages nor a module of theirs by its bare name, e.g. ``tests/training_stop.py``).
* Small units: no function longer than :data:`MAX_FUNCTION_LINES`, no module longer than
  :data:`MAX_MODULE_LINES`.

Each check is a function over a source root, so the tests below also plant a violation in a scratch tree and
see it caught.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src"
# The folders around the package that use it and that it must not use.
OUTSIDE = ("scripts", "bench", "tests")
MAX_FUNCTION_LINES = 80
MAX_MODULE_LINES = 800
# The wiring layer above the stages: it declares and calls them (CLI modules, the registry of jobs and
# outputs, the package entry point).
WIRING = ("wikiref.cli", "wikiref.registry", "wikiref.__main__")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module, e.g. wikiref.stages.qmsum.stage
    target: str  # the imported module, e.g. wikiref.extractive.meetings
    name: str | None  # the imported name for `from target import name`
    line: int


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules(root: Path) -> dict[str, Path]:
    return {module_name(p, root): p for p in sorted((root / "wikiref").rglob("*.py"))}


def imports(root: Path) -> list[Import]:
    """Every import in the package, at module level or inside functions; ``from pkg import mod`` where
    ``pkg.mod`` is a module counts as an import of ``pkg.mod``."""
    known = modules(root)
    out = []
    for mod, path in known.items():
        is_pkg = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                out += [Import(mod, a.name, None, node.lineno) for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # relative import
                    anchor = mod.split(".") if is_pkg else mod.split(".")[:-1]
                    anchor = anchor[: len(anchor) - (node.level - 1)]
                    base = ".".join(anchor + ([base] if base else []))
                for a in node.names:
                    sub = f"{base}.{a.name}"
                    if sub in known:
                        out.append(Import(mod, sub, None, node.lineno))
                    else:
                        out.append(Import(mod, base, a.name, node.lineno))
    return out


def package_of(module: str) -> str:
    """The unit a module belongs to: ``wikiref.stages.<stage>`` for a stage, ``wikiref.<layer>`` otherwise."""
    parts = module.split(".")
    if parts[0] != "wikiref" or len(parts) == 1:
        return parts[0]
    if parts[1] == "stages" and len(parts) > 2:
        return ".".join(parts[:3])
    return ".".join(parts[:2])


def is_stage(module: str) -> bool:
    return module.startswith("wikiref.stages.")


def is_wiring(module: str) -> bool:
    return any(module == w or module.startswith(w + ".") for w in WIRING)


def layering_violations(root: Path) -> list[str]:
    bad = []
    for imp in imports(root):
        if not imp.target.startswith("wikiref"):
            continue
        src_pkg, dst_pkg = package_of(imp.module), package_of(imp.target)
        if is_stage(imp.target) and src_pkg != dst_pkg and not is_wiring(imp.module):
            kind = "stage" if is_stage(imp.module) else "shared layer"
            bad.append(f"{imp.module}:{imp.line}: {kind} imports {imp.target} (stage {dst_pkg.split('.')[-1]})")
        own = f"wikiref.stages.{imp.name}" == src_pkg
        if imp.target == "wikiref.stages" and imp.name and not is_wiring(imp.module) and not own:
            bad.append(f"{imp.module}:{imp.line}: imports stage {imp.name}")
    return bad


def outside_names(repo: Path, folders: tuple[str, ...] = OUTSIDE) -> set[str]:
    """The top-level names an import of ``folders`` would use: each folder (as a package), its Python files
    (``foo.py`` and the extension-less scripts: ``gpu-check`` -> ``gpu_check``, as they are loaded) and its packages
    (as a test's ``sys.path`` entry makes them importable)."""
    names = set()
    for folder in folders:
        names.add(folder)
        for p in (repo / folder).glob("*"):
            if p.is_file() and (p.suffix == ".py" or (folder == "scripts" and not p.suffix)):
                names.add(p.stem.replace("-", "_"))
            elif p.is_dir() and (p / "__init__.py").exists():
                names.add(p.name)
    return names


def outside_violations(root: Path, repo: Path, folders: tuple[str, ...] = OUTSIDE) -> list[str]:
    """Imports in the package (``root/wikiref``) of ``scripts/``, ``bench/`` or ``tests/`` (in ``repo``) or of
    a module of theirs."""
    names = outside_names(repo, folders)
    return [
        f"{imp.module}:{imp.line}: imports {imp.target} (outside the package: {', '.join(folders)})"
        for imp in imports(root)
        if imp.target.split(".")[0] in names
    ]


def _private(name: str | None) -> bool:
    return bool(name) and name.startswith("_") and not name.startswith("__")


def private_violations(root: Path) -> list[str]:
    """``from other_package import _name`` and ``alias._name`` where ``alias`` is a module of another package."""
    known = modules(root)
    bad = []
    for imp in imports(root):
        crosses = package_of(imp.module) != package_of(imp.target)
        if imp.target.startswith("wikiref") and _private(imp.name) and crosses:
            bad.append(f"{imp.module}:{imp.line}: imports private {imp.target}.{imp.name}")
    for mod, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        aliases: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.asname and a.name in known:
                        aliases[a.asname] = a.name
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for a in node.names:
                    if f"{node.module}.{a.name}" in known:
                        aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in aliases
                and _private(node.attr)
                and package_of(aliases[node.value.id]) != package_of(mod)
            ):
                bad.append(f"{mod}:{node.lineno}: reads private {aliases[node.value.id]}.{node.attr}")
    return bad


def size_violations(root: Path) -> list[str]:
    bad = []
    for mod, path in modules(root).items():
        text = path.read_text(encoding="utf-8")
        n = len(text.splitlines())
        if n > MAX_MODULE_LINES:
            bad.append(f"{mod}: module of {n} lines (> {MAX_MODULE_LINES})")
        for node in ast.walk(ast.parse(text, str(path))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    bad.append(f"{mod}:{node.lineno}: function {node.name} of {length} lines (> {MAX_FUNCTION_LINES})")
    return bad


# ------------------------------------------------------------------------------------------ the tree
def test_stages_meet_only_through_files():
    bad = layering_violations(SRC)
    assert not bad, "imports across stages or from a shared layer into a stage:\n" + "\n".join(bad)


def test_no_private_name_crosses_a_package():
    bad = private_violations(SRC)
    assert not bad, "private names used across packages:\n" + "\n".join(bad)


def test_the_package_imports_nothing_from_scripts_bench_or_tests():
    bad = outside_violations(SRC, REPO)
    assert not bad, "imports from outside the package:\n" + "\n".join(bad)


def test_functions_and_modules_are_small():
    bad = size_violations(SRC)
    assert not bad, "units over the size limits:\n" + "\n".join(bad)


def test_the_checks_see_the_whole_package():
    found = imports(SRC)
    assert len(modules(SRC)) > 100
    # function-level imports are seen too (the stages import their shared layers lazily in places)
    assert any(
        i.module == "wikiref.stages.compare.extractive" and i.target == "wikiref.supervised.duc_finetune" for i in found
    )
    # the shared layers the stages have in common are checked as shared layers (never importing a stage)
    for module in ("wikiref.supervised.pretraining", "wikiref.supervised.labels", "wikiref.extractive.selection"):
        assert module in modules(SRC) and not is_stage(module) and not is_wiring(module)
    assert {"wikiref.supervised", "wikiref.extractive"} <= {package_of(i.target) for i in found if is_stage(i.module)}
    # the outside check knows the folders' modules, the extension-less scripts among them
    assert {"bench", "scripts", "tests", "training_stop", "gpu_check", "train_gpu", "conftest"} <= outside_names(REPO)


# ---------------------------------------------------------------------------------- planted violations
def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    for rel, text in {"wikiref/__init__.py": "", "wikiref/stages/__init__.py": "", **files}.items():
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path


@pytest.mark.parametrize(
    "code",
    [
        "from wikiref.stages.beta.core import run\n",
        "def f():\n    from wikiref.stages import beta\n    return beta\n",
        "import wikiref.stages.beta.core\n",
        "from ..beta import core\n",
    ],
)
def test_a_planted_cross_stage_import_is_caught(tmp_path, code):
    root = _tree(
        tmp_path,
        {
            "wikiref/stages/alpha/__init__.py": "",
            "wikiref/stages/alpha/job.py": code,
            "wikiref/stages/beta/__init__.py": "",
            "wikiref/stages/beta/core.py": "def run():\n    pass\n",
        },
    )
    bad = layering_violations(root)
    assert bad and all("wikiref.stages.alpha.job" in b for b in bad)


def test_own_modules_shared_layers_and_wiring_are_allowed(tmp_path):
    root = _tree(
        tmp_path,
        {
            "wikiref/shared.py": "X = 1\n",
            "wikiref/stages/alpha/__init__.py": "from wikiref.stages.alpha import job\n",
            "wikiref/stages/alpha/job.py": "from wikiref.shared import X\nfrom . import helper\n",
            "wikiref/stages/alpha/helper.py": "",
            "wikiref/cli/__init__.py": "from wikiref.stages.alpha import job\n",
        },
    )
    assert layering_violations(root) == []


@pytest.mark.parametrize("shared", ["wikiref/shared.py", "wikiref/supervised/pretraining.py"])
def test_a_shared_layer_importing_a_stage_is_caught(tmp_path, shared):
    root = _tree(
        tmp_path,
        {
            "wikiref/supervised/__init__.py": "",
            shared: "from wikiref.stages.alpha import job\n",
            "wikiref/stages/alpha/__init__.py": "",
        },
    )
    root.joinpath("wikiref/stages/alpha/job.py").write_text("")
    bad = layering_violations(root)
    assert len(bad) == 1 and "shared layer imports" in bad[0]


def _outside_tree(tmp_path: Path, package_files: dict[str, str]) -> tuple[Path, Path]:
    """A package (``src/wikiref``) and the folders around it, which import it (allowed)."""
    repo = tmp_path / "repo"
    around = {
        "scripts/gpu-check": "from wikiref.shared import X\n",
        "scripts/digest.py": "import wikiref.shared\n",
        "bench/train.py": "from wikiref import shared\n",
        "tests/conftest.py": "",
        "tests/training_stop.py": "from wikiref.shared import X\n",
        "tests/test_shared.py": "from training_stop import X\nfrom wikiref.shared import X\n",
    }
    for rel, text in around.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    return _tree(repo / "src", {"wikiref/shared.py": "X = 1\n", **package_files}), repo


def test_scripts_bench_and_tests_may_import_the_package(tmp_path):
    root, repo = _outside_tree(tmp_path, {"wikiref/model.py": "import json\nfrom wikiref.shared import X\n"})
    assert outside_violations(root, repo) == []


@pytest.mark.parametrize(
    "code",
    [
        "import bench.train\n",
        "from scripts import digest\n",
        "def f():\n    from tests.conftest import fixture\n    return fixture\n",
        "from training_stop import TrainingInterrupted\n",  # a test helper by its bare name (tests/ on sys.path)
        "import gpu_check\n",  # an extension-less script, as it is loaded
        "import train\n",  # a bench script
    ],
)
def test_a_planted_import_from_outside_the_package_is_caught(tmp_path, code):
    root, repo = _outside_tree(tmp_path, {"wikiref/stages/alpha/__init__.py": "", "wikiref/stages/alpha/job.py": code})
    bad = outside_violations(root, repo)
    assert len(bad) == 1 and bad[0].startswith("wikiref.stages.alpha.job:")


def test_a_planted_private_import_is_caught(tmp_path):
    root = _tree(
        tmp_path,
        {
            "wikiref/web/__init__.py": "",
            "wikiref/web/download.py": "def _session():\n    pass\n",
            "wikiref/web/fetch.py": "from wikiref.web.download import _session\n",  # same package: fine
            "wikiref/stages/alpha/__init__.py": "",
            "wikiref/stages/alpha/job.py": (
                "from wikiref.web.download import _session\nfrom wikiref.web import download as d\nd._session()\n"
            ),
        },
    )
    bad = private_violations(root)
    assert len(bad) == 2 and all(b.startswith("wikiref.stages.alpha.job") for b in bad)


def test_planted_oversized_units_are_caught(tmp_path):
    long_fn = "def f():\n" + "    x = 1\n" * MAX_FUNCTION_LINES
    short_fn = "def g():\n" + "    x = 1\n" * (MAX_FUNCTION_LINES - 1)
    root = _tree(
        tmp_path,
        {
            "wikiref/a.py": long_fn,
            "wikiref/b.py": short_fn,
            "wikiref/c.py": "x = 1\n" * (MAX_MODULE_LINES + 1),
            "wikiref/d.py": "x = 1\n" * MAX_MODULE_LINES,
        },
    )
    bad = size_violations(root)
    assert len(bad) == 2
    assert any(b.startswith("wikiref.a:1: function f of 81 lines") for b in bad)
    assert any(b.startswith("wikiref.c: module of 801 lines") for b in bad)
