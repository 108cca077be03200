"""Checks of a job file that need Blender: settings against the operators' own RNA, object names
against the input .blend files.

A shot's settings are the arguments of its operator (``procanim.<generator>``) under the same
names; each is checked against that operator's RNA property — its type, array length and enum
items — and against the documented range of the value. The range is read from RNA too, never
copied: the generator's sidebar settings (``scene.procanim.<settings>``) are made from the same
definitions as the operator's arguments and carry the documented range as hard limits, while the
operator has it as soft limits only (so that a script gets the engine's message rather than a
silent clamp); an argument the sidebar does not have is held to the operator's own hard limits.
Values are returned normalised (an integer given for a float argument becomes a float) so the
content hash does not depend on how a number was typed. The importer's options (``import =
{...}``) are checked the same way against ``import_anim.bvh`` or ``import_scene.fbx``.

Every text argument of a generator operator names an object (the operator contract: armature,
path, ground, terrain, reference, initiator, partner), a comma-separated list of objects (the
crowd's armatures and paths) or a collection (the crowd's obstacles); a non-empty one must be in the
shot's .blend (or be the armature the shot imports). Names are listed from the .blend without
opening it (``bpy.data.libraries.load``).
"""

from __future__ import annotations

import math
import shutil
import tempfile
from pathlib import Path
from typing import Any

import bpy

from ..operators import generators
from .jobfile import Shot

IMPORT_FIXED = ("filepath", "filter_glob", "files", "directory")


def operator_arguments(operator_id: str) -> dict:
    """``{name: RNA property}`` of an operator (``"procanim.path_walk"``); KeyError if not registered."""
    category, name = operator_id.split(".")
    try:
        op = getattr(getattr(bpy.ops, category), name)
        rna = op.get_rna_type()
    except (AttributeError, KeyError):
        raise KeyError(f"the operator {operator_id} is not registered (is the extension enabled?)") from None
    return {p.identifier: p for p in rna.properties if p.identifier != "rna_type"}


def sidebar_settings(operator_id: str) -> dict:
    """``{name: RNA property}`` of the sidebar settings of the generator behind ``operator_id``
    (``scene.procanim.<settings>``; empty when it has none)."""
    try:
        settings_name = generators.get(operator_id.removeprefix("procanim.")).settings_name
    except KeyError:  # not a generator's operator
        settings_name = ""
    scene = bpy.types.Scene.bl_rna.properties.get("procanim")
    group = scene.fixed_type.properties.get(settings_name) if settings_name and scene is not None else None
    if group is None or group.type != "POINTER":
        return {}
    return {p.identifier: p for p in group.fixed_type.properties if p.identifier != "rna_type"}


def check_value(prop, value, where: str, limits=None):
    """``(normalised value, None)`` or ``(None, message)`` for ``value`` given to RNA property ``prop``;
    numbers are held to ``limits`` (an RNA property whose hard limits are the range; default ``prop``)."""
    length = getattr(prop, "array_length", 0) or 0
    if prop.type in ("BOOLEAN", "INT", "FLOAT") and length > 0:
        if not isinstance(value, list) or len(value) != length:
            return None, f"{where}: must be an array of {length} {_noun(prop)}s, got {_show(value)}"
        items = [check_value_scalar(prop, v, f"{where}[{i}]", limits) for i, v in enumerate(value)]
        problems = [m for _v, m in items if m]
        return (None, problems[0]) if problems else ([v for v, _m in items], None)
    return check_value_scalar(prop, value, where, limits)


def _noun(prop) -> str:
    return {"BOOLEAN": "boolean", "INT": "integer", "FLOAT": "number"}.get(prop.type, prop.type.lower())


def _show(value) -> str:
    return repr(value) if not isinstance(value, dict) else "a table"


def check_value_scalar(prop, value, where: str, limits=None):
    kind = prop.type
    limits = limits if limits is not None and limits.type == kind else prop
    if kind == "BOOLEAN":
        return (
            (value, None) if isinstance(value, bool) else (None, f"{where}: must be true or false, got {_show(value)}")
        )
    if kind in ("INT", "FLOAT"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None, f"{where}: must be {'an integer' if kind == 'INT' else 'a number'}, got {_show(value)}"
        if kind == "INT" and not isinstance(value, int):
            return None, f"{where}: must be an integer, got {value!r}"
        if kind == "FLOAT":
            value = float(value)
            if not math.isfinite(value):
                return None, f"{where}: must be a finite number, got {value!r}"
        if not limits.hard_min <= value <= limits.hard_max:
            side = "below" if value < limits.hard_min else "above"
            return None, f"{where}: {value!r} is {side} its range, {limits.hard_min:g} to {limits.hard_max:g}"
        return value, None
    if kind == "STRING":
        return (value, None) if isinstance(value, str) else (None, f"{where}: must be a string, got {_show(value)}")
    if kind == "ENUM":
        items = [item.identifier for item in prop.enum_items]
        if prop.is_enum_flag:
            if not isinstance(value, list) or any(v not in items for v in value):
                return None, f"{where}: must be a list of {', '.join(items)}, got {_show(value)}"
            return sorted(value), None
        if value not in items:
            return None, f"{where}: {_show(value)} is not one of {', '.join(items)}"
        return value, None
    return None, f"{where}: {kind.lower()} arguments cannot be set from a job file"


def check_arguments(operator_id: str, values: dict, where: str, skip: tuple = ()) -> tuple[dict, list[str]]:
    """``values`` checked against ``operator_id``'s arguments: (normalised values, messages)."""
    try:
        props = operator_arguments(operator_id)
    except KeyError as err:
        return {}, [f"{where}: {err.args[0]}"]
    ranges = sidebar_settings(operator_id)
    out, errors = {}, []
    for key, value in values.items():
        prop = props.get(key)
        if prop is None or key in skip:
            known = ", ".join(k for k in props if k not in skip)
            errors.append(f"{where}.{key}: not an argument of {operator_id} (arguments: {known})")
            continue
        normalised, message = check_value(prop, value, f"{where}.{key}", ranges.get(key))
        if message:
            errors.append(message)
        else:
            out[key] = normalised
    return out, errors


NAME_LISTS = ("armatures", "paths")  # comma-separated object names (procanim.crowd_walk)
COLLECTION_ARGUMENTS = ("obstacles",)  # a collection's name (procanim.crowd_walk)


def object_arguments(operator_id: str) -> list[str]:
    """The arguments of a generator operator that name objects or collections (its text arguments)."""
    return [name for name, prop in operator_arguments(operator_id).items() if prop.type == "STRING"]


def blend_names(path: Path, cache: dict) -> tuple[dict | None, str | None]:
    """``{"objects": names, "collections": names}`` of the .blend at ``path`` (without opening it),
    or (None, why not)."""
    libraries: Any = bpy.data.libraries  # (the 4.2 stubs type load() as returning None)

    def listed(data_from) -> dict:
        return {"objects": list(data_from.objects), "collections": list(data_from.collections)}

    if path not in cache:
        try:
            if bpy.data.filepath and Path(bpy.data.filepath).resolve() == path:
                # Blender cannot list the file it has open: list a copy of it
                with tempfile.TemporaryDirectory(prefix="procanim-batch-") as tmp:
                    copy = Path(shutil.copy(path, Path(tmp) / path.name))
                    with libraries.load(str(copy)) as (data_from, _data_to):
                        cache[path] = (listed(data_from), None)
            else:
                with libraries.load(str(path)) as (data_from, _data_to):
                    cache[path] = (listed(data_from), None)
        except (OSError, RuntimeError, ValueError) as err:
            cache[path] = (None, f"cannot read {path}: {err}")
    return cache[path]


def _named(arg: str, value: str) -> list[str]:
    """The names a text argument gives (a list's, comma-separated; none when empty)."""
    names = value.split(",") if arg in NAME_LISTS else [value]
    return [n.strip() for n in names if n.strip()]


def check_shot(shot: Shot, where: str, blend_cache: dict) -> list[str]:
    """Check one shot (settings, importer options, object names); normalises ``shot`` in place."""
    shot.settings, errors = check_arguments(shot.operator, shot.settings, f"{where}: settings")
    if shot.imported is not None:
        shot.imported.options, more = check_arguments(
            shot.imported.operator, shot.imported.options, f"{where}: import", skip=IMPORT_FIXED
        )
        errors += more
    known: dict = {"objects": [], "collections": []}
    if shot.blend is not None:
        names, why = blend_names(shot.blend, blend_cache)
        if names is None:
            return errors + [f"{where}: blend: {why}"]
        known = names
    if shot.imported is not None:
        known = {**known, "objects": known["objects"] + [shot.imported.name]}
    if errors:
        return errors
    source = shot.blend.name if shot.blend is not None else "the empty scene"
    for arg in object_arguments(shot.operator):
        kind = "collection" if arg in COLLECTION_ARGUMENTS else "object"
        listed = known[f"{kind}s"]
        for name in _named(arg, shot.settings.get(arg, "")):
            if name not in listed:
                shown = ", ".join(sorted(listed)[:12]) + (" …" if len(listed) > 12 else "")
                errors.append(f"{where}: settings.{arg}: no {kind} '{name}' in {source} ({kind}s: {shown or 'none'})")
    return errors


def check_job(shots: list[Shot], where: str) -> list[str]:
    """Every Blender-side problem of ``shots`` (empty when they can run); normalises them.
    ``where`` starts each message (the job file's name)."""
    errors: list[str] = []
    cache: dict = {}
    for shot in shots:
        errors += check_shot(shot, f"{where}: shot '{shot.name}'", cache)
    return errors
