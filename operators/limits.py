"""Numeric properties bound to the engine's documented limits (``procanim_addon/limits.py``).

The sidebar's settings get the limits as hard limits (a slider cannot leave the meaningful range)
with the slider range as soft limits; operators get only the soft limits, so a script or the redo
panel passing a value outside the range gets the engine's message naming the setting and its
limits instead of a silent clamp. The default is the parameter dataclass's own."""

from __future__ import annotations

import dataclasses

from bpy.props import FloatProperty, FloatVectorProperty, IntProperty

from ..procanim_addon.limits import FRAME, limit


def prop_limits(params_class, field: str, ui: bool, lim=None) -> dict:
    """``min``/``max``/``soft_min``/``soft_max`` for a property bound to ``params_class.field``
    (or to the limit ``lim`` given directly)."""
    lim = lim or limit(params_class, field)
    lo, hi = lim.slider
    cast = int if isinstance(lim.lo, int) and isinstance(lim.hi, int) else float
    soft = {"soft_min": cast(lo), "soft_max": cast(hi)}
    return {"min": cast(lim.lo), "max": cast(lim.hi), **soft} if ui else soft


def number(params_class, field: str, ui: bool, name: str, description: str, **extra):
    """An Int/Float(Vector)Property for ``params_class.field``: its default, its limits."""
    default = next(f.default for f in dataclasses.fields(params_class) if f.name == field)
    kwargs = {"name": name, "description": description, "default": default, **prop_limits(params_class, field, ui),
              **extra}
    if isinstance(default, tuple):
        return FloatVectorProperty(size=len(default), **kwargs)
    if isinstance(default, int):
        return IntProperty(**kwargs)
    return FloatProperty(**kwargs)


def frame(name: str, description: str, default: int, ui: bool) -> IntProperty:
    """A frame number within Blender's frame range (an operator argument the engine does not see
    as a parameter field, e.g. the range of an action to read)."""
    return IntProperty(name=name, description=description, default=default, **prop_limits(None, "", ui, FRAME))
