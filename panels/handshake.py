"""Handshake panel: initiator and partner, each character's solver and dominance (stored on the
character object, ``Object.procanim_character``, so they persist with it), timings, accept, and the
last bake's Table 3 (Generate and the common figures: :mod:`.generator`)."""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, PointerProperty

from ..operators.handshake import REPORT_ROWS, TIMINGS, character_settings


class ProcAnimCharacterSettings(bpy.types.PropertyGroup):
    """Per-character personality and controller, kept on the object."""

    __annotations__ = character_settings()


def panel_settings() -> dict:
    return {"show_timings": BoolProperty(name="Timings", description="Show the phase timings", default=False)}


def draw(layout, hs, _context) -> None:
    for role in ("initiator", "partner"):
        box = layout.box()
        box.prop(hs, role)
        obj = getattr(hs, role)
        if obj is not None:
            row = box.row(align=True)
            row.prop(obj.procanim_character, "solver", text="")
            row.prop(obj.procanim_character, "dominance", slider=True)
    layout.prop(hs, "frame_start")
    layout.prop(hs, "accept")
    layout.prop(hs, "show_timings", icon="TRIA_DOWN" if hs.show_timings else "TRIA_RIGHT", emboss=False)
    if hs.show_timings:
        col = layout.column(align=True)
        for name in TIMINGS:
            col.prop(hs, name)


def draw_figures(box, _action, m: dict) -> None:
    """The paper's Table 3 for the shake phase of the last bake."""
    box.label(text=f"{m.get('initiator', '?')} → {m.get('partner', '?')}")
    box.label(
        text=f"{m.get('solver_initiator', '?')} + {m.get('solver_partner', '?')}, phases "
        f"{m.get('sequence_initiator', '?')} / {m.get('sequence_partner', '?')}"
    )
    if not m.get("shake_frames"):
        box.label(text="No shake (the invitation was refused)", icon="INFO")
        return
    col = box.column(align=True)
    col.label(text="Shake phase, cm: mean / std / max")
    for label, key in REPORT_ROWS:
        vals = [m.get(f"{key}_{s}_cm") for s in ("mean", "std", "max")]
        col.label(text=f"{label}: " + " / ".join("–" if v is None else f"{v:.3f}" for v in vals))


property_classes = (ProcAnimCharacterSettings,)
classes = ()


def register_properties():
    bpy.types.Object.procanim_character = PointerProperty(
        name="ProcAnim Character", description="ProcAnim per-character settings", type=ProcAnimCharacterSettings
    )


def unregister_properties():
    del bpy.types.Object.procanim_character
