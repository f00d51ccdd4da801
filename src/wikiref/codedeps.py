"""Which source files a stage runs, derived from imports (the code dependencies of ``dvc.yaml``).

A stage runs its CLI module and its rules file; every ``wikiref`` module either imports, directly or through
other modules, lazily inside functions too, is part of its code. :mod:`wikiref.registry` asks this module for
each stage's files, so ``dvc repro`` sees every module a stage runs without a hand-kept list.
"""

from __future__ import annotations

import ast
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]


def module_file(module: str) -> Path | None:
    """The source file of a ``wikiref`` module or package, or None when it is not one."""
    rel = Path(*module.split("."))
    pkg = REPO_ROOT / "src" / rel / "__init__.py"
    mod = REPO_ROOT / "src" / rel.with_suffix(".py")
    return pkg if pkg.exists() else mod if mod.exists() else None


def imported_modules(source: str) -> set[str]:
    """The ``wikiref`` modules a source text imports, anywhere (lazy imports inside functions too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.split(".")[0] == "wikiref")
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module.split(".")[0] != "wikiref":
                continue
            out.add(node.module)
            for alias in node.names:  # `from wikiref.stages import pretrain`: a submodule
                if module_file(f"{node.module}.{alias.name}"):
                    out.add(f"{node.module}.{alias.name}")
    parents = {".".join(m.split(".")[:i]) for m in out for i in range(1, m.count(".") + 1)}
    return {m for m in out | parents if module_file(m)}


def smk_imports(path: Path) -> set[str]:
    """The ``wikiref`` modules a rules file imports (its Python import lines)."""
    lines = [
        ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.startswith(("import wikiref", "from wikiref"))
    ]
    return imported_modules("\n".join(lines))


def module_closure(roots: set[str]) -> set[str]:
    """Every ``wikiref`` module reachable from ``roots`` through imports."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        mod = todo.pop()
        if mod in seen:
            continue
        seen.add(mod)
        path = module_file(mod)
        if path is not None:
            todo.extend(imported_modules(path.read_text(encoding="utf-8")) - seen)
    return seen


def source_files(cli_module: str, rules_file: Path) -> tuple[str, ...]:
    """The package's source files a stage runs (relative to the repository): the closure of the imports of its
    CLI module ``cli_module`` and of its rules file."""
    roots = imported_modules(f"import {cli_module}") | smk_imports(rules_file)
    files = {module_file(m) for m in module_closure(roots)}
    return tuple(sorted(str(f.relative_to(REPO_ROOT)) for f in files if f is not None))
