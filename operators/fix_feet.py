"""procanim.fix_feet — the armature's motion with its planted feet held still (contacts after Ikemoto,
Arikan & Forsyth, "Knowing when to put your foot down", I3D 2006; holding after Kovar, Schreiner &
Gleicher, "Footskate cleanup for motion capture editing", SCA 2002).

The source is the motion as Blender evaluates it — whatever drives the armature: its action, NLA
strips, a control rig's controls, constraints — read as the deform pose on every frame of the
source's range (``adapt_terrain.read_source_clip`` with ``evaluated``: pose matrices sampled by
``control_rig.read_deform_clip``, the one place a frame is set per frame: reading a source). When
the active action is this operator's own bake, its source (``procanim.previous_action``, or the NLA
alone when it had none) is read instead, so fixing twice never fixes a fix. Pose markers "L contact",
"L lift", "R contact", "R lift" on the source action decide the contacts they cover. The result is a
new action (onto the controls of a known control rig, per ``key_target``); the source is kept.
The panel: the ground picker, the frames, the contact thresholds; holding settings under Advanced.
"""

from __future__ import annotations

import math

import bpy
from bpy.props import BoolProperty

from ..procanim_addon.errors import InputError
from ..procanim_addon.fix_feet import FixFeetParams, overrides_from_markers
from ..procanim_addon.fix_feet.feet import REQUIRED
from ..procanim_addon.fix_feet.spec import SPEC
from ..procanim_addon.jobs import EngineCall
from ..procanim_addon.limits import check_bake_size
from ..procanim_addon.terrain.mesh import TerrainMesh
from .adapt_terrain import read_source_clip
from .bridge import read_mesh_triangles, read_rig, require_uniform_scale
from .compat import action_fcurves
from .generator import Generator, Job, SubPanel
from .limits import frame, number
from .objects import ARMATURE, ObjectArgument, active_armature, kept_read

GROUND = ObjectArgument("ground", "Ground", "Mesh the planted feet stand on (empty: the motion's own floor)", "MESH",
                        "ground", optional=True)
OBJECTS = (ARMATURE, GROUND)
NLA_SOURCE = "NLA"  # how figures and messages name a source with no action of its own (the NLA strips)
# what moves the armature object itself (Fix Feet holds feet in the armature's space)
OBJECT_CHANNELS = {"location", "rotation_euler", "rotation_quaternion", "rotation_axis_angle", "scale"}


# ----------------------------------------------------------------------------- the source


def own_bake(obj, action) -> bool:
    """``action`` is a Fix Feet bake of ``obj``."""
    return action is not None and action.procanim.generator == SPEC.id and action.procanim.owner == obj.name


def nla_strips(obj) -> list:
    """The strips of the armature's NLA tracks that play (unmuted tracks, unmuted strips)."""
    ad = obj.animation_data
    if ad is None:
        return []
    return [s for t in ad.nla_tracks if not t.mute for s in t.strips if not s.mute]


def _source_range(obj, action) -> tuple[float, float]:
    """The source's own frames: the action's range, else the span of the NLA strips."""
    if action is not None:
        lo, hi = action.frame_range
        return float(lo), float(hi)
    strips = nla_strips(obj)
    return min(s.frame_start for s in strips), max(s.frame_end for s in strips)


def frame_range(args, obj, action) -> tuple[int, int, str]:
    """The frames to fix and a note for the user ('' when there is nothing to say). ``frame_start``
    or ``frame_end`` 0: the source's own first or last frame (rounded inward); others are clamped
    to the source's range, with a note, and refused only when they miss it entirely."""
    lo, hi = _source_range(obj, action)
    first, last = math.ceil(lo - 1e-6), math.floor(hi + 1e-6)
    start = args.frame_start or first
    end = args.frame_end or last
    what = f"the action '{action.name}'" if action is not None else "the NLA strips"
    if end <= start:
        raise InputError(f"The end frame ({end}) must come after the start frame ({start}).")
    if end < first or start > last:
        raise InputError(f"Frames {start}–{end} are outside {what} ({lo:g}–{hi:g}).")
    clamped = max(start, first), min(end, last)
    if clamped[1] <= clamped[0]:
        raise InputError(f"Only one frame of {what} ({lo:g}–{hi:g}) is in the range: there is no motion to fix.")
    note = f"Frames {start}–{end} clamped to {what}: {clamped[0]}–{clamped[1]}." if clamped != (start, end) else ""
    return clamped[0], clamped[1], note


def _check_motion(obj, action) -> None:
    """Refuse a source that does not move the bones the way Fix Feet can hold: none at all, an
    action without keys, or one that moves the armature object itself."""
    if action is None and not nla_strips(obj):
        raise InputError(
            f"'{obj.name}' has no motion to fix: give it an action (bake, key or import one) or NLA strips first."
        )
    actions = [action] if action is not None else []
    actions += [s.action for s in nla_strips(obj) if s.action is not None]
    if action is not None and not action_fcurves(action):
        raise InputError(f"The action '{action.name}' on '{obj.name}' has no keys: there is no motion to fix.")
    moving = sorted({f"{a.name}: {fc.data_path}" for a in actions for fc in action_fcurves(a)
                     if fc.data_path in OBJECT_CHANNELS or fc.data_path.startswith("delta_")})
    if moving:
        raise InputError(
            f"The motion of '{obj.name}' moves the object itself ({', '.join(moving[:4])}); Fix Feet holds feet "
            "in the armature's space: move the root motion onto the root or hips bone first."
        )


def _rig(obj):
    """Skeleton and roles, with the leg roles Fix Feet needs (refused, naming them, when missing)."""
    skeleton, rigmap = read_rig(obj)
    missing = [r for r in REQUIRED if not skeleton.has(rigmap.get(r) or "")]
    if missing:
        raise InputError(
            f"'{obj.name}' has no bones for the roles {', '.join(missing)}, which Fix Feet needs; "
            "use Detect Roles or assign them in the ProcAnim > Character panel."
        )
    return skeleton, rigmap


def _ground(ground_obj, obj, context):
    verts, tris = read_mesh_triangles(ground_obj, obj, context.evaluated_depsgraph_get(), "ground")
    return TerrainMesh(verts, tris, name=ground_obj.name)


# ----------------------------------------------------------------------------- the panel

CONTACTS = ("height_m", "speed_m_s", "blend_s", "max_pelvis_drop_m")
ADVANCED = ("hysteresis", "min_contact_s", "min_lift_s", "noise_factor", "max_reach", "reach_slack_m",
            "place_on_ground", "sole_from_rest", "sole_m")


def draw_advanced(layout, settings, _context) -> None:
    """The Advanced sub-panel: detection and holding details."""
    col = layout.column(align=True)
    for name in ADVANCED:
        if name != "sole_m" or not settings.sole_from_rest:
            col.prop(settings, name)


class FixFeet(Generator):
    spec = SPEC
    settings_name = "fix_feet"
    objects = OBJECTS
    subpanels = (SubPanel("PROCANIM_PT_fix_feet_advanced", "Advanced", draw_advanced),)

    def source_action(self, obj):
        """The action whose motion is fixed: the active one, or — when that is this operator's own
        bake — the action it fixed (None: it fixed the NLA alone, read again without the bake)."""
        ad = obj.animation_data
        action = ad.action if ad else None
        if not own_bake(obj, action):
            return action
        name = action.procanim.previous_action
        previous = bpy.data.actions.get(name) if name else None
        if previous is None and name:
            raise InputError(
                f"'{action.name}' on '{obj.name}' is a Fix Feet bake whose source action '{name}' no longer "
                "exists; assign the motion to fix to the armature."
            )
        if previous is None and not nla_strips(obj):
            return action  # nothing else holds a motion: the bake itself is the source
        return previous

    def settings(self, ui: bool) -> dict:
        """Fix Feet's settings as bpy properties, shared by the operator and the sidebar (limits:
        ``procanim_addon/limits.py``); names as the engine's, with their units."""
        P = FixFeetParams  # noqa: N806 - the parameter class, as in the engine
        return {
            "frame_start": frame("Start Frame", "First frame to fix (0: the source's first frame)", 0, ui),
            "frame_end": frame("End Frame", "Last frame to fix (0: the source's last frame)", 0, ui),
            "height_m": number(P, "height_m", ui, "Contact Height",
                               "A heel or ball closer to the floor than this may bear weight", unit="LENGTH"),
            "speed_m_s": number(P, "speed_m_s", ui, "Contact Speed",
                                "A heel or ball slower than this may bear weight", unit="VELOCITY"),
            "hysteresis": number(P, "hysteresis", ui, "Hysteresis",
                                 "A contact ends only above this many times the height and speed thresholds"),
            "min_contact_s": number(P, "min_contact_s", ui, "Shortest Contact",
                                    "Contacts shorter than this are dropped (seconds)", unit="TIME_ABSOLUTE"),
            "min_lift_s": number(P, "min_lift_s", ui, "Shortest Lift",
                                 "Lifts between two contacts shorter than this are closed (seconds)",
                                 unit="TIME_ABSOLUTE"),
            "noise_factor": number(P, "noise_factor", ui, "Noise Factor",
                                   "The thresholds come down to this many times the motion's own noise in contact "
                                   "(0: use them as given)"),
            "blend_s": number(P, "blend_s", ui, "Blend",
                              "The foot eases into and out of a held contact over this time (seconds)",
                              unit="TIME_ABSOLUTE"),
            "max_reach": number(P, "max_reach", ui, "Largest Leg Extension",
                                "Straightest leg the fix makes: hip–ankle distance over thigh + shin"),
            "reach_slack_m": number(P, "reach_slack_m", ui, "Reach Slack",
                                    "A held ankle out of reach by less than this stops short instead of lowering "
                                    "the pelvis", unit="LENGTH"),
            "max_pelvis_drop_m": number(P, "max_pelvis_drop_m", ui, "Largest Pelvis Drop",
                                        "Where a held foot is out of reach the pelvis comes down by at most this; "
                                        "beyond it the contact is shortened and reported", unit="LENGTH"),
            "place_on_ground": BoolProperty(
                name="Place on Ground",
                description="With a ground: move the whole motion up or down onto it (a floating capture comes down)",
                default=P.place_on_ground,
            ),
            "sole_from_rest": BoolProperty(
                name="Sole from Rest Pose",
                description="The heels and balls stand as high above the floor as in the rest pose (off: Sole Height)",
                default=P.sole_from_rest,
            ),
            "sole_m": number(P, "sole_m", ui, "Sole Height",
                             "Height of the heel and ball above the floor when the foot is flat (Sole from Rest "
                             "Pose off)", unit="LENGTH"),
        }

    def prepare(self, args, context) -> Job:
        obj = ARMATURE.resolve(args, context, self.settings_name)
        ground_obj = GROUND.resolve(args, context, self.settings_name)
        skeleton, rigmap = kept_read(args, "rig", (obj,), lambda: _rig(obj))
        action = self.source_action(obj)
        _check_motion(obj, action)
        first, last, note = frame_range(args, obj, action)
        check_bake_size(last - first + 1, len(skeleton), "The motion to fix")
        unit = require_uniform_scale(obj) * context.scene.unit_settings.scale_length
        params = FixFeetParams(
            height_m=args.height_m, speed_m_s=args.speed_m_s, hysteresis=args.hysteresis,
            min_contact_s=args.min_contact_s, min_lift_s=args.min_lift_s, noise_factor=args.noise_factor,
            blend_s=args.blend_s, max_reach=args.max_reach, reach_slack_m=args.reach_slack_m,
            max_pelvis_drop_m=args.max_pelvis_drop_m, place_on_ground=args.place_on_ground,
            sole_from_rest=args.sole_from_rest, sole_m=args.sole_m, unit_m=unit,
        ).validate()
        ground = None
        if ground_obj is not None:
            ground = kept_read(args, "ground", (ground_obj, obj), lambda: _ground(ground_obj, obj, context))
        name = action.name if action is not None else NLA_SOURCE
        source = kept_read(args, f"source {name} {first}-{last}", (obj,),
                           lambda: read_source_clip(obj, action, skeleton, first, last, evaluated=True))
        markers = [(m.name, m.frame) for m in action.pose_markers] if action is not None else []
        names = {"source_action": name, "ground": ground_obj.name if ground_obj is not None else ""}
        compute = EngineCall(self.spec.call,
                             (skeleton, rigmap, source, ground, overrides_from_markers(markers), params, names))
        return Job([obj], compute, extra={"source_action": name, "notes": [note] if note else []})

    def summary(self, job: Job, clips) -> str:
        m = clips[0].metrics
        return (
            f"Fixed the feet of '{job.extra['source_action']}' on '{job.targets[0].name}': {m.get('contacts', 0)} "
            f"contacts held, skate {m.get('skate_before_mean_cm_s', 0.0):.2f} → {m.get('skate_mean_cm_s', 0.0):.2f} "
            f"cm/s, float {m.get('float_before_cm', 0.0):.2f} → {m.get('float_cm', 0.0):.2f} cm, "
            f"{m.get('frames_changed', 0)} frames changed (largest change {m.get('max_joint_change_cm', 0.0):.2f} cm)"
        )

    def warnings(self, _job: Job, clips) -> list[str]:
        """The bake's WARNING lines: contacts shortened because the foot could not be reached."""
        m = clips[0].metrics
        shortened = m.get("shortened") or []
        if not shortened:
            return []
        shown = "; ".join(shortened[:6]) + (" …" if len(shortened) > 6 else "")
        return [f"{len(shortened)} contacts shortened where the foot was out of the leg's reach (Largest Pelvis "
                f"Drop did not suffice): {shown}"]

    def draw(self, layout, settings, context) -> None:
        obj = active_armature(context)
        try:
            action = self.source_action(obj) if obj is not None else None
        except InputError:
            action = None
        if obj is None:
            layout.label(text="Pick an armature with a motion (see Character).", icon="INFO")
        elif action is None and not nla_strips(obj):
            layout.label(text="The armature has no motion to fix.", icon="INFO")
        else:
            layout.label(text=f"Fixes: {action.name if action is not None else 'its NLA strips'}", icon="ACTION")
        layout.prop(settings, "ground")
        row = layout.row(align=True)
        row.prop(settings, "frame_start", text="Start")
        row.prop(settings, "frame_end", text="End")
        col = layout.column(align=True)
        for name in CONTACTS:
            col.prop(settings, name)


GENERATOR = FixFeet()
