"""Control maps on the Blender side: which map a rig follows, and what its rules say about its bones.

A rig's map (:class:`procanim_addon.controls.maps.ControlMap`) is, in order:

1. the map stored on its armature data (``procanim_control_map``: the TOML text the Character
   panel's *Load* or *Save* put there);
2. a map in the user's control-map folder (:func:`user_maps_dir`, where *Save* writes) whose family
   the rig belongs to;
3. a map ProcAnim ships (``procanim_addon/control_maps``: Rigify, CloudRig) whose family the rig
   belongs to.

None of them: the rig is not a control rig ProcAnim knows, and bakes go onto its own bones.
:func:`bone_rules` evaluates the map's rules on the armature's bones (collections, custom shapes,
the *Deform* flag), which only Blender knows, for :class:`~procanim_addon.controls.rig.ControlRig`.
"""

from __future__ import annotations

import os
from pathlib import Path

import bpy
import numpy as np

from ..procanim_addon.controls.maps import ControlMap, MapError, dump_map, find_map, parse_map, read_map, shipped_maps

STORED_KEY = "procanim_control_map"  # ID property on the armature data: the map's TOML text
_ADDON_PACKAGE = __package__.rpartition(".")[0]
_USER_MAPS: dict[str, tuple[float, ControlMap | None]] = {}  # file → (mtime, map or None if unreadable)


def user_maps_dir(create: bool = False) -> Path | None:
    """The folder of the user's own control maps (the extension's user folder, ``control_maps``);
    None where Blender has none (the add-on not installed as an extension)."""
    try:
        path = bpy.utils.extension_path_user(_ADDON_PACKAGE, path="control_maps", create=create)
    except (ValueError, AttributeError):
        return None
    return Path(path) if path else None


def user_maps() -> tuple[ControlMap, ...]:
    """The maps in :func:`user_maps_dir` that can be read (read again only when a file changes)."""
    folder = user_maps_dir()
    if folder is None or not folder.is_dir():
        return ()
    out = []
    for path in sorted(folder.glob("*.toml")):
        mtime = os.path.getmtime(path)
        cached = _USER_MAPS.get(str(path))
        if cached is None or cached[0] != mtime:
            try:
                cached = (mtime, read_map(path))
            except MapError:
                cached = (mtime, None)  # a broken file in the folder does not stop every bake
            _USER_MAPS[str(path)] = cached
        if cached[1] is not None:
            out.append(cached[1])
    return tuple(out)


def stored_map(obj) -> ControlMap | None:
    """The map stored on ``obj``'s armature data (None: none stored). Raises :class:`MapError` when
    the stored text is not a map this ProcAnim reads."""
    text = obj.data.get(STORED_KEY)
    if not text:
        return None
    return _parse_stored(str(text), obj.data.name)


_PARSED: dict[str, ControlMap] = {}


def _parse_stored(text: str, owner: str) -> ControlMap:
    got = _PARSED.get(text)
    if got is None:
        got = parse_map(text, f"the control map stored on '{owner}'")
        if len(_PARSED) > 32:
            _PARSED.clear()
        _PARSED[text] = got
    return got


def map_for(obj) -> ControlMap | None:
    """The control map ``obj`` follows (see the module docstring), or None."""
    if obj is None or obj.type != "ARMATURE":
        return None
    own = stored_map(obj)
    if own is not None:
        return own
    props, names = obj.data.keys(), obj.data.bones.keys()
    return find_map(user_maps(), props, names) or find_map(shipped_maps(), props, names)


def store_map(obj, cmap: ControlMap) -> None:
    """Store ``cmap`` on ``obj``'s armature data (its TOML text): the rig follows it from now on."""
    obj.data[STORED_KEY] = dump_map(cmap)


def clear_map(obj) -> None:
    """Forget the map stored on ``obj`` (the rig follows its family's shipped or user map again)."""
    if STORED_KEY in obj.data:
        del obj.data[STORED_KEY]


def load_map_file(path) -> ControlMap:
    """The map in the file at ``path`` (:class:`MapError` with a message when it cannot be used)."""
    return read_map(path)


def save_map_file(path, cmap: ControlMap) -> Path:
    """Write ``cmap`` to ``path`` (``.toml`` added when missing); returns the path written."""
    path = Path(path)
    if path.suffix.lower() != ".toml":
        path = path.with_suffix(".toml")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dump_map(cmap), encoding="utf-8")
    return path


def bone_rules(obj, cmap: ControlMap, names: list[str]) -> tuple[np.ndarray, tuple[str, ...]]:
    """Per bone of ``names`` (``obj``'s bones in that order): is it a control, and the names of the
    deform skeleton's bones — ``cmap``'s rules evaluated on the bones' collections, custom shapes
    and *Deform* flags."""
    bones, pose = obj.data.bones, obj.pose.bones
    needs_collections = bool(cmap.control_collections or cmap.skeleton_collection)
    controls, skeleton = np.zeros(len(names), dtype=bool), []
    for k, name in enumerate(names):
        bone = bones[name]
        collections = [c.name for c in bone.collections] if needs_collections else ()
        shaped = cmap.control_shapes and pose[name].custom_shape is not None
        controls[k] = cmap.is_control(name, collections, shaped)
        if cmap.in_skeleton(name, collections, bone.use_deform):
            skeleton.append(name)
    return controls, tuple(skeleton)

