"""Handshake panel: initiator and partner, each character's solver and dominance (stored on the
character object so they persist with it), timings, accept, Generate, and the last bake's Table 3.

Properties registered here (after the property-group classes, by :func:`register_properties`):
``Object.procanim_character`` (solver, dominance) and ``Scene.procanim_handshake`` (the pair,
timings, accept).
"""

from __future__ import annotations

import bpy
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, PointerProperty

from ..operators.bake import read_metrics
from ..operators.handshake import REPORT_ROWS, SOLVER_ITEMS, TIMINGS
from ..procanim_addon.handshake import HandshakeParams
from .character import ProcAnimPanel

_H = HandshakeParams()


def _is_armature(_self, obj):
    return obj.type == "ARMATURE"


class ProcAnimCharacterSettings(bpy.types.PropertyGroup):
    """Per-character personality and controller, kept on the object."""

    solver: EnumProperty(
        name="Solver", description="Controller that moves this character's arm", items=SOLVER_ITEMS, default="DLS"
    )
    dominance: FloatProperty(
        name="Dominance",
        description="0–1: a dominant character keeps the grip out of its own space (it moves toward the other)",
        default=0.5,
        min=0.0,
        max=1.0,
    )


class ProcAnimHandshakeSettings(bpy.types.PropertyGroup):
    initiator: PointerProperty(
        name="Initiator", description="Armature that offers its hand", type=bpy.types.Object, poll=_is_armature
    )
    partner: PointerProperty(
        name="Partner", description="Armature that answers the invitation", type=bpy.types.Object, poll=_is_armature
    )
    frame_start: IntProperty(name="Start Frame", description="First frame of the handshake", default=1)
    accept: BoolProperty(
        name="Accept",
        description="The partner accepts the invitation (off: it refuses and the initiator withdraws its hand)",
        default=True,
    )
    neutral_frames: IntProperty(
        name="Neutral", description="Frames both stand still before the invitation", default=_H.neutral_frames, min=0
    )
    dummy_frames: IntProperty(
        name="Invitation", description="Frames of the initiator's invitation", default=_H.dummy_frames, min=2
    )
    response_frames: IntProperty(
        name="Response", description="Frames the partner takes to answer", default=_H.response_frames, min=0
    )
    approach_frames: IntProperty(
        name="Approach",
        description="Frames for a hand to reach the point of contact",
        default=_H.approach_frames,
        min=2,
    )
    shake_frames: IntProperty(
        name="Shake", description="Frames of the primary shake (one up-and-down cycle)", default=_H.shake_frames, min=2
    )
    secondary_shakes: IntProperty(
        name="Secondary Shakes", description="Smaller shakes after the primary one", default=_H.secondary_shakes, min=0
    )
    secondary_frames: IntProperty(
        name="Secondary Frames", description="Frames of each secondary shake", default=_H.secondary_frames, min=2
    )
    retreat_frames: IntProperty(
        name="Retreat", description="Frames for the hands to return to rest", default=_H.retreat_frames, min=2
    )
    hold_frames: IntProperty(name="Hold", description="Rest frames at the end", default=_H.hold_frames, min=0)
    show_timings: BoolProperty(name="Timings", description="Show the phase timings", default=False)


class PROCANIM_PT_handshake(ProcAnimPanel, bpy.types.Panel):
    bl_label = "Handshake"
    bl_idname = "PROCANIM_PT_handshake"

    def draw(self, context):
        layout = self.layout
        hs = context.scene.procanim_handshake
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
        a, b = hs.initiator, hs.partner
        row = layout.row()
        row.enabled = a is not None and b is not None
        gen = row.operator("procanim.handshake", text="Generate", icon="PLAY")
        gen.initiator = a.name if a else ""
        gen.partner = b.name if b else ""
        gen.frame_start, gen.accept = hs.frame_start, hs.accept
        for name in TIMINGS:
            setattr(gen, name, getattr(hs, name))
        if a is not None:
            gen.solver_initiator = a.procanim_character.solver
            gen.dominance_initiator = a.procanim_character.dominance
        if b is not None:
            gen.solver_partner = b.procanim_character.solver
            gen.dominance_partner = b.procanim_character.dominance
        draw_report(layout, a)


def draw_report(layout, obj) -> None:
    """Table 3 of the last handshake baked on ``obj`` (when it is its active action)."""
    action = obj.animation_data.action if obj is not None and obj.animation_data else None
    if action is None or action.procanim.generator != "handshake":
        return
    m = read_metrics(action)
    box = layout.box()
    box.label(text=f"Last bake: {m.get('initiator', '?')} → {m.get('partner', '?')}", icon="ACTION")
    box.label(
        text=f"{m.get('solver_initiator', '?')} + {m.get('solver_partner', '?')}, phases "
        f"{m.get('sequence_initiator', '?')} / {m.get('sequence_partner', '?')}"
    )
    if not m.get("shake_frames"):
        box.label(text="No shake (the invitation was refused)", icon="INFO")
    else:
        col = box.column(align=True)
        col.label(text="Shake phase, cm: mean / std / max")
        for label, key in REPORT_ROWS:
            vals = [m.get(f"{key}_{s}_cm") for s in ("mean", "std", "max")]
            text = " / ".join("–" if v is None else f"{v:.3f}" for v in vals)
            col.label(text=f"{label}: {text}")
    box.label(text=f"Solver ms/frame: {m.get('time_ms_initiator', 0.0):.2f} / {m.get('time_ms_partner', 0.0):.2f}")


# Property-group types before the pointer properties that use them (register_properties).
classes = (ProcAnimCharacterSettings, ProcAnimHandshakeSettings, PROCANIM_PT_handshake)


def register_properties():
    bpy.types.Object.procanim_character = PointerProperty(
        name="ProcAnim Character", description="ProcAnim per-character settings", type=ProcAnimCharacterSettings
    )
    bpy.types.Scene.procanim_handshake = PointerProperty(
        name="ProcAnim Handshake", description="ProcAnim handshake settings", type=ProcAnimHandshakeSettings
    )


def unregister_properties():
    del bpy.types.Scene.procanim_handshake
    del bpy.types.Object.procanim_character
