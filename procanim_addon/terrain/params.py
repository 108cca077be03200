"""The terrain adaptation's parameters (:class:`AdaptParams`), shared by the adaptation and its
final fix."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import InputError
from ..limits import check_limits


@dataclass
class AdaptParams:
    """Parameters of the adaptation (docs/terrain.md explains the defaults).

    descriptors_per_joint: descriptor points per joint (the paper: at least 10)
    radius0_m, spread_m:   descriptor spiral radius ρ = sqrt(radius0_m² + spread_m·h) (RECON)
    cutoff_ratio:          weights vanish beyond this × the nearest descriptor distance (RECON)
    damping:               d of Eq. 3 (part of the previous update carried over). 0 by default:
                           with lengths restored inside the loop, d > 0 makes the iteration cycle
    k0, k_decay, k_min:    k of Eq. 3: 9 at first (paper), then × k_decay per iteration (RECON)
    iteration_tolerance_m: the per-frame solve stops when no joint moves more than this
    max_iterations:        per-frame cap
    key_interval:          frames between the first key frames of the multi-resolution solve
    tolerance_m:           refine the key frames until the spline is this close to the solve
    contact_height_m:      a foot/hand point this close to the reference is in contact
    hands:                 also keep hands that touch the reference on the terrain (tumbling)
    clearance_m:           lifted limbs keep their source gap up to this much above the terrain
    collision_tolerance_m: boxes are shrunk by this much before testing (touching ≠ colliding)
    box_radius_ratio:      limb box thickness as a fraction of the bone length
    rigid_length_ratio:    RECON: joints whose bone to their parent joint is shorter than this ×
                           leg length keep their source offset from it in the solve (neck, head,
                           spine segments, feet, toes, hands: too short for the descriptors to
                           orient, see :mod:`.solve`); 0 lets the descriptors move every joint
    max_step_ratio:        RECON: largest rise of the terrain under contacts the motion can take,
                           as a fraction of leg length; more raises InputError (see refuse_infeasible)
    refuse_infeasible:     raise InputError when the terrain exceeds what the motion can do;
                           False adapts anyway and reports the collisions (the bench does this)
    smoothing_s:           lifts and hip drops fade in and out over this time (s)
    unit_m:                metres per armature-space unit (the armature object's scale when its
                           space is not metres, e.g. a BVH imported at another scale); every *_m
                           value above is in metres whatever the rig's units
    """

    descriptors_per_joint: int = 12
    radius0_m: float = 0.05
    spread_m: float = 0.3
    cutoff_ratio: float = 4.0
    damping: float = 0.0
    k0: float = 9.0
    k_decay: float = 0.8
    k_min: float = 0.5
    iteration_tolerance_m: float = 1e-4
    max_iterations: int = 200
    key_interval: int = 8
    tolerance_m: float = 0.005
    contact_height_m: float = 0.03
    hands: bool = True
    clearance_m: float = 0.01
    collision_tolerance_m: float = 0.002
    box_radius_ratio: float = 0.12
    rigid_length_ratio: float = 0.25
    max_step_ratio: float = 0.75
    refuse_infeasible: bool = True
    smoothing_s: float = 0.25
    unit_m: float = 1.0

    def validate(self) -> None:
        check_limits(self)  # every field a number within its documented range (limits.py)
        if self.descriptors_per_joint < 10:
            raise InputError("Use at least 10 descriptor points per joint (the method needs them for continuity).")
        if not 0.0 <= self.damping < 1.0:
            raise InputError("Damping must be between 0 and 1 (exclusive).")
        if self.k0 <= 0 or self.k_min <= 0 or not 0 < self.k_decay <= 1:
            raise InputError("k must be positive and its decay between 0 and 1.")
        if self.key_interval < 1 or self.max_iterations < 1:
            raise InputError("Key interval and iteration count must be at least 1.")
        if min(self.tolerance_m, self.iteration_tolerance_m) <= 0:
            raise InputError("Tolerances must be positive.")
        if min(self.radius0_m, self.spread_m, self.cutoff_ratio - 1.0, self.contact_height_m) <= 0:
            raise InputError("Descriptor radius, spread and contact height must be positive; cutoff ratio above 1.")
        if min(self.clearance_m, self.collision_tolerance_m, self.smoothing_s, self.max_step_ratio) < 0:
            raise InputError("Clearance, collision tolerance, smoothing and step ratio cannot be negative.")
        if not self.unit_m > 0:
            raise InputError("The armature's unit (metres per unit) must be positive.")
