"""Object arguments of the generators, and the sidebar settings seen as operator arguments.

An operator names objects (``armature="Hiker"``, ``path="Path"``); the sidebar picks them with
pointer properties. :class:`ObjectArgument` describes one such argument once: the operator gets a
string property, the sidebar's settings a pointer property with a type filter, and
:meth:`ObjectArgument.resolve` finds the object — by the given name, else the sidebar's pick (else
the active object for the armature) — or raises :class:`InputError` with a message a user can act on.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import bpy
from bpy.props import PointerProperty, StringProperty

from ..procanim_addon.errors import InputError
from .bridge import resolve_armature, resolve_object
from .strips import own_strip


@dataclass(frozen=True)
class ObjectArgument:
    """``name``: the argument (and settings pointer) name; ``kind``: the object type it takes
    (``ARMATURE``, ``CURVE``, ``MESH``); ``what``: how messages name it ("walking path");
    ``optional``: may stay empty; ``shared``: the pick lives on ``scene.procanim`` (the Character
    panel's armature), not on the generator's own settings; ``needed``: for an argument only some
    settings use (the path walk's path, not read by a loop), whether the arguments or the sidebar's
    settings given to it need the object (None: always, unless optional)."""

    name: str
    label: str
    description: str
    kind: str
    what: str
    optional: bool = False
    shared: bool = False
    needed: Callable[[Any], bool] | None = None

    def is_needed(self, args) -> bool:
        """True when ``args`` (operator arguments or the sidebar's settings) cannot do without it."""
        return not self.optional and (self.needed is None or self.needed(args))

    def string_property(self) -> StringProperty:
        empty = "none" if self.optional else "the sidebar's pick"
        if self.name == "armature":
            empty = "the sidebar's armature, else the active object"
        return StringProperty(name=self.label, description=f"{self.description} (object name; empty: {empty})")

    def pointer_property(self) -> PointerProperty:
        kind = self.kind

        def poll(_self, obj) -> bool:
            return getattr(obj, "type", None) == kind

        return PointerProperty(name=self.label, description=self.description, type=bpy.types.Object, poll=poll)

    def picked(self, context, settings_name: str):
        """The sidebar's pick for this argument (None when nothing is picked)."""
        scene_settings = getattr(context.scene, "procanim", None)
        if scene_settings is None:
            return None
        holder = scene_settings if self.shared else getattr(scene_settings, settings_name, None)
        return getattr(holder, self.name, None) if holder is not None else None

    def resolve(self, args, context, settings_name: str):
        """The object ``args`` names, else the sidebar's pick; None only for an optional argument."""
        name = getattr(args, self.name, "") or ""
        if self.kind == "ARMATURE":
            if not name:
                picked = self.picked(context, settings_name)
                if picked is None and self.name != "armature":
                    raise InputError(f"Pick the {self.what} (an armature) in the sidebar or pass its name.")
                name = picked.name if picked is not None else ""
            return resolve_armature(name, context)
        if not name:
            picked = self.picked(context, settings_name)
            if picked is None:
                if not self.is_needed(args):
                    return None
                return resolve_object("", (self.kind,), self.what)
            name = picked.name
        return resolve_object(name, (self.kind,), self.what)


ARMATURE = ObjectArgument(
    "armature", "Armature", "Armature to bake onto", "ARMATURE", "armature", shared=True
)


class SettingsArgs:
    """A generator's sidebar settings seen with the operator's argument names.

    Settings values are read as they are; object pointers become names (empty when nothing is
    picked, so :meth:`ObjectArgument.resolve` falls back to the same picks as the operator).
    ``is_set`` tells which arguments the sidebar sets explicitly (see :func:`argument_given`);
    ``reads``: the live preview's kept scene reads (``preview/reads.py``; None: read afresh, see
    :func:`kept_read`).
    """

    def __init__(self, settings, objects=(), explicit=(), reads=None):
        self._settings = settings
        self._objects = {arg.name: arg for arg in objects}
        self._explicit = set(explicit)
        self.reads = reads

    def __getattr__(self, name: str):
        if name in self._objects:
            value = getattr(self._settings, name, None) if not self._objects[name].shared else None
            return value.name if value is not None else ""
        return getattr(self._settings, name)

    def is_set(self, name: str) -> bool:
        return name in self._explicit


def argument_given(args, name: str) -> bool:
    """True when the caller set argument ``name`` (an operator: ``is_property_set``; a settings
    view: :meth:`SettingsArgs.is_set`)."""
    props = getattr(args, "properties", None)
    if props is not None and hasattr(props, "is_property_set"):
        return bool(props.is_property_set(name))
    return bool(args.is_set(name))


def kept_read(args, what: str, objects: tuple, build: Callable[[], Any]) -> Any:
    """``build()`` — a read of the scene in a generator's ``prepare``. The live preview's arguments
    carry ``reads``, which return what ``build()`` made last time while ``objects`` are unchanged
    (``preview/reads.py``); an operator, the sidebar's Generate and a batch job always read afresh."""
    reads = getattr(args, "reads", None)
    return build() if reads is None else reads.get(what, objects, build)


def active_armature(context):
    """The armature the sidebar works on: its pick (``scene.procanim.armature``), else the active
    object when it is an armature, else None."""
    settings = context.scene.procanim
    obj = settings.armature
    if obj is None and context.active_object is not None and context.active_object.type == "ARMATURE":
        obj = context.active_object
    return obj


def last_bake(obj, generator: str, strips: bool = False):
    """The object's active action when it is a bake of ``generator``; else, with ``strips``, the
    action of the topmost NLA strip that holds the object's own bake of it (``bake_to``
    ``NLA_STRIP``); else None."""
    ad = obj.animation_data if obj is not None else None
    action = ad.action if ad is not None else None
    if action is not None and action.procanim.generator == generator:
        return action
    if not strips or ad is None:
        return None
    strip = own_strip(obj, generator)[1]
    return strip.action if strip is not None else None
