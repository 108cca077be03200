"""Parameters of the handshake generator, validated once (lengths m, times in frames)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..ik.solve import SOLVERS
from ..limits import check_limits


@dataclass
class HandshakeParams:
    """Everything :func:`~procanim_addon.handshake.generate.generate_handshake` needs besides the rigs.

    Controllers and personality
      solver_initiator, solver_partner: one of 'JACOBIAN_TRANSPOSE', 'CCD', 'FABRIK', 'DLS', 'FUZZY'
      dominance_initiator, dominance_partner: 0..1; the grip moves toward the less dominant one
      accept: the partner accepts the invitation (False: refusal, the initiator retreats)
      fuzzy_static_targets: FUZZY characters aim at each phase's end point instead of following
                      the straight path (Deglorie et al. 2015, §6.2: fuzzy control works without motion paths; the shake
                      keeps the shared path so both hands stay synchronised)
    Timing (frames at ``fps``)
      neutral_frames: both stand in the rest pose before the invitation
      dummy_frames:   D, the initiator's invitation (hand a short way forward)
      response_frames: from the invitation to the arbiter's answer (the partner's reaction time)
      approach_frames: A, hand from where it is to the point of contact
      shake_frames:   the primary shake (one up-and-down cycle along the shake vector)
      arrive_tolerance_m, max_wait_frames: A → S waits until both grip points are this close to C
                      (a lagging fuzzy controller) or this many frames have passed
      secondary_shakes, secondary_frames, secondary_decay: smaller shakes after the primary one,
                      each ``secondary_decay`` times the amplitude of the one before
      retreat_frames: R, back to the rest pose;  hold_frames: rest pose held at the end
    Model (Deglorie et al. 2015, §4; RECON marks values the paper does not give)
      shake_ratio: shake distance / elbow distance (paper: 0.35)
      dominance_shift: how far (fraction of the elbow line) one unit of dominance difference moves
                       the point of contact (RECON)
      contact_drop_forearms: the point of contact sits this many forearm lengths below the mean
                       elbow height of the rest poses (RECON)
      dummy_fraction: how far toward the point of contact the invitation goes (RECON)
      grip_fraction:  the anchor point, as a fraction of the hand bone from its head (RECON: the
                      hand bone stands for the third metacarpal)
      palm_thickness_ratio: palm thickness / hand bone length; the grip point is offset by half of
                      it along the palm normal (RECON)
      reach_comfort: the wrist target may be at most this fraction of upper arm + forearm from the
                      shoulder before the character steps (RECON)
      max_step_legs: longest step toward the partner, in leg lengths; beyond it the characters are
                      too far apart (RECON)
      max_lean_deg:   the most the spine may bend forward to reach a smaller partner (RECON)
      max_facing_deg: each character must face the other within this angle (top view)
    Output
      frame_start, fps
    """

    frame_start: int = 1
    fps: float = 24.0
    solver_initiator: str = "DLS"
    solver_partner: str = "DLS"
    dominance_initiator: float = 0.5
    dominance_partner: float = 0.5
    accept: bool = True
    fuzzy_static_targets: bool = False
    neutral_frames: int = 6
    dummy_frames: int = 14
    response_frames: int = 8
    approach_frames: int = 20
    shake_frames: int = 24
    secondary_shakes: int = 1
    secondary_frames: int = 14
    secondary_decay: float = 0.5
    retreat_frames: int = 20
    hold_frames: int = 6
    shake_ratio: float = 0.35
    dominance_shift: float = 0.3
    contact_drop_forearms: float = 0.6
    dummy_fraction: float = 0.4
    grip_fraction: float = 0.5
    palm_thickness_ratio: float = 0.3
    reach_comfort: float = 0.85
    max_step_legs: float = 0.6
    max_lean_deg: float = 60.0
    max_facing_deg: float = 90.0
    ik_tolerance_m: float = 1e-5
    arrive_tolerance_m: float = 0.002
    max_wait_frames: int = 24

    def validate(self) -> HandshakeParams:
        check_limits(self)  # every field a number within its documented range (limits.py)
        for name in ("solver_initiator", "solver_partner"):
            v = str(getattr(self, name)).upper()
            if v not in SOLVERS:
                raise InputError(f"{name.replace('_', ' ').capitalize()} '{getattr(self, name)}' is not one of "
                                 f"{', '.join(SOLVERS)}.")
            setattr(self, name, v)
        for name in ("dominance_initiator", "dominance_partner"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise InputError(f"{name.replace('_', ' ').capitalize()} must be between 0 and 1 "
                                 f"(got {getattr(self, name)}).")
        if not self.fps > 0:
            raise InputError(f"Frames per second must be positive (got {self.fps}).")
        for name in ("dummy_frames", "approach_frames", "shake_frames", "retreat_frames"):
            if int(getattr(self, name)) < 2:
                label = name.replace("_", " ").capitalize()
                raise InputError(f"{label} must be at least 2 (got {getattr(self, name)}).")
        if not self.arrive_tolerance_m > 0:
            raise InputError("Arrival tolerance must be positive.")
        for name in ("neutral_frames", "hold_frames", "secondary_shakes", "response_frames", "max_wait_frames"):
            if int(getattr(self, name)) < 0:
                raise InputError(f"{name.replace('_', ' ').capitalize()} cannot be negative.")
        if self.secondary_shakes and int(self.secondary_frames) < 2:
            raise InputError("Secondary shake frames must be at least 2.")
        checks = {
            "shake_ratio": (0.0, 1.0), "secondary_decay": (0.0, 1.0), "dominance_shift": (0.0, 0.5),
            "dummy_fraction": (0.0, 0.9), "grip_fraction": (0.0, 1.0), "palm_thickness_ratio": (0.0, 1.0),
            "reach_comfort": (0.5, 1.0), "max_step_legs": (0.0, 2.0), "max_lean_deg": (0.0, 80.0),
            "max_facing_deg": (0.0, 180.0),
        }
        for name, (lo, hi) in checks.items():
            v = float(getattr(self, name))
            if not lo <= v <= hi:
                raise InputError(f"{name.replace('_', ' ').capitalize()} must be between {lo} and {hi} (got {v}).")
        if not self.ik_tolerance_m > 0:
            raise InputError("IK tolerance must be positive.")
        return self
