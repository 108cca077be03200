"""Codebase rules, checked on the syntax tree (plain pytest, no bpy).

- The engine (``procanim_addon/``) never imports bpy, mathutils or bmesh, and never reaches out of
  its package (e.g. into ``operators/``).
- No bare ``except:`` and no ``import *`` anywhere in the project.
- Every ``bpy.props`` property in the add-on has ``name=`` and ``description=`` (tooltips).
- No ``keyframe_insert`` or ``frame_set`` in the add-on: keys are written with ``foreach_set`` and
  nothing per-frame moves the scene's current frame.
- At most one add-on file reads ``bpy.app.version``: the version branch lives in one place.
- Every numeric property an operator declares has hard limits or is bound to the engine's
  documented limits (``operators/limits.py`` → ``procanim_addon/limits.py``).
- No function over 80 lines in the engine or the operators (declarative tables excepted).
- No ``preset_defines`` on preset operators: Blender 4.3 under Python 3.13 (Debian's build)
  ``exec()``s the defines and then ``eval()``s the values in a fresh namespace (PEP 667), so a value
  such as ``walk.speed`` raises NameError; full data paths work on every version.
- The layers point down (panels → preview → operators → engine; batch beside operators): no module
  imports a layer above its own, at module level or inside a function (:data:`MAY_IMPORT`), and no
  import cycle exists among the shipped modules, function-level imports included.
- At most a handful of imports inside functions in the shipped code, each with a comment saying
  why (an optional module, a package that must import without Blender).
- What is imported without Blender (the package itself, and the batch modules the pipeline runner
  and the Dask workers import before or without a Blender: :data:`IMPORTED_WITHOUT_BLENDER`) imports
  no Blender module at module level, itself or through the project's modules it imports.
- No function with more than 10 parameters: pass the state object whole.
- A docstring that names a function (``:func:``/``:meth:``) names one that exists.

Each rule is a function ``(tree, path) -> [message]``, unit-tested below on small sources so that
each one is known to fail when it should.
"""

from __future__ import annotations

import ast
import functools
import re
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
ENGINE_DIR = "procanim_addon"
FORBIDDEN_IN_ENGINE = ("bpy", "mathutils", "bmesh")
FORBIDDEN_CALLS = ("keyframe_insert", "frame_set")
# The one file where Blender evaluates frames: the sampled verification of a bake onto a control rig
# (a dozen frames per bake, never each frame) and reading a control rig's evaluated motion.
FRAME_SET_ALLOWED = ("operators/control_rig.py",)
NEVER_SCANNED = ("__pycache__", ".git", ".venv", "venv", "dist", "out", "build", "node_modules")

Rule = Callable[[ast.AST, Path], list[str]]


# --------------------------------------------------------------------------------------------
# Which files


def _top_dirs_excluded_by_manifest() -> set[str]:
    """Top-level directories the extension build leaves out (``/tests/`` etc. in the manifest)."""
    with open(REPO_ROOT / "blender_manifest.toml", "rb") as fh:
        patterns = tomllib.load(fh).get("build", {}).get("paths_exclude_pattern", [])
    return {p.strip("/") for p in patterns if p.startswith("/") and p.endswith("/") and "*" not in p}


def _python_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root)
        if any(part in NEVER_SCANNED or part.startswith(".venv") for part in rel.parts[:-1]):
            continue
        yield path


def project_files() -> list[Path]:
    """Every Python file of the project (add-on, tests, tools, bench)."""
    return list(_python_files(REPO_ROOT))


def addon_files() -> list[Path]:
    """The Python files that ship in the extension zip: root ``__init__.py``, operators/, panels/,
    procanim_addon/ and anything else the manifest does not exclude."""
    excluded = _top_dirs_excluded_by_manifest()
    return [p for p in project_files() if p.relative_to(REPO_ROOT).parts[0] not in excluded]


def engine_files() -> list[Path]:
    return [p for p in project_files() if p.relative_to(REPO_ROOT).parts[0] == ENGINE_DIR]


@functools.cache  # every rule reads the same trees
def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _relative(path: Path) -> Path:
    """``path`` relative to the repository (unit tests pass made-up relative paths as they are)."""
    return path.relative_to(REPO_ROOT) if path.is_absolute() and path.is_relative_to(REPO_ROOT) else path


def _where(path: Path, node: ast.AST) -> str:
    return f"{_relative(path)}:{getattr(node, 'lineno', '?')}"


def _dotted(node: ast.AST) -> str | None:
    """``a.b.c`` for a Name/Attribute chain, else None."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


# --------------------------------------------------------------------------------------------
# Rules


def rule_engine_imports(tree: ast.AST, path: Path) -> list[str]:
    """No bpy/mathutils/bmesh import (``import x``, ``import x.y``, ``from x import``,
    ``__import__``/``importlib.import_module`` with a literal name)."""
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and _dotted(node.func) in ("__import__", "importlib.import_module"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                names = [node.args[0].value]
        for name in names:
            if name.split(".")[0] in FORBIDDEN_IN_ENGINE:
                found.append(f"{_where(path, node)}: the engine imports {name}")
    return found


def rule_engine_stays_in_package(tree: ast.AST, path: Path) -> list[str]:
    """Relative imports in the engine resolve inside ``procanim_addon`` (no ``from ..operators``).

    A file ``procanim_addon/ik/x.py`` sits in 2 packages: level 1 is ``procanim_addon.ik``, level 2
    ``procanim_addon``, level 3 would be the add-on root, outside the engine.
    """
    packages = len(_relative(path).parts) - 1
    return [
        f"{_where(path, node)}: relative import {'.' * node.level}{node.module or ''} leaves {ENGINE_DIR}/"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.level > packages
    ]


def rule_bare_except(tree: ast.AST, path: Path) -> list[str]:
    return [
        f"{_where(path, node)}: bare 'except:' (name the exceptions)"
        for node in ast.walk(tree)
        if isinstance(node, ast.ExceptHandler) and node.type is None
    ]


def rule_star_import(tree: ast.AST, path: Path) -> list[str]:
    return [
        f"{_where(path, node)}: 'from {'.' * node.level}{node.module or ''} import *'"
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names)
    ]


def _names_bound_to_bpy_props(tree: ast.AST) -> tuple[set[str], set[str]]:
    """(module aliases of bpy.props, function names imported from bpy.props)."""
    modules = {"bpy.props"}
    functions = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "bpy.props":
            functions |= {alias.asname or alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module == "bpy":
            modules |= {alias.asname or alias.name for alias in node.names if alias.name == "props"}
        elif isinstance(node, ast.Import):
            modules |= {alias.asname for alias in node.names if alias.name == "bpy.props" and alias.asname}
    return modules, functions


def rule_property_has_name_and_description(tree: ast.AST, path: Path) -> list[str]:
    modules, functions = _names_bound_to_bpy_props(tree)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        dotted = _dotted(node.func)
        if dotted is None:
            continue
        owner, _, func = dotted.rpartition(".")
        is_property = (owner in modules and func.endswith("Property")) or (not owner and func in functions)
        if not is_property:
            continue
        keywords = {kw.arg for kw in node.keywords}
        if None in keywords:  # **kwargs: cannot tell statically
            continue
        missing = [k for k in ("name", "description") if k not in keywords]
        if missing:
            found.append(f"{_where(path, node)}: {func}(...) without {' and '.join(k + '=' for k in missing)}")
    return found


def rule_no_per_frame_calls(tree: ast.AST, path: Path) -> list[str]:
    """No ``keyframe_insert``/``frame_set``: as an attribute, a name, or a getattr string."""
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_CALLS:
            name = node.attr
        elif isinstance(node, ast.Name) and node.id in FORBIDDEN_CALLS:
            name = node.id
        elif isinstance(node, ast.Constant) and node.value in FORBIDDEN_CALLS:
            name = node.value
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            name = next((a.name for a in node.names if a.name.rpartition(".")[2] in FORBIDDEN_CALLS), None)
        if name == "frame_set" and path.as_posix().endswith(FRAME_SET_ALLOWED):
            continue
        if name:
            found.append(f"{_where(path, node)}: {name} in the add-on (use foreach_set / no frame changes)")
    return found


def rule_no_preset_defines(tree: ast.AST, path: Path) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        if any(getattr(t, "id", None) == "preset_defines" for t in targets):
            found.append(
                f"{_where(path, node)}: preset_defines breaks presets on Blender 4.3 + Python 3.13; "
                "write full data paths in preset_values (bpy.context.scene....)"
            )
    return found


NUMBER_PROPERTIES = ("IntProperty", "FloatProperty", "IntVectorProperty", "FloatVectorProperty")
LIMITS_BINDING = Path("operators/limits.py")  # binds properties to procanim_addon/limits.py (tested there)


def rule_operator_numbers_bounded(tree: ast.AST, path: Path) -> list[str]:
    """Every numeric property an operator declares has hard ``min=`` and ``max=``, or is made by
    ``operators/limits.py`` from the engine's documented limits (which the engine validates)."""
    if _relative(path) == LIMITS_BINDING:
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (_dotted(node.func) or "").rpartition(".")[2] in NUMBER_PROPERTIES:
            keywords = {kw.arg for kw in node.keywords}
            if not {"min", "max"} <= keywords:
                found.append(
                    f"{_where(path, node)}: numeric property without min= and max= "
                    "(bind it to the engine's limits with operators/limits.py:number, or give hard limits)"
                )
    return found


MAX_FUNCTION_LINES = 80


def _is_declarative(node: ast.FunctionDef) -> bool:
    """A function that only returns a literal table (a dict of property definitions …)."""
    body = [n for n in node.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    return len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, (ast.Dict, ast.Tuple))


def rule_function_length(tree: ast.AST, path: Path) -> list[str]:
    """No function longer than :data:`MAX_FUNCTION_LINES` lines (declarative tables excepted)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and not _is_declarative(node):
            length = node.end_lineno - node.lineno + 1
            if length > MAX_FUNCTION_LINES:
                found.append(f"{_relative(path).as_posix()}:{node.name} is {length} lines")
    return found


def reads_blender_version(tree: ast.AST) -> bool:
    """True if the source reads ``bpy.app.version`` (or imports ``version`` from ``bpy.app``)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == "version" and (_dotted(node) or "").endswith("app.version"):
            return True
        if isinstance(node, ast.ImportFrom) and node.module == "bpy.app":
            if any(alias.name == "version" for alias in node.names):
                return True
    return False


def rule_one_version_branch(trees: dict[Path, ast.AST]) -> list[str]:
    """At most one file reads ``bpy.app.version``."""
    readers = sorted(str(_relative(path)) for path, tree in trees.items() if reads_blender_version(tree))
    if len(readers) > 1:
        return [f"bpy.app.version is read in {len(readers)} files; keep the version branch in one: {readers}"]
    return []


# --------------------------------------------------------------------------------------------
# Structure: imports, parameters, docstrings (issue 22)

# Which top-level packages each may import (module level and inside functions): the layers point
# down, panels → preview → operators → engine, and batch sits beside operators (importing them,
# imported by none of them). "" is the root __init__.py, which registers everything.
MAY_IMPORT = {
    ENGINE_DIR: {ENGINE_DIR},
    "operators": {"operators", ENGINE_DIR},
    "preview": {"preview", "operators", ENGINE_DIR},
    "panels": {"panels", "preview", "operators", ENGINE_DIR},
    "batch": {"batch", "operators", ENGINE_DIR},
    "": {"", "panels", "preview", "operators", "batch", ENGINE_DIR},
}
MAX_FUNCTION_LEVEL_IMPORTS = 6  # a handful, each with a comment saying why
MAX_PARAMETERS = 10
# Imported where no Blender runs: the package (tools/batch.py loads it first), the batch command's
# code before its Blender is up (tools/batch.py), the Dask workers' side (batch/dask_plugin.py), the
# stale-install sweep (tools/batch.py). batch/__init__.py lists which batch modules are which.
IMPORTED_WITHOUT_BLENDER = ("", "batch.cli", "batch.dask_worker", "batch.dask_plugin", "batch.processes")
BLENDER_ONLY_MODULES = ("bpy", "mathutils", "bmesh", "gpu", "gpu_extras", "blf")


def module_name(path: Path) -> str:
    """``operators.bake`` for ``operators/bake.py``; ``operators`` for its ``__init__.py``; "" for
    the root ``__init__.py``."""
    parts = list(_relative(path).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package_parts(path: Path) -> list[str]:
    module = module_name(path)
    parts = module.split(".") if module else []
    return parts if _relative(path).name == "__init__.py" else parts[:-1]


def import_targets(tree: ast.AST, path: Path, modules: set[str] | None = None) -> list[tuple[str, int, bool]]:
    """``(module, line, inside a function)`` of every import of the project's own modules in
    ``tree`` (relative imports resolved; ``from . import x`` names the module ``x`` when ``modules``
    — the project's module names — has it). Imports of other packages (bpy, numpy) are left out."""
    modules = modules or set()
    package = _package_parts(path)
    in_function: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            in_function |= {id(n) for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom))}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[: len(package) - node.level + 1]
            target = ".".join(base + ([node.module] if node.module else []))
            names = [f"{target}.{a.name}".lstrip(".") for a in node.names]
            found = [n for n in names if n in modules]
            for name in found if len(found) == len(names) else [target]:
                out.append((name, node.lineno, id(node) in in_function))
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in MAY_IMPORT:
            out.append((node.module, node.lineno, id(node) in in_function))
    return out


def _layer(module: str) -> str:
    return module.split(".")[0] if module else ""


def rule_imports_point_down(tree: ast.AST, path: Path) -> list[str]:
    """No import of a layer above (see :data:`MAY_IMPORT`), at module level or inside a function."""
    own = _layer(module_name(path))
    allowed = MAY_IMPORT.get(own, {own})
    return [
        f"{_relative(path).as_posix()}:{line}: {own or 'the root'} imports {target} ({_layer(target)}/ is not below it)"
        for target, line, _inside in import_targets(tree, path)
        if _layer(target) not in allowed
    ]


def import_graph(trees: dict[Path, ast.AST]) -> dict[str, dict[str, str]]:
    """Module → {imported project module: where}, function-level imports included."""
    modules = {module_name(path) for path in trees}
    graph: dict[str, dict[str, str]] = {module_name(path): {} for path in trees}
    for path, tree in trees.items():
        source = module_name(path)
        for target, line, _inside in import_targets(tree, path, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target != source and target in modules:
                graph[source].setdefault(target, f"{_relative(path).as_posix()}:{line}")
    return graph


def import_cycles(graph: dict[str, dict[str, str]]) -> list[list[str]]:
    """The modules of each import cycle (strongly connected component of more than one module; a
    package and its own ``__init__``-imported submodule do not count)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            a, b = (sorted(component) + ["", ""])[:2]
            if len(component) > 2 or (len(component) == 2 and not b.startswith(a + ".")):
                cycles.append(sorted(component))

    for v in graph:
        if v not in index:
            visit(v)
    return cycles


def rule_no_import_cycles(trees: dict[Path, ast.AST]) -> list[str]:
    graph = import_graph(trees)
    return [
        "import cycle: " + ", ".join(f"{m} → {t} ({graph[m][t]})" for m in cycle for t in graph[m] if t in cycle)
        for cycle in import_cycles(graph)
    ]


def module_level_imports(trees: dict[Path, ast.AST]) -> dict[str, set[str]]:
    """Module → the project's modules importing it imports at once: its module-level imports and
    the packages that hold it (importing ``batch.cli`` runs ``batch/__init__.py`` and the root's)."""
    modules = {module_name(path) for path in trees}
    graph: dict[str, set[str]] = {}
    for path, tree in trees.items():
        source = module_name(path)
        parts = source.split(".") if source else []
        targets = {".".join(parts[:k]) for k in range(len(parts))} & modules
        for target, _line, inside in import_targets(tree, path, modules):
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if not inside and target in modules:
                targets.add(target)
        graph[source] = targets - {source}
    return graph


def blender_imports(tree: ast.AST) -> list[tuple[str, int]]:
    """``(module, line)`` of each module-level import of a Blender-only module (bpy, gpu, …)."""
    in_function = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                   for n in ast.walk(f)}
    found = []
    for node in ast.walk(tree):
        if id(node) in in_function:
            continue
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        else:
            continue
        found += [(name, node.lineno) for name in names if name.split(".")[0] in BLENDER_ONLY_MODULES]
    return found


def rule_imported_without_blender(trees: dict[Path, ast.AST], entry_points=IMPORTED_WITHOUT_BLENDER) -> list[str]:
    """Nothing importing one of ``entry_points`` imports (transitively) imports a Blender module at
    module level."""
    graph = module_level_imports(trees)
    paths = {module_name(path): path for path in trees}
    found = []
    for entry in entry_points:
        chain = {entry: [entry]}
        todo = [entry] if entry in graph else []
        while todo:
            module = todo.pop()
            for name, line in blender_imports(trees[paths[module]]):
                via = " → ".join(m or "the root package" for m in chain[module])
                found.append(f"{_relative(paths[module]).as_posix()}:{line}: imports {name}, and is imported "
                             f"without Blender ({via})")
            for target in sorted(graph[module] - set(chain)):
                chain[target] = chain[module] + [target]
                todo.append(target)
    return sorted(set(found))


def function_level_imports(tree: ast.AST, path: Path, lines: list[str]) -> list[tuple[str, bool]]:
    """``(where, has a comment)`` of each import inside a function: a comment on its line, or on
    the line above it or above the imports it is grouped with."""
    out = []
    for fn in ast.walk(tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(fn):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            k = node.lineno - 1
            commented = "#" in lines[k] if k < len(lines) else False
            while not commented and k > 0:
                above = lines[k - 1].strip()
                if above.startswith("#"):
                    commented = True
                elif not above.startswith(("import ", "from ")) and above:
                    break
                k -= 1
            out.append((_where(path, node), commented))
    return out


def rule_function_parameters(tree: ast.AST, path: Path) -> list[str]:
    """No function with more than :data:`MAX_PARAMETERS` parameters (``self``/``cls`` aside):
    pass a state object instead."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            a = node.args
            names = [p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs)]
            names = names[1:] if names[:1] in (["self"], ["cls"]) else names
            if len(names) > MAX_PARAMETERS:
                found.append(f"{_relative(path).as_posix()}:{node.name} has {len(names)} parameters")
    return found


FUNCTION_ROLE = re.compile(r":(?:func|meth):`~?([\w.]+)`")


def _defined(tree: ast.AST) -> set[str]:
    """Names of the functions and classes defined in ``tree`` (methods included) and imported into it."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return names


def _resolves(ref: str, path: Path, by_module: dict[str, set[str]], anywhere: set[str]) -> bool:
    names = ref.lstrip(".").split(".")
    if ref.startswith("."):
        level = len(ref) - len(ref.lstrip("."))
        package = _package_parts(path)
        base = package[: len(package) - level + 1]
        for k in range(len(names) - 1, -1, -1):
            module = ".".join(base + names[:k])
            if module in by_module:
                return names[k] in by_module[module]
        return False
    if len(names) == 1:
        return ref in by_module.get(module_name(path), set())
    return names[-1] in anywhere


def rule_docstring_functions_exist(trees: dict[Path, ast.AST]) -> list[str]:
    """A docstring that names a function (:func:`name`, :meth:`Class.name`) names one that
    exists: ``.module.name`` in that module, a plain name in the same file, a dotted absolute name
    anywhere in the project."""
    by_module = {module_name(path): _defined(tree) for path, tree in trees.items()}
    anywhere = set().union(*by_module.values()) if by_module else set()
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
                for ref in FUNCTION_ROLE.findall(ast.get_docstring(node, clean=False) or ""):
                    if not _resolves(ref.lstrip("~"), path, by_module, anywhere):
                        line = getattr(node, "lineno", 1)
                        found.append(f"{_relative(path).as_posix()}:{line}: the docstring names {ref}, "
                                     "which does not exist")
    return found


# --------------------------------------------------------------------------------------------
# Each rule fails when it should (and only then)


def _check(rule: Rule, source: str, path: str = "procanim_addon/x.py") -> list[str]:
    return rule(ast.parse(source), Path(path))


@pytest.mark.parametrize(
    "source",
    [
        "import bpy",
        "import bpy.types",
        "import mathutils as mu",
        "from mathutils import Vector",
        "from bmesh.types import BMesh",
        "def f():\n    import bpy\n",
        "m = __import__('bpy')",
        "import importlib\nm = importlib.import_module('mathutils.bvhtree')",
    ],
)
def test_rule_engine_imports_refuses_blender_modules(source):
    assert _check(rule_engine_imports, source)


@pytest.mark.parametrize("source", ["import numpy as np", "from .transforms import quat_mul", "import bpyish"])
def test_rule_engine_imports_accepts_other_modules(source):
    assert _check(rule_engine_imports, source) == []


def test_rule_engine_stays_in_package():
    assert _check(rule_engine_stays_in_package, "from ..operators import bake") != []
    assert _check(rule_engine_stays_in_package, "from .. import panels", "procanim_addon/ik/ccd.py") == []
    assert _check(rule_engine_stays_in_package, "from ...operators import x", "procanim_addon/ik/ccd.py") != []
    assert _check(rule_engine_stays_in_package, "from .skeleton import Skeleton") == []


def test_rule_bare_except():
    assert _check(rule_bare_except, "try:\n    pass\nexcept:\n    pass\n")
    assert _check(rule_bare_except, "try:\n    pass\nexcept Exception:\n    pass\n") == []


def test_rule_star_import():
    assert _check(rule_star_import, "from bpy.props import *")
    assert _check(rule_star_import, "from . import *")
    assert _check(rule_star_import, "from bpy.props import FloatProperty") == []


PROPERTY_SOURCES_WITHOUT_TOOLTIP = [
    "import bpy\nx = bpy.props.FloatProperty(name='X')",
    "import bpy\nx = bpy.props.IntProperty(description='How many')",
    "from bpy.props import EnumProperty\nx = EnumProperty(items=[])",
    "from bpy.props import StringProperty as S\nx = S(name='N')",
    "from bpy import props\nx = props.BoolProperty(name='B')",
    "import bpy\nclass Op:\n    count: bpy.props.IntProperty(default=1)\n",
]


@pytest.mark.parametrize("source", PROPERTY_SOURCES_WITHOUT_TOOLTIP)
def test_rule_property_refuses_missing_name_or_description(source):
    assert _check(rule_property_has_name_and_description, source, "operators/x.py")


def test_rule_property_accepts_name_and_description_and_ignores_other_calls():
    ok = (
        "import bpy\nfrom bpy.props import FloatProperty\n"
        "a = bpy.props.FloatProperty(name='A', description='The a, in m')\n"
        "b = FloatProperty(name='B', description='The b', default=1.0)\n"
        "c = make_property()\nd = obj.SomeProperty(3)\n"
    )
    assert _check(rule_property_has_name_and_description, ok, "operators/x.py") == []


@pytest.mark.parametrize(
    "source",
    [
        "pb.keyframe_insert('location', frame=1)",
        "bpy.context.scene.frame_set(3)",
        "f = getattr(scene, 'frame_set')",
        "from x import keyframe_insert",
        "keyframe_insert()",
    ],
)
def test_rule_no_per_frame_calls_refuses(source):
    assert _check(rule_no_per_frame_calls, source, "operators/bake.py")


def test_rule_no_per_frame_calls_accepts_bulk_writes_and_docstrings():
    ok = '"""Never keyframe_insert: one foreach_set per curve."""\nfc.keyframe_points.foreach_set("co", co)\n'
    assert _check(rule_no_per_frame_calls, ok, "operators/bake.py") == []


def test_rule_no_per_frame_calls_allows_frame_set_only_in_the_sampled_verification():
    tree = ast.parse("scene.frame_set(3)\npb.keyframe_insert('location')")
    found = rule_no_per_frame_calls(tree, REPO_ROOT / "operators" / "control_rig.py")
    assert len(found) == 1 and "keyframe_insert" in found[0]
    assert len(rule_no_per_frame_calls(tree, REPO_ROOT / "operators" / "bake.py")) == 2


def test_rule_no_preset_defines():
    bad = "class P:\n    preset_defines = ['w = bpy.context.scene.x']\n    preset_values = ['w.a']\n"
    good = "class P:\n    preset_values = ['bpy.context.scene.x.a']\n"
    assert _check(rule_no_preset_defines, bad, "panels/p.py")
    assert _check(rule_no_preset_defines, good, "panels/p.py") == []


def test_rule_one_version_branch():
    reader = ast.parse("import bpy\nif bpy.app.version >= (4, 4, 0):\n    pass\n")
    importer = ast.parse("from bpy.app import version\n")
    clean = ast.parse("import bpy\nx = bpy.app.handlers\n")
    assert rule_one_version_branch({Path("a.py"): reader, Path("b.py"): clean}) == []
    assert rule_one_version_branch({Path("a.py"): reader, Path("b.py"): importer}) != []
    assert rule_one_version_branch({Path("a.py"): reader, Path("b.py"): reader}) != []


def test_rule_operator_numbers_bounded():
    bounded = "from bpy.props import IntProperty\nx = IntProperty(name='a', description='b', min=0, max=3)\n"
    unbounded = "from bpy.props import FloatProperty\nx = FloatProperty(name='a', description='b', min=0.0)\n"
    assert _check(rule_operator_numbers_bounded, bounded, "operators/x.py") == []
    assert _check(rule_operator_numbers_bounded, unbounded, "operators/x.py") != []
    assert _check(rule_operator_numbers_bounded, unbounded, "operators/limits.py") == []


def test_rule_function_length():
    long_body = "def f():\n" + "    x = 1\n" * 81
    table = "def g():\n    return {\n" + "        'a': 1,\n" * 90 + "    }\n"
    assert _check(rule_function_length, long_body) != []
    assert _check(rule_function_length, "def f():\n" + "    x = 1\n" * 79) == []
    assert _check(rule_function_length, table) == []


def _trees(sources: dict[str, str]) -> dict[Path, ast.AST]:
    return {Path(path): ast.parse(source) for path, source in sources.items()}


@pytest.mark.parametrize(
    ("source", "path"),
    [
        ("from ..preview import runtime", "operators/base.py"),
        ("def f():\n    from ..panels.generator import button_arguments\n", "preview/session.py"),
        ("from ..batch import cli", "operators/x.py"),
        ("from ..preview import runtime", "batch/x.py"),
        ("from .. import operators", "procanim_addon/x.py"),
        ("from ...operators.bake import bake_clip", "procanim_addon/ik/x.py"),
    ],
)
def test_rule_imports_point_down_refuses_an_import_of_a_layer_above(source, path):
    assert _check(rule_imports_point_down, source, path)


def test_rule_imports_point_down_accepts_the_same_layer_and_below():
    ok = "from ..operators import inputs\nfrom ..procanim_addon.ghost import Body\nfrom . import reads\n"
    assert _check(rule_imports_point_down, ok, "preview/session.py") == []
    assert _check(rule_imports_point_down, "from . import batch, panels", "__init__.py") == []
    assert _check(rule_imports_point_down, "import bpy\nimport numpy as np", "procanim_addon/x.py") == []


def test_rule_no_import_cycles():
    closed_in_a_function = {"operators/a.py": "from .b import f\n",
                            "operators/b.py": "def g():\n    from .a import h\n"}
    assert rule_no_import_cycles(_trees(closed_in_a_function))
    through_a_package = {"preview/__init__.py": "from .runtime import start\n",
                         "preview/runtime.py": "from ..panels import menus\n",
                         "panels/menus.py": "from .. import preview\n"}
    assert rule_no_import_cycles(_trees(through_a_package))
    chain = {"operators/a.py": "from .b import f\n", "operators/b.py": "import numpy\n"}
    assert rule_no_import_cycles(_trees(chain)) == []
    package_and_module = {"operators/__init__.py": "from . import a\n", "operators/a.py": "from . import b\n",
                          "operators/b.py": "x = 1\n"}
    assert rule_no_import_cycles(_trees(package_and_module)) == []


def test_function_level_imports_need_a_comment():
    source = ("def f():\n    import bpy\n\n\n"
              "def g():\n    # gpu exists only where Blender can draw\n    import gpu\n    from x import y\n\n\n"
              "def h():\n    import blf  # as gpu\n")
    found = function_level_imports(ast.parse(source), Path("preview/x.py"), source.splitlines())
    assert [commented for _where, commented in found] == [False, True, True, True]


def test_rule_imported_without_blender():
    split = {"batch/__init__.py": '"""The batch command."""\n',
             "batch/cli.py": "from . import jobfile\n\n\ndef run():\n    from . import shot\n",
             "batch/jobfile.py": "import tomllib\n",
             "batch/shot.py": "import bpy\n"}
    assert rule_imported_without_blender(_trees(split), ("batch.cli",)) == []
    through_a_module = {**split, "batch/jobfile.py": "from .shot import bake\n"}
    found = rule_imported_without_blender(_trees(through_a_module), ("batch.cli",))
    assert len(found) == 1 and "batch/shot.py:1: imports bpy" in found[0] and "cli → batch.jobfile" in found[0]
    through_the_package = {**split, "batch/__init__.py": "from . import shot\n"}
    assert rule_imported_without_blender(_trees(through_the_package), ("batch.cli",))
    drawing = {**split, "batch/jobfile.py": "from gpu_extras.batch import batch_for_shader\n"}
    assert rule_imported_without_blender(_trees(drawing), ("batch.cli",))


def test_rule_function_parameters():
    assert _check(rule_function_parameters, "def f(a, b, c, d, e, f, g, h, i, j, k):\n    pass\n")
    assert _check(rule_function_parameters, "def f(a, *, b, c, d, e, f, g, h, i, j, k):\n    pass\n")
    assert _check(rule_function_parameters, "def f(a, b, c, d, e, f, g, h, i, j):\n    pass\n") == []
    method = "class C:\n    def m(self, a, b, c, d, e, f, g, h, i, j):\n        pass\n"
    assert _check(rule_function_parameters, method) == []


def test_rule_docstring_functions_exist():
    good = {"operators/a.py": '"""Uses :func:`.b.helper`, :meth:`~.b.Tool.run` and :func:`local`."""\n'
                              "def local():\n    pass\n",
            "operators/b.py": "def helper():\n    pass\n\n\nclass Tool:\n    def run(self):\n        pass\n"}
    assert rule_docstring_functions_exist(_trees(good)) == []
    stale = {"operators/a.py": '"""See :func:`verify_samples`, :meth:`.b.Gone.run`, :func:`.c.helper`."""\n',
             "operators/b.py": "def helper():\n    pass\n"}
    assert len(rule_docstring_functions_exist(_trees(stale))) == 3


# --------------------------------------------------------------------------------------------
# The rules hold on the project


def _violations(rule: Rule, files: list[Path]) -> list[str]:
    return [message for path in files for message in rule(_parse(path), path)]


def test_the_file_sets_are_what_we_think():
    engine = {p.relative_to(REPO_ROOT).as_posix() for p in engine_files()}
    addon = {p.relative_to(REPO_ROOT).as_posix() for p in addon_files()}
    assert "procanim_addon/clip.py" in engine
    assert engine <= addon
    assert not any(p.startswith(("tests/", "tools/", "bench/")) for p in addon)


def test_engine_never_imports_blender():
    assert _violations(rule_engine_imports, engine_files()) == []


def test_engine_never_reaches_out_of_its_package():
    assert _violations(rule_engine_stays_in_package, engine_files()) == []


def test_no_bare_except_anywhere():
    assert _violations(rule_bare_except, project_files()) == []


def test_no_star_import_anywhere():
    assert _violations(rule_star_import, project_files()) == []


def test_every_property_has_name_and_description():
    assert _violations(rule_property_has_name_and_description, addon_files()) == []


def test_no_keyframe_insert_or_frame_set_in_the_addon():
    assert _violations(rule_no_per_frame_calls, addon_files()) == []


def test_presets_use_full_data_paths():
    assert _violations(rule_no_preset_defines, addon_files()) == []


def test_operator_numbers_are_bounded():
    operator_files = [p for p in addon_files() if p.relative_to(REPO_ROOT).parts[0] == "operators"]
    assert operator_files and _violations(rule_operator_numbers_bounded, operator_files) == []


def test_functions_are_short_in_the_engine_and_operators():
    files = [p for p in addon_files() if p.relative_to(REPO_ROOT).parts[0] in (ENGINE_DIR, "operators")]
    assert _violations(rule_function_length, files) == []


def test_blender_version_is_read_in_one_file_at_most():
    assert rule_one_version_branch({path: _parse(path) for path in addon_files()}) == []


def _shipped_trees() -> dict[Path, ast.AST]:
    return {path: _parse(path) for path in addon_files()}


def test_no_import_cycle_among_shipped_modules():
    assert rule_no_import_cycles(_shipped_trees()) == []


def test_imports_point_down():
    assert _violations(rule_imports_point_down, addon_files()) == []


def test_function_level_imports_are_few_and_commented():
    found = [(where, commented) for path in addon_files()
             for where, commented in function_level_imports(_parse(path), path, path.read_text().splitlines())]
    assert [where for where, commented in found if not commented] == [], "say why the import is inside a function"
    assert len(found) <= MAX_FUNCTION_LEVEL_IMPORTS, [where for where, _c in found]


def test_what_runs_without_blender_imports_none_of_it():
    assert rule_imported_without_blender(_shipped_trees()) == []


def test_no_function_has_more_than_ten_parameters():
    assert _violations(rule_function_parameters, addon_files()) == []


def test_docstrings_name_functions_that_exist():
    assert rule_docstring_functions_exist(_shipped_trees()) == []


def test_the_root_package_imports_outside_any_package():
    """pytest (and Blender's legacy add-on loader) may import the root ``__init__.py`` by its folder's
    name, with no parent package: it must not import the package's modules at module level."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("checkout-with-hyphens", REPO_ROOT / "__init__.py")
    assert spec is not None and spec.loader is not None
    spec.loader.exec_module(importlib.util.module_from_spec(spec))
