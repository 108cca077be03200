"""procanim.handshake — two characters shake right hands (Deglorie et al., "Procedural Animation of Human
Interaction using Inverse Kinematics and Fuzzy Logic", GRAPP 2015), baked onto both.

``prepare`` reads both armatures (rest skeleton, role map, world matrix) and checks that they are
two different armatures with right-arm roles for the engine's call
(``procanim_addon/handshake/spec.py``); one Action is baked per armature. The paper's Table 3 for
the shake phase (grip-to-grip and grip-to-target distances, solver time per frame) is stored in both
actions' metrics, printed for scripts and drawn in the panel. Each character's solver and dominance
are kept on the character object (``Object.procanim_character``), so they persist with it.
"""

from __future__ import annotations

import json

import bpy
import numpy as np
from bpy.props import BoolProperty, EnumProperty, PointerProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.handshake import HandshakeParams
from ..procanim_addon.handshake.character import ARM_ROLES
from ..procanim_addon.handshake.spec import SPEC
from ..procanim_addon.ik.solve import SOLVERS
from ..procanim_addon.jobs import EngineCall
from .bridge import obj_fps, read_rigmap, read_skeleton
from .generator import Generator, Job
from .limits import number
from .objects import ObjectArgument, argument_given

DOMINANCE = "0–1: a dominant character keeps the grip out of its own space (it moves toward the other)"

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

# The Table-3 figures that after_bake prints and the panel draws (cm, ms).
REPORT_ROWS = (
    ("both hands", "both"),
    ("initiator grip → target", "initiator"),
    ("partner grip → target", "partner"),
)


def _world(obj) -> np.ndarray:
    return np.array(obj.matrix_world, dtype=float)


INITIATOR = ObjectArgument("initiator", "Initiator", "Armature that offers its hand", "ARMATURE", "initiator")
PARTNER = ObjectArgument("partner", "Partner", "Armature that answers the invitation", "ARMATURE", "partner")
OBJECTS = (INITIATOR, PARTNER)


def _personal(args, argument: str, obj, field: str):
    """The argument when given, else the value stored on the character (Handshake panel)."""
    stored = getattr(obj, "procanim_character", None)
    if argument_given(args, argument) or stored is None:
        return getattr(args, argument)
    return getattr(stored, field)


def character_settings() -> dict:
    """Each character's controller and personality, kept on the character object (the sidebar)."""
    return {
        "solver": EnumProperty(
            name="Solver", description="Controller that moves this character's arm", items=SOLVER_ITEMS, default="DLS"
        ),
        "dominance": number(HandshakeParams, "dominance_initiator", True, "Dominance", DOMINANCE),
    }


class ProcAnimCharacterSettings(bpy.types.PropertyGroup):
    """Per-character personality and controller, kept on the object."""

    __annotations__ = character_settings()


def _params(args, a, b) -> HandshakeParams:
    params = HandshakeParams(
        frame_start=args.frame_start,
        fps=obj_fps(a),
        solver_initiator=_personal(args, "solver_initiator", a, "solver"),
        solver_partner=_personal(args, "solver_partner", b, "solver"),
        dominance_initiator=_personal(args, "dominance_initiator", a, "dominance"),
        dominance_partner=_personal(args, "dominance_partner", b, "dominance"),
        accept=args.accept,
        **{name: getattr(args, name) for name in TIMINGS},
    )
    params.validate()
    return params


def _character(obj):
    skeleton = read_skeleton(obj)
    rigmap = read_rigmap(obj, skeleton)
    rigmap.require(list(ARM_ROLES))
    world = _world(obj)
    if not np.all(np.isfinite(world)):
        raise InputError(f"'{obj.name}' has an invalid (non-finite) transform.")
    return skeleton, rigmap, world


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


class Handshake(Generator):
    spec = SPEC
    settings_name = "handshake"
    objects = OBJECTS

    def settings(self, ui: bool) -> dict:
        """The handshake's shared settings (operator and sidebar): start, accept and phase timings
        (limits: ``procanim_addon/limits.py``; see :func:`.limits.number`)."""

        def frames(name, label, description):
            return number(HandshakeParams, name, ui, label, description)

        return {
            "frame_start": frames("frame_start", "Start Frame", "First frame of the handshake"),
            "accept": BoolProperty(
                name="Accept",
                description="The partner accepts the invitation (off: it refuses and the initiator withdraws its hand)",
                default=True,
            ),
            "neutral_frames": frames("neutral_frames", "Neutral", "Frames both stand still before the invitation"),
            "dummy_frames": frames("dummy_frames", "Invitation", "Frames of the initiator's invitation (dummy phase)"),
            "response_frames": frames("response_frames", "Response", "Frames the partner takes to answer"),
            "approach_frames": frames("approach_frames", "Approach", "Frames for a hand to reach the point of contact"),
            "shake_frames": frames("shake_frames", "Shake", "Frames of the primary shake (one up-and-down cycle)"),
            "secondary_shakes": frames("secondary_shakes", "Secondary Shakes", "Smaller shakes after the primary one"),
            "secondary_frames": frames("secondary_frames", "Secondary Frames", "Frames of each secondary shake"),
            "retreat_frames": frames("retreat_frames", "Retreat", "Frames for the hands to return to rest"),
            "hold_frames": frames("hold_frames", "Hold", "Frames the rest pose is held at the end"),
        }

    def operator_settings(self) -> dict:
        """Per-character arguments: given to a script, else read from the character (Handshake panel)."""
        return {
            "solver_initiator": EnumProperty(
                name="Initiator Solver", description="Controller of the initiator's arm", items=SOLVER_ITEMS,
                default="DLS",
            ),
            "solver_partner": EnumProperty(
                name="Partner Solver", description="Controller of the partner's arm", items=SOLVER_ITEMS, default="DLS"
            ),
            "dominance_initiator": number(HandshakeParams, "dominance_initiator", False, "Initiator Dominance",
                                          DOMINANCE),
            "dominance_partner": number(HandshakeParams, "dominance_partner", False, "Partner Dominance", DOMINANCE),
        }

    def prepare(self, args, context) -> Job:
        a = INITIATOR.resolve(args, context, self.settings_name)
        b = PARTNER.resolve(args, context, self.settings_name)
        if a == b:
            raise InputError(f"The initiator and the partner are both '{a.name}'; pick two different armatures.")
        params = _params(args, a, b)
        return Job([a, b], EngineCall(self.spec.call, (_character(a), _character(b), params, (a.name, b.name))))

    def after_bake(self, job: Job, clips) -> None:  # the Table-3 report, for scripts
        print(format_report(clips[0].metrics))

    def panel_settings(self) -> dict:
        return {"show_timings": BoolProperty(name="Timings", description="Show the phase timings", default=False)}

    def draw(self, layout, hs, _context) -> None:
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

    def draw_figures(self, layout, _action, m: dict) -> None:
        """The paper's Table 3 for the shake phase of the last bake."""
        layout.label(text=f"{m.get('initiator', '?')} → {m.get('partner', '?')}")
        layout.label(
            text=f"{m.get('solver_initiator', '?')} + {m.get('solver_partner', '?')}, phases "
            f"{m.get('sequence_initiator', '?')} / {m.get('sequence_partner', '?')}"
        )
        if not m.get("shake_frames"):
            layout.label(text="No shake (the invitation was refused)", icon="INFO")
            return
        col = layout.column(align=True)
        col.label(text="Shake phase, cm: mean / std / max")
        for label, key in REPORT_ROWS:
            vals = [m.get(f"{key}_{s}_cm") for s in ("mean", "std", "max")]
            col.label(text=f"{label}: " + " / ".join("–" if v is None else f"{v:.3f}" for v in vals))

    def property_classes(self) -> tuple[type, ...]:
        return (ProcAnimCharacterSettings,)

    def register_properties(self) -> None:
        bpy.types.Object.procanim_character = PointerProperty(
            name="ProcAnim Character", description="ProcAnim per-character settings", type=ProcAnimCharacterSettings
        )

    def unregister_properties(self) -> None:
        del bpy.types.Object.procanim_character


GENERATOR = Handshake()
