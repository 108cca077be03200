"""Type-check the Blender side of the add-on (operators/, panels/) against the fake-bpy-module stubs.

Usage (mypy and the stubs live in the 5.0.1 dev venv, see tools/setup_env.sh)::

    ~/.cache/procanim/venv-bpy-5.0.1/bin/python tools/typecheck.py

(``PROCANIM_TYPECHECK_ROOT=DIR`` checks another copy of the add-on, e.g. to see that an error is caught.)

The add-on uses relative imports (``from ..procanim_addon import clip``), so it is copied into a
temporary package named ``procanim`` and checked there, whatever the clone's directory is called.
Settings are ``[tool.mypy]`` in pyproject.toml.

Blender code written the usual way trips mypy in two places where nothing is wrong; those errors
are dropped here, by rule, and counted in the summary:

- ``attr-defined`` on the add-on's own classes (mixins such as a shared ``execute`` calling
  ``self.report``, which ``bpy.types.Operator`` provides at run time) and on attribute names that the
  add-on itself registers (``bpy.types.Scene.procanim = PointerProperty(...)`` makes
  ``scene.procanim`` exist). An unknown attribute of a *Blender* type is still an error.
- ``union-attr`` where the attribute exists on some Blender type: the stubs type
  ``context.active_object``, ``obj.animation_data`` as ``X | None`` and ``obj.data`` as a union of every
  data type; the add-on checks or narrows them at run time. ``obj.data.bonez`` (no Blender type
  has ``bonez``) is still an error.
- ``assignment`` on ``bl_*`` class settings and ``draw = ...`` (``bl_options = {"REGISTER"}`` is a
  ``set[str]`` to mypy; preset menus assign ``Menu.draw_preset``).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

CONFIG = Path(__file__).resolve().parent.parent / "pyproject.toml"
REPO_ROOT = Path(os.environ.get("PROCANIM_TYPECHECK_ROOT", CONFIG.parent))
PACKAGE = "procanim"
CHECKED_DIRS = ("operators", "panels", "batch", "preview")
COPIED_DIRS = ("operators", "panels", "procanim_addon", "batch", "preview")
ERROR_LINE = re.compile(
    r"^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*?)(?:  \[(?P<code>[a-z-]+)\])?$"
)
UNION_ITEM = re.compile(r'^Item "(?P<item>[\w.]+)" of ".*" has no attribute "(?P<attr>\w+)"')
NO_ATTRIBUTE = re.compile(r'^"(?:type\[)?(?P<owner>[\w.]+)\]?" has no attribute "(?P<attr>\w+)"')
BLENDER_CLASS_SETTING = re.compile(r"^\s*(bl_\w+|draw)\s*[:=]")


def addon_python_files() -> list[Path]:
    files = [p for p in REPO_ROOT.glob("*.py")]
    for folder in COPIED_DIRS:
        files += sorted((REPO_ROOT / folder).rglob("*.py"))
    return [p for p in files if "__pycache__" not in p.parts]


def own_names(files: list[Path]) -> tuple[set[str], set[str]]:
    """(classes defined in the add-on, attribute names it registers on bpy types)."""
    classes: set[str] = set()
    registered: set[str] = set()
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                for target in targets:
                    if isinstance(target, ast.Attribute) and "types" in ast.unparse(target.value):
                        registered.add(target.attr)
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("setattr", "delattr"):
                if len(node.args) >= 2 and isinstance(node.args[1], ast.Constant):
                    registered.add(str(node.args[1].value))
    return classes, registered


def copy_addon(dest: Path) -> None:
    package = dest / PACKAGE
    package.mkdir()
    for path in REPO_ROOT.glob("*.py"):
        shutil.copy2(path, package / path.name)
    (package / "__init__.py").touch()
    for folder in COPIED_DIRS:
        if (REPO_ROOT / folder).is_dir():
            shutil.copytree(REPO_ROOT / folder, package / folder, ignore=shutil.ignore_patterns("__pycache__"))


def blender_attribute_names() -> set[str]:
    """Every attribute and method name declared anywhere in the installed Blender stubs."""
    names: set[str] = set()
    declared = re.compile(r"^\s+(?:def\s+)?(\w+)\s*[:(]", re.MULTILINE)
    for site in map(Path, sys.path):
        for stub in site.glob("*-stubs/**/*.pyi"):
            names.update(declared.findall(stub.read_text(encoding="utf-8")))
    return names


def is_noise(match: re.Match, classes: set[str], registered: set[str], root: Path, bpy_names: set[str]) -> bool:
    code, message = match["code"], match["message"]
    if code == "union-attr":
        # `obj.data.bones`: obj.data is "Armature | Camera | ... | None" to the stubs. Drop the None
        # item always, and other items when the attribute is a real Blender attribute somewhere
        # (a narrowing the add-on does at run time); a name that no Blender type has is a typo.
        item = UNION_ITEM.match(message)
        if item is None:
            return False
        return item["item"] == "None" or item["attr"] in bpy_names or item["attr"] in registered
    if code == "attr-defined":
        owner = NO_ATTRIBUTE.match(message)
        return bool(owner) and (owner["owner"].split(".")[-1] in classes or owner["attr"] in registered)
    if code == "assignment":
        try:
            source = (root / match["path"]).read_text(encoding="utf-8").splitlines()[int(match["line"]) - 1]
        except (OSError, IndexError):
            return False
        return bool(BLENDER_CLASS_SETTING.match(source))
    return False


def main() -> int:
    try:
        from mypy import api
    except ImportError:
        print("typecheck: mypy is not installed in this Python (use the venv-bpy-5.0.1 python)", file=sys.stderr)
        return 2
    files = addon_python_files()
    classes, registered = own_names(files)
    bpy_names = blender_attribute_names()
    with tempfile.TemporaryDirectory(prefix="procanim-typecheck-") as tmp:
        # A fresh cache each run (~18 s): a cache kept between clones of other branches once
        # reported "procanim.operators has no attribute inputs" for a module that exists.
        cache = Path(tmp) / "mypy-cache"
        copy_addon(Path(tmp))
        targets = [f"{PACKAGE}/{d}" for d in CHECKED_DIRS if (Path(tmp) / PACKAGE / d).is_dir()]
        if not targets:
            print("typecheck: no operators/ or panels/ to check", file=sys.stderr)
            return 1
        cwd = os.getcwd()
        os.chdir(tmp)
        try:
            stdout, stderr, status = api.run(
                ["--config-file", str(CONFIG), "--cache-dir", str(cache),
                 "--no-error-summary", "--show-error-codes", *targets]
            )
        finally:
            os.chdir(cwd)
        kept: list[str] = []
        dropped = 0
        dropped_at = None  # "path:line" of the last dropped error: its notes go with it
        for line in stdout.splitlines():
            match = ERROR_LINE.match(line)
            if match is None:
                kept.append(line)
                continue
            where = f"{match['path']}:{match['line']}"
            if match["kind"] == "note":
                if where != dropped_at:
                    kept.append(line)
                continue
            if is_noise(match, classes, registered, Path(tmp), bpy_names):
                dropped += 1
                dropped_at = where
            else:
                kept.append(line)
                dropped_at = None
    errors = sum(1 for line in kept if ": error: " in line)
    for line in kept:
        print(line)
    if stderr.strip():
        print(stderr.strip(), file=sys.stderr)
    print(f"typecheck: {errors} error(s) in {', '.join(CHECKED_DIRS)} "
          f"({dropped} Blender-idiom false positive(s) dropped, see tools/typecheck.py)")
    if status == 2:  # mypy itself failed (bad config, crash)
        return 2
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
