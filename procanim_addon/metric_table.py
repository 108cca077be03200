"""How the figures of a bake are shown: one table for every panel, the batch report and scripts.

A generator stores plain numbers in ``clip.metrics`` under keys such as ``skate_mean_cm_s``; the
sidebar shows them as "Foot skate  0.0001 cm/s" with a tooltip saying what is measured. Each
generator lists the keys it wants shown (in order); :data:`COMMON` follows on every panel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Metric:
    """``key`` in the metrics; ``label`` in words; ``unit`` as shown; ``digits`` after the point
    (0 for counts); ``tooltip``: what it measures and what is good."""

    key: str
    label: str
    unit: str
    digits: int
    tooltip: str

    def format(self, value) -> str:
        """``value`` with its unit ("–" when not a number); a list shows its length and first items."""
        if isinstance(value, (list, tuple)):
            if not value:
                return "none"
            shown = ", ".join(str(v) for v in value[:LIST_SHOWN])
            return f"{len(value)}: {shown}{' …' if len(value) > LIST_SHOWN else ''}"
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, str):
            return value
        if not isinstance(value, (int, float)) or not math.isfinite(value):
            return "–"
        text = f"{value:.{self.digits}f}" if self.digits else f"{round(value):d}"
        return f"{text} {self.unit}".strip()


LIST_SHOWN = 4  # items of a list-valued figure shown in the sidebar


def _m(key, label, unit, digits, tooltip) -> Metric:
    return Metric(key, label, unit, digits, tooltip)


SKATE_MEAN = _m("skate_mean_cm_s", "Foot skate", "cm/s", 4,
                "Mean speed of foot points while they bear weight: 0 means planted feet never slide")
SKATE_P95 = _m("skate_p95_cm_s", "Foot skate, p95", "cm/s", 3,
               "95 % of the weight-bearing foot samples slide slower than this")
PENETRATION = _m("penetration_max_cm", "Foot below ground", "cm", 3,
                 "How far the lowest foot point goes below the ground at worst: 0 is ideal")

COMMON = (
    _m("keys", "Keys per channel", "", 0, "Keyframes written on every baked channel"),
    _m("fcurves", "F-curves", "", 0, "Animation channels written by the bake"),
    _m("controls_keyed", "Controls keyed", "", 0, "Animator controls (and IK/FK switches) that received keys"),
    _m("control_residual_cm_max", "Control residual", "cm", 3,
       "Largest distance between Blender's evaluated deform bones and the intended pose, on the sampled frames"),
    _m("control_residual_cm_mean", "Control residual, mean", "cm", 3,
       "Mean distance between Blender's evaluated deform bones and the intended pose, on the sampled frames"),
    _m("control_residual_bone", "Worst bone", "", 0, "The deform bone farthest from the intended pose"),
    _m("control_bake_approximate", "Approximate", "", 0,
       "Yes when the rig cannot reproduce the motion within 0.5 cm (e.g. Rigify's IK stretch: try FK Controls)"),
    _m("generate_ms", "Bake time", "ms", 0, "Time from Generate to the keys being written"),
)

# a walk made a loop (loop IN_PLACE or ROOT_MOTION: procanim_addon/loop.py)
LOOP = (
    _m("loop_cycles", "Loop cycles", "", 0, "Gait cycles in the loop (a weaving walk loops over whole sways of two)"),
    _m("cycle_frames", "Cycle length", "frames", 0,
       "Frames per gait cycle: the cadence (or Speed) rounded so that a cycle is whole frames"),
    _m("cycle_stride_m", "Stride per cycle", "m", 3,
       "How far one gait cycle travels; the loop's root motion is this times the cycles"),
    _m("loop_travel_bone", "Root motion on", "", 0,
       "The bone whose location carries the travel (the hips when the rig has no root bone)"),
    _m("loop_seam_velocity_ratio", "Seam velocity", "", 3,
       "Largest change a joint's velocity takes at the seam against the uncut walk's (0.1 = 10 % of its speed)"),
)

TABLE: dict[str, tuple[Metric, ...]] = {
    "duck_walk": (
        _m("stride_m", "Stride", "m", 3, "How far one foot advances per gait cycle"),
        _m("speed_m_s", "Walking speed", "m/s", 3, "Mean forward speed of the body"),
        SKATE_MEAN,
        SKATE_P95,
        PENETRATION,
        _m("reach_clamped_frames", "Keys lowered (reach)", "", 0,
           "Keys where a light duck's bounce was lowered so a planted foot stays within reach"),
        *LOOP,
    ),
    "handshake": (
        _m("both_mean_cm", "Grip error, mean", "cm", 3,
           "Mean distance between the two grip points during the shake (the paper's Table 3, both hands)"),
        _m("both_std_cm", "Grip error, std", "cm", 3, "Standard deviation of the grip distance in the shake"),
        _m("both_max_cm", "Grip error, max", "cm", 3, "Largest grip distance in the shake"),
        _m("time_ms_initiator", "Initiator solver", "ms/frame", 3,
           "Time the initiator's arm controller takes per frame"),
        _m("time_ms_partner", "Partner solver", "ms/frame", 3,
           "Time the partner's arm controller takes per frame"),
    ),
    "path_walk": (
        _m("step_count", "Steps", "", 0, "Footsteps along the path"),
        _m("cadence_spm", "Cadence", "steps/min", 0, "Steps per minute over the walk"),
        SKATE_MEAN,
        SKATE_P95,
        PENETRATION,
        _m("pelvis_deviation_mean_cm", "Pelvis off path", "cm", 1,
           "Mean horizontal distance of the pelvis from the curve (a walker sways a few cm)"),
        _m("heading_error_mean_deg", "Heading error", "°", 1,
           "Mean angle between the pelvis' facing and the path's direction"),
        _m("com_vertical_travel_cm", "Centre of mass bob", "cm", 1, "Vertical travel of the centre of mass per step"),
        _m("max_joint_jump_deg", "Largest joint step", "°/frame", 1,
           "Largest rotation of any bone between two frames: spikes show pops"),
        *LOOP,
    ),
    "adapt_terrain": (
        _m("collisions", "Collision frames", "", 0, "Frames with a limb inside the terrain (0 is the goal)"),
        _m("collisions_leg_L", "… left leg", "", 0, "Frames the left leg is inside the terrain"),
        _m("collisions_leg_R", "… right leg", "", 0, "Frames the right leg is inside the terrain"),
        _m("collisions_arm_L", "… left arm", "", 0, "Frames the left arm is inside the terrain"),
        _m("collisions_arm_R", "… right arm", "", 0, "Frames the right arm is inside the terrain"),
        _m("unfixed_frames", "Frames not cleared", "", 0,
           "Frames where a limb still cuts the terrain after the adaptation (the motion cannot step there)"),
        _m("bone_length_error_pct", "Bone length change", "%", 5,
           "Largest change of a bone's length (the method keeps lengths; the paper reports 1.7–5.3 %)"),
        _m("contact_error_cm_max", "Contact error", "cm", 3,
           "Largest distance between a contact of the source motion and the terrain after adaptation"),
        _m("solve_time_s", "Solve time", "s", 2, "Time spent in the descriptor solve"),
    ),
    "source_motion": (
        _m("steps", "Steps", "", 0, "Footsteps of the walk"),
        _m("step_length_m", "Step length", "m", 3, "Distance between successive footprints"),
    ),
}


def metrics_for(generator: str) -> tuple[Metric, ...]:
    """The rows a panel shows for ``generator`` (its own, then the common ones)."""
    return TABLE.get(generator, ()) + COMMON


def find(generator: str, key: str) -> Metric | None:
    """The row of ``key`` for ``generator`` (None when it is not in the table)."""
    return next((m for m in metrics_for(generator) if m.key == key), None)
