"""Parameters of the path walk (Tsutsuguchi et al. 2000), validated once with messages a user understands."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..errors import InputError
from ..limits import check_limits
from ..loop import check_loop


@dataclass
class ForceCoefficients:
    """Reaction-force coefficients (Tsutsuguchi et al. 2000, eqs. 6–9) before the personality offsets δ are added.

    a_y: vertical, F_y = s_y·M·g·Σ a_yk sin kπτ; a_y2 is replaced by f_v of the step's mode.
    a_z: lateral (paper values), positive toward the inside of the stance foot.
    a_x: progression, RECON: F_x = s_x·M·g·Σ a_xk sin kπτ with a_x = (0, −A, 0), A ≈ 0.15–0.2
         (braking, then propulsion). The a_x1 term is also solved per footstep (see com.py) so the
         body can start, stop and change speed.
    f_v: a_y2 per vertical mode (paper): plane 0.1, up 0.0, down 0.25.
    """

    a_y: tuple = (1.3, 0.1, 0.4)
    a_z: tuple = (0.07, -0.03, -0.03)
    a_x: tuple = (0.0, -0.18, 0.0)  # RECON
    f_v: dict = field(default_factory=lambda: {"plane": 0.1, "up": 0.0, "down": 0.25})


@dataclass
class GaitNorms:
    """Measured gait the walk's pelvis height and foot roll are solved for on level ground (ProcAnim's,
    beyond the paper; docs/path_walk.md). Knee flexion in degrees (0 = straight leg) at parts of the
    gait cycle from heel strike (Perry and Burnfield 2010, Gait Analysis, ch. 4; Kadaba,
    Ramakrishnan and Wootten 1990; Winter 2009); the stance knee is piecewise linear through them:

    knee_contact_deg:   at initial contact (the landing leg at heel strike, 0)
    knee_loading_deg:   the peak of loading response, at ``loading_at`` (0.14 of the cycle)
    knee_midstance_deg: in mid-stance (0.3 of the cycle)
    knee_terminal_deg:  in terminal stance (0.4), the knee at its straightest
    knee_preswing_deg:  the trailing leg at the other foot's heel strike (0.5; RECON: its heel rises
                        as far as that needs — ``heel_off_deg`` applies on stairs)
    knee_toe_off_deg:   at toe off (RECON: the foot rolls over its toe tip as far as that needs, and
                        leaves the ground earlier when it cannot — ``toe_off_deg`` applies on stairs)
    com_travel:         the COM's vertical travel vs walking speed v, (a m, b m·s/m, v₀ m/s):
                        a + b (v − v₀) (Orendurff et al. 2004: 2.7 cm at 0.7 m/s, 4.8 cm at 1.6 m/s)
    com_at_heel_strike: where C is in the step at heel strike (fraction from the trailing foot);
                        0 = derived (RECON): the landing leg at ``knee_contact_deg`` with the pelvis
                        ``com_travel`` under its height at mid-stance; 0.5 = the paper (Figure 8)
    foot_flat_at:       the heel rocker ends (the foot flat) this part of T after heel strike (0.24:
                        12 % of the gait cycle, the end of loading response); 0 = when C passes over
                        the ankle (the paper, Figure 10 (b))
    """

    knee_contact_deg: float = 5.0
    knee_loading_deg: float = 17.5
    loading_at: float = 0.14
    knee_midstance_deg: float = 8.0
    knee_terminal_deg: float = 5.0
    knee_preswing_deg: float = 15.0
    knee_toe_off_deg: float = 37.5
    com_travel: tuple = (0.027, 0.0233, 0.7)
    com_at_heel_strike: float = 0.0
    foot_flat_at: float = 0.24


@dataclass
class PathWalkParams:
    """What the user sets. Lengths in metres, angles in degrees, times in seconds.

    frame_start, fps:   first frame of the clip and frames per second
    cadence_spm:        steps per minute ν (T = 60/ν); used when speed_mps is 0
    speed_mps:          walking speed v (m/s); when > 0, T = w/v per step instead of the cadence
    stride_m:           step length w (m, heel strike to the other heel strike); 0 = from the leg
                        length and the cadence: stride_per_leg × hip height at 100 steps/min,
                        proportional to the cadence (a constant walk ratio, step length / cadence:
                        Sekiya et al. 1997); with a speed, in proportion to √speed
    double_support:     T_ds / T (paper: 0.25)
    arm_swing:          scale of the arm swing (0 = arms hang, 1 = the amplitudes below)
    arm_swing_fwd_deg, arm_swing_back_deg: upper-arm swing amplitudes (paper: 30 forward, 9 back)
    armpit_deg:         armpit angle ρ (arm lifted away from the body)
    elbow_deg:          mean elbow bend β_c
    delta_x, delta_y, delta_z: personality offsets δ_k (k = 1, 2, 3) added to every coefficient
    root_motion:        'BONE' (the root bone, or the hips when the rig has no root) or 'OBJECT'
    corner_radius_m:    how much sharp corners of the path are rounded (Gaussian, m)
    stand_s:            standing time before the first and after the last step (s)
    heel_strike_deg:    toe-up angle of the foot at heel strike on level ground
    heel_off_deg, toe_off_deg: foot pitch at the other heel strike and at toe off
    clearance_m:        lowest allowed gap between the swinging sole and the ground (nosings too)
    tread_margin_m:     gap kept between a foot and a tread's edges on stairs
    max_step_height_m:  highest riser a single step may climb; 0 = 0.26 × hip height
    max_incline_deg:    steeper than this (averaged over a stride) is refused (a ladder)
    pelvis_rotation_deg, pelvis_list_deg: amplitudes of the pelvis' yaw and side drop
    knee_reach:         fraction of the full leg length the hip-ankle distance may use (< 1 keeps
                        a slight knee bend and no pops; 0.999: the knee straightens to about 5°)
    style_amplitude, style_weight, style_direction: the duck article's sliders (0–10; 5, 5, 0 is the
                        plain walk) carried to the human walk: stride, cadence, bounce, posture,
                        arm swing and weave (:mod:`.style`, presets in ``style.EMOTIONS``)
    norms:              measured gait's knee and vertical travel on level ground (:class:`GaitNorms`)
    loop:               'NONE' (walk the path), 'IN_PLACE' or 'ROOT_MOTION': a seamless loop of
                        ``loop_cycles`` gait cycles on a straight line instead (:mod:`.cycle`; the
                        path and ground are not used)
    loop_cycles:        gait cycles (two steps each) in a loop
    """

    frame_start: int = 1
    fps: float = 24.0
    cadence_spm: float = 100.0
    speed_mps: float = 0.0
    stride_m: float = 0.0
    stride_per_leg: float = 0.72
    double_support: float = 0.25
    arm_swing: float = 1.0
    arm_swing_fwd_deg: float = 30.0
    arm_swing_back_deg: float = 9.0
    armpit_deg: float = 8.0
    elbow_deg: float = 20.0
    delta_x: tuple = (0.0, 0.0, 0.0)
    delta_y: tuple = (0.0, 0.0, 0.0)
    delta_z: tuple = (0.0, 0.0, 0.0)
    forces: ForceCoefficients = field(default_factory=ForceCoefficients)
    root_motion: str = "BONE"
    corner_radius_m: float = 0.15
    stand_s: float = 0.4
    heel_strike_deg: float = 12.0
    heel_off_deg: float = 15.0
    toe_off_deg: float = 40.0
    clearance_m: float = 0.03
    tread_margin_m: float = 0.01
    max_step_height_m: float = 0.0
    max_incline_deg: float = 50.0
    pelvis_rotation_deg: float = 4.0
    pelvis_list_deg: float = 3.0
    knee_reach: float = 0.998
    style_amplitude: float = 5.0
    style_weight: float = 5.0
    style_direction: float = 0.0
    norms: GaitNorms = field(default_factory=GaitNorms)
    loop: str = "NONE"
    loop_cycles: int = 1

    def validate(self) -> PathWalkParams:
        """Raise :class:`InputError` naming the first bad value; return self."""
        check_limits(self)  # every field a number within its documented range (limits.py)
        def need(ok: bool, msg: str):
            if not ok:
                raise InputError(msg)

        for name in ("fps", "cadence_spm", "speed_mps", "stride_m", "double_support", "stand_s",
                     "corner_radius_m", "clearance_m", "knee_reach"):
            need(math.isfinite(float(getattr(self, name))), f"Path walk: {name} must be a number.")
        need(self.fps > 0, "Path walk: fps must be positive.")
        need(self.speed_mps > 0 or 20.0 <= self.cadence_spm <= 240.0,
             f"Path walk: cadence {self.cadence_spm:g} steps/min is outside 20–240 (normal walking is 100–120).")
        need(self.speed_mps == 0 or 0.05 <= self.speed_mps <= 3.0,
             f"Path walk: speed {self.speed_mps:g} m/s is outside 0.05–3 m/s (a walk, not a run).")
        need(self.stride_m == 0 or 0.1 <= self.stride_m <= 2.0,
             f"Path walk: stride {self.stride_m:g} m is outside 0.1–2 m.")
        need(0.05 <= self.double_support <= 0.45,
             f"Path walk: double support {self.double_support:g} of the step must be within 0.05–0.45 (paper: 0.25).")
        need(0.0 <= self.arm_swing_fwd_deg <= 90 and 0.0 <= self.arm_swing_back_deg <= 90,
             "Path walk: arm swing angles must be within 0–90 degrees.")
        need(0.0 <= self.arm_swing <= 2.0, "Path walk: arm swing must be within 0–2 (1 = 30° forward, 9° back).")
        need(-10 <= self.armpit_deg <= 80, "Path walk: the armpit angle must be within −10–80 degrees.")
        need(0 <= self.elbow_deg <= 120, "Path walk: the elbow angle must be within 0–120 degrees.")
        for name in ("delta_x", "delta_y", "delta_z"):
            d = getattr(self, name)
            need(len(d) == 3 and all(math.isfinite(float(v)) and abs(float(v)) <= 1.0 for v in d),
                 f"Path walk: {name} needs three personality offsets within ±1.")
        need(self.root_motion in ("BONE", "OBJECT"),
             f"Path walk: root motion must be 'BONE' or 'OBJECT', not {self.root_motion!r}.")
        need(0 <= self.corner_radius_m <= 5, "Path walk: the corner radius must be within 0–5 m.")
        need(0 <= self.stand_s <= 10, "Path walk: standing time must be within 0–10 s.")
        need(0 <= self.heel_strike_deg <= 40 and 0 <= self.heel_off_deg <= self.toe_off_deg <= 80,
             "Path walk: foot roll angles must satisfy 0 ≤ heel off ≤ toe off ≤ 80 and heel strike ≤ 40 degrees.")
        need(0 <= self.clearance_m <= 0.5, "Path walk: clearance must be within 0–0.5 m.")
        need(0.8 <= self.knee_reach < 1.0, "Path walk: knee reach must be within 0.8–1 (exclusive).")
        need(10 <= self.max_incline_deg <= 80, "Path walk: the steepest walkable incline must be 10–80 degrees.")
        need(0.2 <= self.stride_per_leg <= 1.5, "Path walk: stride per leg length must be within 0.2–1.5.")
        check_loop(self.loop, self.loop_cycles, "Path walk")
        return self
