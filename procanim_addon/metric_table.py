"""How the figures of a bake are shown: one row shape for every panel, the batch report and scripts.

A generator stores plain numbers in ``clip.metrics`` under keys such as ``skate_mean_cm_s``; the
sidebar shows them as "Foot skate  0.0001 cm/s" with a tooltip saying what is measured. Each
generator lists the rows it wants shown, in order, in its spec (``GeneratorSpec.metrics``);
:data:`COMMON` follows on every panel. The rows several generators share are here.
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


def row(key: str, label: str, unit: str, digits: int, tooltip: str) -> Metric:
    """A :class:`Metric` (positional, so that a generator's table reads as one line per row)."""
    return Metric(key, label, unit, digits, tooltip)


SKATE_MEAN = row("skate_mean_cm_s", "Foot skate", "cm/s", 4,
                 "Mean speed of foot points while they bear weight: 0 means planted feet never slide")
SKATE_P95 = row("skate_p95_cm_s", "Foot skate, p95", "cm/s", 3,
                "95 % of the weight-bearing foot samples slide slower than this")
PENETRATION = row("penetration_max_cm", "Foot below ground", "cm", 3,
                  "How far the lowest foot point goes below the ground at worst: 0 is ideal")
# the planted feet of a generated walk (duck walk, path walk): skate in cm/s, depth below ground in cm
PLANTED_FEET = (SKATE_MEAN, SKATE_P95, PENETRATION)

# the keys a bake wrote against the dense bake (Key Tolerance: procanim_addon/keys, docs/keys.md)
KEYS = (
    row("keys_written", "Keys written", "", 0, "Keyframes the bake wrote on all its F-curves (Key Tolerance 0: "
        "one on every generated frame)"),
    row("keys_dense", "Keys of a dense bake", "", 0,
        "Keyframes a dense bake (Key Tolerance 0) of the same motion writes, for comparison"),
    row("keys_percent_of_dense", "Keys kept", "%", 1, "Keys written as a share of the dense bake's: lower is "
        "easier to edit"),
    row("key_tolerance_mm", "Key tolerance", "mm", 2,
        "How far any deform joint may be from the dense motion on any frame (the bake's Key Tolerance)"),
    row("key_error_max_mm", "Largest key error", "mm", 3,
        "Largest distance of any deform bone's head or tail, or sole point, from the dense motion on any frame, "
        "as Blender plays the keys: within the Key Tolerance"),
    row("key_skate_added_cm_s", "Skate added by keys", "cm/s", 3,
        "Mean speed the keys add to the planted feet over every contact frame, against the dense bake"),
    row("contacts_exact", "Contacts kept", "", 0,
        "Yes when every foot contact starts and ends on a key and the keys add no skate beyond 0.08 cm/s"),
)

COMMON = (
    row("keys", "Keys per channel", "", 0, "Keyframes written on every baked channel"),
    row("fcurves", "F-curves", "", 0, "Animation channels written by the bake"),
    *KEYS,
    row("controls_keyed", "Controls keyed", "", 0, "Animator controls (and IK/FK switches) that received keys"),
    row("bake_takes_effect", "Takes effect", "", 0,
        "No when Blender's deform bones do not follow the bake (keys overridden by constraints): the generator's "
        "figures are then withheld and the measured ones shown"),
    row("measured_travel_m", "Travelled (measured)", "m", 3,
        "How far Blender's evaluated deform skeleton moved, horizontally, from the first verified frame to the last"),
    row("intended_travel_m", "Travel generated", "m", 3,
        "How far the generated motion moves the deform skeleton over the same frames"),
    row("control_residual_cm_max", "Residual", "cm", 3,
        "Largest distance between Blender's evaluated deform bones and the intended pose, on the sampled frames"),
    row("control_residual_cm_mean", "Residual, mean", "cm", 3,
        "Mean distance between Blender's evaluated deform bones and the intended pose, on the sampled frames"),
    row("control_residual_bone", "Worst bone", "", 0, "The deform bone farthest from the intended pose"),
    row("control_bake_approximate", "Approximate", "", 0,
        "Yes when the rig cannot reproduce the motion within 0.5 cm (e.g. Rigify's IK stretch: try FK Controls)"),
    row("generate_ms", "Bake time", "ms", 0, "Time from Generate to the keys being written"),
)

# a walk made a loop (loop IN_PLACE or ROOT_MOTION: procanim_addon/loop.py)
LOOP = (
    row("loop_cycles", "Loop cycles", "", 0, "Gait cycles in the loop (a weaving walk loops over whole sways of two)"),
    row("cycle_frames", "Cycle length", "frames", 0,
        "Frames per gait cycle: the cadence (or Speed) rounded so that a cycle is whole frames"),
    row("cycle_stride_m", "Stride per cycle", "m", 3,
        "How far one gait cycle travels; the loop's root motion is this times the cycles"),
    row("loop_travel_bone", "Root motion on", "", 0,
        "The bone whose location carries the travel (the hips when the rig has no root bone)"),
    row("loop_seam_velocity_ratio", "Seam velocity", "", 3,
        "Largest change a joint's velocity takes at the seam against the uncut walk's (0.1 = 10 % of its speed)"),
)
