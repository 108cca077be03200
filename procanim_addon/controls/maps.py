"""Control maps: what is family-specific about a control rig, as data read from a TOML file.

The conversion onto controls (:mod:`.convert`) follows a rig's constraints to find its limbs, IK
chains and the control driving each deform bone; what it cannot read from constraints differs from
one rig generator to the next and lives in a **control map**, one file per rig family
(``procanim_addon/control_maps/*.toml``; format in ``docs/rigs.md``):

* how a rig of the family is recognised (a custom property on the armature data, bones it has);
* which bones form the **deform skeleton** the engine animates (Rigify's ``ORG-`` bones, CloudRig's
  "Original Bones" collection, the bones with *Deform* on …), its root, and how the bones the mesh
  follows (``DEF-``) pair with them;
* which bones are **controls** (an animator keys them) and which never are;
* the **IK/FK switches**: custom property, the bone holding it, and the values meaning IK and FK
  (Rigify's ``IK_FK`` is 0 for IK, CloudRig's ``ik_left_thigh`` 1);
* optionally each limb's controls by name (IK control, pole, FK controls) and the role of each
  skeleton bone — what the Character panel's map dialog writes for a rig of any other family.

:func:`parse_map` reads a file's text into a :class:`ControlMap` (plain data, validated, with
messages naming the offending entry), :func:`dump_map` writes one back, :func:`shipped_maps` are
the families ProcAnim ships. Rules that need Blender's data (bone collections, custom shapes, the
*Deform* flag) are evaluated here from what the bridge reads and passes in.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from ..errors import InputError

FORMAT = "procanim-control-map"
VERSION = 1  # the format version this code reads and writes
MAPS_DIR = Path(__file__).resolve().parent.parent / "control_maps"
LIMB_ROLES = ("leg.L", "leg.R", "arm.L", "arm.R")
MODES = ("IK", "FK")


class MapError(InputError):
    """A control map that cannot be used; the message names the file and the entry."""


@dataclass(frozen=True)
class Switch:
    """An IK/FK switch: custom property ``prop`` of pose bone ``bone`` ('' = any bone holding it);
    ``ik`` and ``fk`` are the values that select each side."""

    prop: str
    bone: str = ""
    ik: float = 1.0
    fk: float = 0.0

    def value(self, mode: str) -> float:
        """The switch's value for ``mode`` ('IK' or 'FK')."""
        return self.ik if mode == "IK" else self.fk


@dataclass(frozen=True)
class LimbControls:
    """One limb's controls by name (empty strings and tuples: found from the rig's constraints).

    ``role``: 'leg.L', 'arm.R' …; ``bones``: its deform skeleton bones from root to end (thigh,
    shin, foot); ``ik_control``: the control that moves the limb's end; ``pole``: the knee (elbow)
    target; ``fk``: the FK controls, one per bone of ``bones``; ``switch``: its IK/FK switch."""

    role: str
    bones: tuple[str, ...] = ()
    ik_control: str = ""
    pole: str = ""
    fk: tuple[str, ...] = ()
    switch: Switch | None = None


@dataclass(frozen=True)
class ControlMap:
    """A rig family's control map (see the module docstring; every field has a file entry of the
    same meaning, ``docs/rigs.md``)."""

    id: str
    label: str
    version: int = VERSION
    # recognising a rig of the family
    data_properties: tuple[str, ...] = ()
    required_bones: tuple[str, ...] = ()
    # the deform skeleton
    root: str = "root"
    skeleton_prefix: str = ""
    skeleton_collection: str = ""
    skeleton_bones: tuple[str, ...] = ()
    skeleton_use_deform: bool = False
    deform_prefix: str = "DEF-"
    deform_segment: str = ""
    # controls
    control_all: bool = False
    control_collections: tuple[str, ...] = ()
    control_names: tuple[str, ...] = ()
    control_shapes: bool = False
    exclude_prefixes: tuple[str, ...] = ()
    exclude_words: tuple[str, ...] = ()
    exclude_names: tuple[str, ...] = ()
    # switches, limbs, roles
    switches: tuple[Switch, ...] = ()
    limbs: tuple[LimbControls, ...] = ()
    roles: tuple[tuple[str, str], ...] = ()
    source: str = field(default="", compare=False)

    # ------------------------------------------------------------------ recognition
    def matches(self, data_properties, bone_names) -> bool:
        """Does a rig with these custom properties on its armature data and these bones belong to
        the family? (Any one of ``data_properties`` when the map lists some; every required bone;
        at least one bone of the skeleton when the skeleton is named by a prefix.)"""
        props, names = set(data_properties), set(bone_names)
        if self.data_properties and not props & set(self.data_properties):
            return False
        if not set(self.required_bones) <= names:
            return False
        if self.skeleton_prefix and not any(n.startswith(self.skeleton_prefix) for n in names):
            return False
        return bool(self.data_properties or self.required_bones or self.skeleton_bones)

    # ------------------------------------------------------------------ bones
    def in_skeleton(self, name: str, collections=(), deform: bool = False) -> bool:
        """Is bone ``name`` (in bone ``collections``; with the *Deform* flag ``deform``) a bone of
        the deform skeleton? The root is not: it is added as the skeleton's root."""
        if name == self.root:
            return False
        if self.skeleton_bones:
            return name in self.skeleton_bones
        if self.skeleton_prefix:
            return name.startswith(self.skeleton_prefix)
        if self.skeleton_collection:
            return self.skeleton_collection in collections
        return bool(self.skeleton_use_deform and deform)

    def is_control(self, name: str, collections=(), shaped: bool = False) -> bool:
        """Is bone ``name`` (in bone ``collections``; ``shaped``: it has a custom shape) a control
        an animator keys?"""
        if name in self.exclude_names or name.startswith(self.exclude_prefixes):
            return False
        if any(w in name.lower() for w in self.exclude_words):
            return False
        if name in self.control_names or name == self.root:
            return True
        if self.control_all:
            return True
        if self.control_shapes and shaped:
            return True
        return any(c in collections for c in self.control_collections)

    def skeleton_bone_of(self, deform_name: str, skeleton: set[str]) -> str | None:
        """The skeleton bone a deform bone (``DEF-thigh.L.001``, ``DEF-Thigh_2.L``) rides on, by
        name: the deform prefix taken off, a segment suffix taken out, the skeleton prefix put on;
        None when it is not a deform bone or pairs with nothing in ``skeleton``."""
        if not self.deform_prefix or not deform_name.startswith(self.deform_prefix):
            return None
        base = deform_name[len(self.deform_prefix) :]
        for cand in (base, re.sub(self.deform_segment, "", base) if self.deform_segment else base):
            name = self.skeleton_prefix + cand
            if name in skeleton:
                return name
        return None

    def limb(self, role: str) -> LimbControls | None:
        return next((limb for limb in self.limbs if limb.role == role), None)

    @property
    def all_switches(self) -> tuple[Switch, ...]:
        """The family's switches and every limb's own switch, each once."""
        out = list(self.switches)
        for limb in self.limbs:
            if limb.switch is not None and limb.switch not in out:
                out.append(limb.switch)
        return tuple(out)

    def role_map(self) -> dict[str, str]:
        return dict(self.roles)


# ----------------------------------------------------------------------------- reading


def _strings(value, where: str) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MapError(f"{where} must be a list of names")
    return tuple(value)


def _table(data: dict, key: str, where: str) -> dict:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise MapError(f"{where}[{key}] must be a table")
    return value


def _number(value, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MapError(f"{where} must be a number")
    return float(value)


def _switch(data, where: str) -> Switch:
    if not isinstance(data, dict) or not isinstance(data.get("property"), str) or not data["property"]:
        raise MapError(f"{where} needs a 'property' (the custom property's name)")
    bone = data.get("bone", "")
    if not isinstance(bone, str):
        raise MapError(f"{where}: 'bone' must be a bone name")
    ik = _number(data.get("ik", 1.0), f"{where}: 'ik'")
    fk = _number(data.get("fk", 1.0 - ik if ik in (0.0, 1.0) else 0.0), f"{where}: 'fk'")
    if ik == fk:
        raise MapError(f"{where}: the IK and FK values are both {ik:g}")
    return Switch(prop=data["property"], bone=bone, ik=ik, fk=fk)


def _limb(data, where: str) -> LimbControls:
    if not isinstance(data, dict):
        raise MapError(f"{where} must be a table")
    role = data.get("role", "")
    if role not in LIMB_ROLES:
        raise MapError(f"{where}: 'role' must be one of {', '.join(LIMB_ROLES)}, not {role!r}")
    for key in ("ik_control", "pole"):
        if not isinstance(data.get(key, ""), str):
            raise MapError(f"{where}: '{key}' must be a bone name")
    switch = _switch(data["switch"], f"{where}.switch") if "switch" in data else None
    return LimbControls(
        role=role,
        bones=_strings(data.get("bones", []), f"{where}.bones"),
        ik_control=data.get("ik_control", ""),
        pole=data.get("pole", ""),
        fk=_strings(data.get("fk", []), f"{where}.fk"),
        switch=switch,
    )


def parse_map(text: str, source: str = "") -> ControlMap:
    """The :class:`ControlMap` in TOML ``text`` (``source``: where it came from, for messages).
    Raises :class:`MapError` naming what is wrong."""
    where = source or "control map"
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise MapError(f"{where} is not valid TOML: {err}") from err
    if data.get("format") != FORMAT:
        raise MapError(f"{where} is not a ProcAnim control map (it needs format = \"{FORMAT}\")")
    version = data.get("version")
    if not isinstance(version, int) or version < 1:
        raise MapError(f"{where}: 'version' must be a whole number")
    if version > VERSION:
        raise MapError(f"{where} is a version {version} map; this ProcAnim reads up to version {VERSION}")
    family = _table(data, "family", where)
    if not isinstance(family.get("id"), str) or not family["id"]:
        raise MapError(f"{where}: [family] needs an 'id'")
    detect, skeleton, controls = (_table(data, k, where) for k in ("detect", "skeleton", "controls"))
    segment = skeleton.get("deform_segment", "")
    try:
        re.compile(segment)
    except (re.error, TypeError) as err:
        raise MapError(f"{where}: [skeleton] deform_segment is not a regular expression ({err})") from err
    roles = _table(data, "roles", where)
    if not all(isinstance(v, str) for v in roles.values()):
        raise MapError(f"{where}: [roles] maps role names to bone names")
    switches = data.get("switches", [])
    limbs = data.get("limbs", [])
    if not isinstance(switches, list) or not isinstance(limbs, list):
        raise MapError(f"{where}: [[switches]] and [[limbs]] must be arrays of tables")
    cmap = ControlMap(
        id=family["id"],
        label=str(family.get("label", family["id"])),
        version=version,
        data_properties=_strings(detect.get("data_properties", []), f"{where} [detect].data_properties"),
        required_bones=_strings(detect.get("bones", []), f"{where} [detect].bones"),
        root=str(skeleton.get("root", "root")),
        skeleton_prefix=str(skeleton.get("prefix", "")),
        skeleton_collection=str(skeleton.get("collection", "")),
        skeleton_bones=_strings(skeleton.get("bones", []), f"{where} [skeleton].bones"),
        skeleton_use_deform=bool(skeleton.get("use_deform", False)),
        deform_prefix=str(skeleton.get("deform_prefix", "DEF-")),
        deform_segment=segment,
        control_all=bool(controls.get("all_bones", False)),
        control_collections=_strings(controls.get("collections", []), f"{where} [controls].collections"),
        control_names=_strings(controls.get("names", []), f"{where} [controls].names"),
        control_shapes=bool(controls.get("custom_shapes", False)),
        exclude_prefixes=_strings(controls.get("exclude_prefixes", []), f"{where} [controls].exclude_prefixes"),
        exclude_words=tuple(w.lower() for w in _strings(controls.get("exclude_words", []), f"{where} [controls]")),
        exclude_names=_strings(controls.get("exclude_names", []), f"{where} [controls].exclude_names"),
        switches=tuple(_switch(s, f"{where} [[switches]] #{k + 1}") for k, s in enumerate(switches)),
        limbs=tuple(_limb(s, f"{where} [[limbs]] #{k + 1}") for k, s in enumerate(limbs)),
        roles=tuple(sorted(roles.items())),
        source=source,
    )
    if not (cmap.skeleton_prefix or cmap.skeleton_collection or cmap.skeleton_bones or cmap.skeleton_use_deform):
        raise MapError(
            f"{where}: [skeleton] must say which bones the engine animates (prefix, collection, bones or use_deform)"
        )
    return cmap


def read_map(path) -> ControlMap:
    """The control map in the file at ``path``."""
    try:
        path = Path(path)
        text = path.read_text(encoding="utf-8")
    except (OSError, ValueError) as err:  # no such file, a folder, a name with a NUL in it, not UTF-8
        raise MapError(f"Cannot read the control map '{path}': {getattr(err, 'strerror', None) or err}") from err
    return parse_map(text, path.name)


@cache
def shipped_maps() -> tuple[ControlMap, ...]:
    """The families ProcAnim ships (``procanim_addon/control_maps/*.toml``), in file-name order."""
    return tuple(read_map(p) for p in sorted(MAPS_DIR.glob("*.toml")))


def shipped(family_id: str) -> ControlMap:
    """The shipped map of ``family_id`` ('rigify', 'cloudrig')."""
    for cmap in shipped_maps():
        if cmap.id == family_id:
            return cmap
    raise KeyError(family_id)


def rigify_map() -> ControlMap:
    """Rigify's map: the conventions a :class:`~.rig.ControlRig` follows unless told otherwise."""
    return shipped("rigify")


def find_map(maps, data_properties, bone_names) -> ControlMap | None:
    """The first of ``maps`` whose family a rig with these armature-data properties and bones
    belongs to (None: none)."""
    for cmap in maps:
        if cmap.matches(data_properties, bone_names):
            return cmap
    return None


# ----------------------------------------------------------------------------- writing


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(float(value)) if isinstance(value, float) else str(value)
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    raise TypeError(type(value))


def _toml_key(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else _toml_value(key)


def _section(lines: list[str], header: str, entries: dict, always=()) -> None:
    entries = {k: v for k, v in entries.items() if k in always or v not in ("", (), [], None, False)}
    if not entries:
        return
    lines += ["", header]
    lines += [f"{_toml_key(k)} = {_toml_value(v)}" for k, v in entries.items()]


def _switch_table(s: Switch) -> dict:
    out: dict = {"property": s.prop}
    if s.bone:
        out["bone"] = s.bone
    out["ik"], out["fk"] = s.ik, s.fk
    return out


def dump_map(cmap: ControlMap) -> str:
    """``cmap`` as the TOML text of a control map file (:func:`parse_map` reads it back equal)."""
    lines = [
        "# ProcAnim control map: how rigs of this family are keyed (format: docs/rigs.md)",
        f'format = "{FORMAT}"',
        f"version = {VERSION}",
    ]
    _section(lines, "[family]", {"id": cmap.id, "label": cmap.label})
    _section(lines, "[detect]", {"data_properties": cmap.data_properties, "bones": cmap.required_bones})
    _section(
        lines,
        "[skeleton]",
        {
            "root": cmap.root,
            "prefix": cmap.skeleton_prefix,
            "collection": cmap.skeleton_collection,
            "bones": cmap.skeleton_bones,
            "use_deform": cmap.skeleton_use_deform,
            "deform_prefix": cmap.deform_prefix,
            "deform_segment": cmap.deform_segment,
        },
        always=("deform_prefix",),
    )
    _section(
        lines,
        "[controls]",
        {
            "all_bones": cmap.control_all,
            "collections": cmap.control_collections,
            "names": cmap.control_names,
            "custom_shapes": cmap.control_shapes,
            "exclude_prefixes": cmap.exclude_prefixes,
            "exclude_words": cmap.exclude_words,
            "exclude_names": cmap.exclude_names,
        },
    )
    for s in cmap.switches:
        lines += ["", "[[switches]]"] + [f"{k} = {_toml_value(v)}" for k, v in _switch_table(s).items()]
    for limb in cmap.limbs:
        entries = {"role": limb.role, "bones": limb.bones, "ik_control": limb.ik_control, "pole": limb.pole,
                   "fk": limb.fk}
        lines += ["", "[[limbs]]"] + [f"{k} = {_toml_value(v)}" for k, v in entries.items() if v not in ("", ())]
        if limb.switch is not None:
            lines.append(f"switch = {_toml_value(_switch_table(limb.switch))}")
    _section(lines, "[roles]", dict(cmap.roles))
    return "\n".join(lines) + "\n"
