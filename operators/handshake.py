"""procanim.handshake — two characters shake right hands (M2: Deglorie et al. 2015), baked onto both.

The operator reads both armatures (rest skeleton, role map, world matrix), checks that they are two
different armatures with right-arm roles, standing apart and facing roughly each other, then calls
the engine (:func:`procanim_addon.handshake.generate_handshake`) and bakes one Action per armature.
The paper's Table 3 for the shake phase (grip-to-grip and grip-to-target distances, solver time per
frame) is stored in both actions' metrics and printed for scripts.
"""

from __future__ import annotations

import json

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, FloatProperty, IntProperty, StringProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.frames import character_frame
from ..procanim_addon.handshake import HandshakeParams, generate_handshake
from ..procanim_addon.handshake.character import ARM_ROLES
from ..procanim_addon.ik.solve import SOLVERS
from .base import GeneratorMixin, Job
from .bridge import obj_fps, read_rigmap, read_skeleton, resolve_armature

_H = HandshakeParams()

SOLVER_LABELS = {
    "JACOBIAN_TRANSPOSE": ("Jacobian Transpose", "IK along the motion path, Jacobian transpose iterations"),
    "CCD": ("CCD", "IK along the motion path, cyclic coordinate descent"),
    "FABRIK": ("FABRIK", "IK along the motion path, forward and backward reaching"),
    "DLS": ("Damped Least Squares", "IK along the motion path, damped least squares (Levenberg–Marquardt)"),
    "FUZZY": ("Fuzzy", "One fuzzy-logic controller per joint: lags a moving target, needs no motion path"),
}
SOLVER_ITEMS = [(key, *SOLVER_LABELS[key]) for key in SOLVERS]

# Timing arguments (frames) passed to HandshakeParams under the same names.
TIMINGS = (
    "neutral_frames",
    "dummy_frames",
    "response_frames",
    "approach_frames",
    "shake_frames",
    "secondary_shakes",
    "secondary_frames",
    "retreat_frames",
    "hold_frames",
)

# The Table-3 figures that after_bake prints and the panel shows (cm, ms).
REPORT_ROWS = (
    ("both hands", "both"),
    ("initiator grip → target", "initiator"),
    ("partner grip → target", "partner"),
)

MAX_PHASE_FRAMES = 2400  # 100 s at 24 fps: longer phases are a typo, not a handshake
MAX_FACING_DEG = 90.0  # a character whose forward is further than this from the other is "facing away"


def _world(obj) -> np.ndarray:
    return np.array(obj.matrix_world, dtype=float)


def facing_error_deg(skeleton, rigmap, world: np.ndarray, other_world_point: np.ndarray) -> float:
    """Angle (degrees, top view) between where the character faces and the direction to the other."""
    forward = world[:3, :3] @ character_frame(skeleton, rigmap).forward
    toward = np.asarray(other_world_point, float) - world[:3, 3]
    forward[2] = toward[2] = 0.0
    nf, nt = np.linalg.norm(forward), np.linalg.norm(toward)
    if nf < 1e-9 or nt < 1e-9:
        return 0.0
    return float(np.degrees(np.arccos(np.clip(forward @ toward / (nf * nt), -1.0, 1.0))))


class PROCANIM_OT_handshake(GeneratorMixin, bpy.types.Operator):
    """Bake a handshake between two humanoid armatures (invitation, approach, shake, retreat)"""

    bl_idname = "procanim.handshake"
    bl_label = "Generate Handshake"
    bl_options = {"REGISTER", "UNDO"}

    initiator: StringProperty(
        name="Initiator", description="Armature that offers its hand (empty: the Handshake panel's initiator)"
    )
    partner: StringProperty(
        name="Partner", description="Armature that answers the invitation (empty: the Handshake panel's partner)"
    )
    frame_start: IntProperty(name="Start Frame", description="First frame of the handshake", default=1)
    solver_initiator: EnumProperty(
        name="Initiator Solver", description="Controller of the initiator's arm", items=SOLVER_ITEMS, default="DLS"
    )
    solver_partner: EnumProperty(
        name="Partner Solver", description="Controller of the partner's arm", items=SOLVER_ITEMS, default="DLS"
    )
    dominance_initiator: FloatProperty(
        name="Initiator Dominance",
        description="0–1: a dominant character keeps the grip out of its own space (it moves toward the other)",
        default=_H.dominance_initiator,
    )
    dominance_partner: FloatProperty(
        name="Partner Dominance",
        description="0–1: a dominant character keeps the grip out of its own space (it moves toward the other)",
        default=_H.dominance_partner,
    )
    accept: BoolProperty(
        name="Accept",
        description="The partner accepts the invitation (off: it refuses and the initiator withdraws its hand)",
        default=True,
    )
    neutral_frames: IntProperty(
        name="Neutral", description="Frames both stand still before the invitation", default=_H.neutral_frames
    )
    dummy_frames: IntProperty(
        name="Invitation", description="Frames of the initiator's invitation (dummy phase)", default=_H.dummy_frames
    )
    response_frames: IntProperty(
        name="Response", description="Frames the partner takes to answer the invitation", default=_H.response_frames
    )
    approach_frames: IntProperty(
        name="Approach", description="Frames for a hand to reach the point of contact", default=_H.approach_frames
    )
    shake_frames: IntProperty(
        name="Shake", description="Frames of the primary shake (one up-and-down cycle)", default=_H.shake_frames
    )
    secondary_shakes: IntProperty(
        name="Secondary Shakes",
        description="Number of smaller shakes after the primary one",
        default=_H.secondary_shakes,
    )
    secondary_frames: IntProperty(
        name="Secondary Frames", description="Frames of each secondary shake", default=_H.secondary_frames
    )
    retreat_frames: IntProperty(
        name="Retreat", description="Frames for the hands to return to the rest pose", default=_H.retreat_frames
    )
    hold_frames: IntProperty(name="Hold", description="Frames the rest pose is held at the end", default=_H.hold_frames)

    def _pick(self, name: str, context, role: str):
        if name:
            return resolve_armature(name, context)
        settings = getattr(context.scene, "procanim_handshake", None)
        obj = getattr(settings, role, None) if settings is not None else None
        if obj is None:
            raise InputError(f"Pick the {role} (an armature) in the Handshake panel or pass its name.")
        return resolve_armature(obj.name, context)

    def _personal(self, argument: str, obj, field: str):
        """The argument when given, else the value stored on the character (Handshake panel)."""
        stored = getattr(obj, "procanim_character", None)
        if self.properties.is_property_set(argument) or stored is None:
            return getattr(self, argument)
        return getattr(stored, field)

    def prepare(self, context) -> Job:
        a = self._pick(self.initiator, context, "initiator")
        b = self._pick(self.partner, context, "partner")
        if a == b:
            raise InputError(f"The initiator and the partner are both '{a.name}'; pick two different armatures.")
        for name in TIMINGS:
            value = getattr(self, name)
            if value > MAX_PHASE_FRAMES:
                what = name.replace("_", " ").capitalize()
                raise InputError(f"{what} must be at most {MAX_PHASE_FRAMES} (got {value}).")
        params = HandshakeParams(
            frame_start=self.frame_start,
            fps=obj_fps(a),
            solver_initiator=self._personal("solver_initiator", a, "solver"),
            solver_partner=self._personal("solver_partner", b, "solver"),
            dominance_initiator=self._personal("dominance_initiator", a, "dominance"),
            dominance_partner=self._personal("dominance_partner", b, "dominance"),
            accept=self.accept,
            **{name: getattr(self, name) for name in TIMINGS},
        )
        params.validate()
        inputs = []
        for obj in (a, b):
            skeleton, rigmap = read_skeleton(obj), read_rigmap(obj)
            rigmap.require(list(ARM_ROLES))
            world = _world(obj)
            if not np.all(np.isfinite(world)):
                raise InputError(f"'{obj.name}' has an invalid (non-finite) transform.")
            inputs.append((skeleton, rigmap, world))
        for (skeleton, rigmap, world), obj, other in ((inputs[0], a, b), (inputs[1], b, a)):
            angle = facing_error_deg(skeleton, rigmap, world, _world(other)[:3, 3])
            if angle > MAX_FACING_DEG:
                raise InputError(
                    f"'{obj.name}' faces {angle:.0f}° away from '{other.name}'; turn the two characters "
                    "roughly toward each other."
                )
        names = (a.name, b.name)

        def compute(progress):
            progress(0.0)
            try:
                clip_a, clip_b, report = generate_handshake(inputs[0], inputs[1], params)
            except InputError as err:
                raise InputError(f"Handshake '{names[0]}' → '{names[1]}': {err}") from None
            progress(1.0)
            for clip, other in ((clip_a, names[1]), (clip_b, names[0])):
                clip.metrics["initiator"], clip.metrics["partner"] = names
                clip.metrics["other"] = other
            return [clip_a, clip_b]

        return Job([a, b], compute)

    def after_bake(self, context, job: Job, clips) -> None:
        print(format_report(clips[0].metrics))


def format_report(m: dict) -> str:
    """The Table-3 report of one bake as text (what scripts see printed)."""
    lines = [
        f"ProcAnim handshake '{m.get('initiator', '?')}' ({m.get('solver_initiator', '?')}) → "
        f"'{m.get('partner', '?')}' ({m.get('solver_partner', '?')}), "
        f"phases {m.get('sequence_initiator', '?')} / {m.get('sequence_partner', '?')}, "
        f"{m.get('shake_frames', 0)} shake frames"
    ]
    if m.get("shake_frames"):
        lines.append(f"  {'shake phase (cm)':<26}{'mean':>9}{'std':>9}{'max':>9}")
        for label, key in REPORT_ROWS:
            cells = "".join(f"{m.get(f'{key}_{s}_cm', float('nan')):9.4f}" for s in ("mean", "std", "max"))
            lines.append(f"  {label:<26}{cells}")
    lines.append(
        f"  solver time per frame: initiator {m.get('time_ms_initiator', 0.0):.3f} ms, "
        f"partner {m.get('time_ms_partner', 0.0):.3f} ms"
    )
    lines.append(
        "  " + json.dumps({k: m[k] for k in ("contact_weight", "step_initiator_m", "step_partner_m") if k in m})
    )
    return "\n".join(lines)


classes = (PROCANIM_OT_handshake,)
