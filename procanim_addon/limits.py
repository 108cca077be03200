"""The documented limits of every parameter, checked once at the engine boundary.

Every numeric field of a generator's parameter dataclass has a :class:`Limit` here: the range
where the value means something (outside it the engine refuses with a message naming the setting,
its limits and the value given — NaN included), and the slider range the sidebar shows. Operators
take their property limits from the same table (``operators/limits.py``), so a script and the sidebar
meet the same numbers. ``params.validate()`` calls :func:`check_limits` first, so that its own checks
of how fields relate to each other only ever meet numbers in range.

A bake is also refused before anything is allocated when it would hold more than
:data:`MAX_FRAMES` frames or :data:`MAX_FRAME_BONES` frame × bone samples (:func:`check_bake_size`).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .errors import InputError

MAX_FRAME = 1_048_574  # Blender's last frame (MAXFRAME): keys beyond it cannot be shown
MAX_FRAMES = 100_000  # frames in one bake: over an hour at 24 fps — longer is a typo, not a shot
MAX_FRAME_BONES = 10_000_000  # frames × bones of one clip: ~560 MB of float64 pose channels
MAX_FPS = 1000.0


def fmt(value: float) -> str:
    """A number as messages and docs show it: whole numbers without a point (thousands grouped
    from 10,000 on), others with up to six significant digits."""
    if isinstance(value, (int, float)) and math.isfinite(value) and float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))
    return f"{value:g}"


@dataclass(frozen=True)
class Limit:
    """``lo``–``hi``: the meaningful range (inclusive); ``label``: how messages name the setting;
    ``unit`` as shown; ``soft``: the slider range (defaults to the whole range)."""

    lo: float
    hi: float
    label: str
    unit: str = ""
    soft: tuple[float, float] | None = None

    def check(self, value, index: int | None = None) -> None:
        what = self.label if index is None else f"{self.label} [{index + 1}]"
        unit = f" {self.unit}" if self.unit else ""
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise InputError(f"{what} must be a number (got {value!r}).")
        if not math.isfinite(value) or not self.lo <= value <= self.hi:
            raise InputError(f"{what} must be between {fmt(self.lo)} and {fmt(self.hi)}{unit} (got {fmt(value)}).")

    @property
    def slider(self) -> tuple[float, float]:
        return self.soft or (self.lo, self.hi)


def _frames(label: str = "Start frame") -> Limit:
    return Limit(-MAX_FRAME, MAX_FRAME, label, soft=(0, 1000))


def _count(label: str, hi: float, lo: float = 0, soft: float | None = None) -> Limit:
    return Limit(lo, hi, label, "frames" if "frames" in label.lower() else "", soft=(lo, soft) if soft else None)


FRAME = _frames("Frame")
FPS = Limit(1.0, MAX_FPS, "Frames per second", "fps", soft=(1.0, 120.0))
SLIDER = (0.0, 10.0)
LOOP_CYCLES = Limit(1, 100, "Loop cycles", soft=(1, 8))  # gait cycles in a walk loop

LIMITS: dict[str, dict[str, Limit]] = {
    "DuckParams": {
        "frame_start": _frames(),
        "frame_end": _frames("End frame"),
        "fps": FPS,
        "key_interval": Limit(1, 1000, "Key interval", "frames", soft=(1, 12)),
        "amplitude": Limit(*SLIDER, "Amplitude"),
        "speed": Limit(*SLIDER, "Speed"),
        "weight": Limit(*SLIDER, "Weight"),
        "direction": Limit(*SLIDER, "Direction"),
        "unit_per_leg": Limit(0.01, 2.0, "Unit per leg length"),
        "rotation_gain_deg": Limit(0.0, 90.0, "Rotation gain", "°"),
        "fore_aft_divisor": Limit(0.1, 10.0, "Fore-aft divisor"),
        "loop_cycles": LOOP_CYCLES,
    },
    "HandshakeParams": {
        "frame_start": _frames(),
        "fps": FPS,
        "dominance_initiator": Limit(0.0, 1.0, "Dominance initiator"),
        "dominance_partner": Limit(0.0, 1.0, "Dominance partner"),
        "neutral_frames": _count("Neutral frames", 2400, soft=120),
        "dummy_frames": _count("Dummy frames", 2400, lo=2, soft=120),
        "response_frames": _count("Response frames", 2400, soft=120),
        "approach_frames": _count("Approach frames", 2400, lo=2, soft=120),
        "shake_frames": _count("Shake frames", 2400, lo=2, soft=120),
        "secondary_shakes": _count("Secondary shakes", 20, soft=5),
        "secondary_frames": _count("Secondary frames", 2400, lo=2, soft=60),
        "secondary_decay": Limit(0.0, 1.0, "Secondary decay"),
        "retreat_frames": _count("Retreat frames", 2400, lo=2, soft=120),
        "hold_frames": _count("Hold frames", 2400, soft=120),
        "shake_ratio": Limit(0.0, 2.0, "Shake amplitude ratio"),
        "dominance_shift": Limit(0.0, 1.0, "Dominance shift"),
        "contact_drop_forearms": Limit(0.0, 3.0, "Contact drop", "forearms"),
        "dummy_fraction": Limit(0.0, 1.0, "Invitation reach fraction"),
        "grip_fraction": Limit(0.0, 1.0, "Grip fraction"),
        "palm_thickness_ratio": Limit(0.0, 2.0, "Palm thickness ratio"),
        "reach_comfort": Limit(0.1, 1.0, "Comfortable reach"),
        "max_step_legs": Limit(0.0, 3.0, "Largest step", "leg lengths"),
        "max_lean_deg": Limit(0.0, 90.0, "Largest lean", "°"),
        "max_facing_deg": Limit(0.0, 180.0, "Largest facing error", "°"),
        "ik_tolerance_m": Limit(1e-9, 0.1, "IK tolerance", "m"),
        "arrive_tolerance_m": Limit(1e-6, 0.5, "Arrival tolerance", "m"),
        "max_wait_frames": _count("Largest wait", 2400, soft=120),
    },
    "PathWalkParams": {
        "frame_start": _frames(),
        "fps": FPS,
        "cadence_spm": Limit(20.0, 240.0, "Cadence", "steps/min", soft=(60.0, 140.0)),
        "speed_mps": Limit(0.0, 3.0, "Speed", "m/s"),
        "stride_m": Limit(0.0, 2.0, "Stride", "m"),
        "stride_per_leg": Limit(0.1, 2.0, "Stride per leg length"),
        "double_support": Limit(0.05, 0.45, "Double support"),
        "arm_swing": Limit(0.0, 3.0, "Arm swing scale"),
        "arm_swing_fwd_deg": Limit(0.0, 90.0, "Arm swing forward", "°"),
        "arm_swing_back_deg": Limit(0.0, 90.0, "Arm swing back", "°"),
        "armpit_deg": Limit(-10.0, 80.0, "Armpit angle", "°"),
        "elbow_deg": Limit(0.0, 120.0, "Elbow angle", "°"),
        "delta_x": Limit(-1.0, 1.0, "δ progression"),
        "delta_y": Limit(-1.0, 1.0, "δ vertical"),
        "delta_z": Limit(-1.0, 1.0, "δ lateral"),
        "corner_radius_m": Limit(0.0, 5.0, "Corner radius", "m"),
        "stand_s": Limit(0.0, 10.0, "Stand time", "s"),
        "heel_strike_deg": Limit(0.0, 45.0, "Heel strike angle", "°"),
        "heel_off_deg": Limit(0.0, 60.0, "Heel off angle", "°"),
        "toe_off_deg": Limit(0.0, 80.0, "Toe off angle", "°"),
        "clearance_m": Limit(0.0, 0.5, "Clearance", "m"),
        "tread_margin_m": Limit(0.0, 0.2, "Tread margin", "m"),
        "max_step_height_m": Limit(0.0, 2.0, "Highest step", "m"),
        "max_incline_deg": Limit(1.0, 80.0, "Steepest incline", "°"),
        "pelvis_rotation_deg": Limit(0.0, 30.0, "Pelvis rotation", "°"),
        "pelvis_list_deg": Limit(0.0, 30.0, "Pelvis list", "°"),
        "knee_reach": Limit(0.5, 1.0, "Knee reach"),
        "style_amplitude": Limit(0.0, 10.0, "Style amplitude"),
        "style_weight": Limit(0.0, 10.0, "Style weight"),
        "style_direction": Limit(0.0, 10.0, "Style direction"),
        "loop_cycles": LOOP_CYCLES,
    },
    "AdaptParams": {
        "descriptors_per_joint": Limit(10, 200, "Descriptors per joint"),
        "radius0_m": Limit(1e-4, 1.0, "Descriptor radius", "m"),
        "spread_m": Limit(1e-4, 10.0, "Descriptor spread", "m"),
        "cutoff_ratio": Limit(1.01, 100.0, "Cutoff ratio"),
        "damping": Limit(0.0, 0.95, "Damping"),
        "k0": Limit(1e-3, 100.0, "k"),
        "k_decay": Limit(1e-3, 1.0, "k decay"),
        "k_min": Limit(1e-3, 100.0, "Smallest k"),
        "iteration_tolerance_m": Limit(1e-8, 0.1, "Iteration tolerance", "m"),
        "max_iterations": Limit(1, 10_000, "Iterations"),
        "key_interval": Limit(1, 1000, "Key interval", "frames", soft=(1, 32)),
        "tolerance_m": Limit(1e-5, 1.0, "Tolerance", "m", soft=(1e-5, 0.05)),
        "contact_height_m": Limit(1e-4, 1.0, "Contact height", "m"),
        "clearance_m": Limit(0.0, 1.0, "Clearance", "m"),
        "collision_tolerance_m": Limit(0.0, 0.1, "Collision tolerance", "m"),
        "box_radius_ratio": Limit(0.0, 1.0, "Limb box radius"),
        "max_step_ratio": Limit(0.0, 5.0, "Largest step", "leg lengths"),
        "rigid_length_ratio": Limit(0.0, 2.0, "Rigid bone length", "leg lengths"),
        "smoothing_s": Limit(0.0, 10.0, "Smoothing", "s"),
        "unit_m": Limit(1e-6, 1e6, "Metres per armature unit", "m"),
    },
    "CrowdParams": {  # procanim_addon/crowd/params.py
        "personal_radius_m": Limit(0.0, 5.0, "Personal radius", "m", soft=(0.0, 1.0)),
        "variation": Limit(0.0, 1.0, "Variation"),
        "seed": Limit(0, 2**31 - 1, "Seed", soft=(0, 1000)),
        "greet_distance_m": Limit(0.0, 10.0, "Greeting distance", "m", soft=(0.0, 4.0)),
        "time_step_s": Limit(0.02, 0.5, "Plan time step", "s"),
        "horizon_s": Limit(0.2, 20.0, "Time horizon", "s", soft=(0.5, 5.0)),
        "obstacle_horizon_s": Limit(0.1, 20.0, "Obstacle time horizon", "s", soft=(0.2, 5.0)),
        "neighbours": Limit(1, 100, "Neighbours", soft=(1, 30)),
        "margin_m": Limit(0.0, 1.0, "Plan margin", "m", soft=(0.0, 0.3)),
        "speed_up": Limit(1.0, 2.0, "Speed up"),
        "return_s": Limit(0.2, 20.0, "Return time", "s", soft=(0.5, 5.0)),
    },
    "FixFeetParams": {
        "height_m": Limit(1e-4, 1.0, "Contact height", "m", soft=(0.005, 0.2)),
        "speed_m_s": Limit(1e-3, 10.0, "Contact speed", "m/s", soft=(0.05, 2.0)),
        "hysteresis": Limit(1.0, 5.0, "Hysteresis"),
        "min_contact_s": Limit(0.0, 5.0, "Shortest contact", "s", soft=(0.0, 0.5)),
        "min_lift_s": Limit(0.0, 5.0, "Shortest lift", "s", soft=(0.0, 0.5)),
        "noise_factor": Limit(0.0, 100.0, "Noise factor", soft=(0.0, 10.0)),
        "blend_s": Limit(0.0, 2.0, "Blend", "s", soft=(0.0, 0.5)),
        "max_reach": Limit(0.8, 0.9999, "Largest leg extension"),
        "reach_slack_m": Limit(0.0, 0.1, "Reach slack", "m", soft=(0.0, 0.01)),
        "max_pelvis_drop_m": Limit(0.0, 1.0, "Largest pelvis drop", "m", soft=(0.0, 0.2)),
        "sole_m": Limit(-1.0, 1.0, "Sole height", "m", soft=(0.0, 0.1)),
        "unit_m": Limit(1e-6, 1e6, "Metres per armature unit", "m"),
    },
    "SourceMotionParams": {
        "frame_start": _frames(),
        "fps": FPS,
        "steps": Limit(1, 1000, "Steps", soft=(1, 40)),
    },
    "WalkParams": {
        "steps": Limit(1, 1000, "Steps", soft=(1, 40)),
        "step_length_m": Limit(0.0, 5.0, "Step length", "m"),
        "cadence_spm": Limit(20.0, 240.0, "Cadence", "steps/min"),
        "lift_m": Limit(0.0, 2.0, "Foot lift", "m"),
        "double_support": Limit(0.0, 0.89, "Double support"),
        "arm_swing_deg": Limit(0.0, 90.0, "Arm swing", "°"),
        "fps": FPS,
        "frame_start": _frames(),
    },
    "JumpParams": {
        "distance_m": Limit(0.0, 10.0, "Jump distance", "m"),
        "height_m": Limit(0.0, 5.0, "Jump height", "m"),
        "crouch_m": Limit(0.0, 2.0, "Crouch", "m"),
        "tuck_m": Limit(0.0, 2.0, "Tuck", "m"),
        "hold_s": Limit(0.0, 60.0, "Hold", "s"),
        "crouch_s": Limit(0.01, 60.0, "Crouch time", "s"),
        "land_s": Limit(0.01, 60.0, "Landing time", "s"),
        "fps": FPS,
        "frame_start": _frames(),
    },
    "TumbleParams": {
        "squat_s": Limit(0.01, 60.0, "Squat time", "s"),
        "roll_s": Limit(0.01, 60.0, "Roll time", "s"),
        "rise_s": Limit(0.01, 60.0, "Rise time", "s"),
        "hold_s": Limit(0.0, 60.0, "Hold", "s"),
        "squat_depth": Limit(0.2, 0.6, "Squat depth", "leg lengths"),
        "tuck_deg": Limit(0.0, 90.0, "Tuck", "°"),
        "fps": FPS,
        "frame_start": _frames(),
    },
    # every generator's bake (procanim_addon/bake_settings.py); hi is keys.MAX_TOLERANCE_M
    "BakeSettings": {
        "key_tolerance": Limit(0.0, 0.05, "Key tolerance", "m", soft=(0.0, 0.01)),
    },
}


def limit(params_class, field: str) -> Limit:
    """The limit of ``field`` of a parameter dataclass (by class name)."""
    return LIMITS[params_class.__name__][field]


def _limited_values(params):
    """``(limit, value, index)`` for every numeric value of ``params`` that has a documented limit."""
    table = LIMITS.get(type(params).__name__, {})
    for f in dataclasses.fields(params):
        if f.name in table:
            value = getattr(params, f.name)
            if isinstance(value, (tuple, list)):
                yield from ((table[f.name], v, k) for k, v in enumerate(value))
            else:
                yield table[f.name], value, None


def check_limits(params) -> None:
    """Refuse any numeric field of ``params`` outside its documented limit (InputError)."""
    for lim, value, index in _limited_values(params):
        lim.check(value, index)


def check_bake_size(frames: float, bones: int, what: str = "The bake") -> None:
    """Refuse, before anything is allocated, a bake over :data:`MAX_FRAMES` frames or
    :data:`MAX_FRAME_BONES` frame × bone samples (``frames`` may be an estimate)."""
    if not math.isfinite(frames) or frames > MAX_FRAMES:
        raise InputError(
            f"{what} would have {frames:,.0f} frames; ProcAnim bakes at most {MAX_FRAMES:,} frames at a time. "
            "Shorten it or lower the frame rate."
        )
    if frames * bones > MAX_FRAME_BONES:
        raise InputError(
            f"{what} would hold {frames:,.0f} frames × {bones} bones; ProcAnim bakes at most "
            f"{MAX_FRAME_BONES:,} frame × bone samples at a time. Shorten it."
        )
